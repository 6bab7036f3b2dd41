package workspace

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/internal/crashfs"
)

// The crash matrix runs a workload of turns on a fault-injecting file
// system, crashes it at every mutating operation (every write, fsync,
// rename, truncate, directory creation and directory sync), and checks each
// possible disk image after the crash.

const canary = "sk-canary-9f8e7d6c5b4a"

// memLocks is an in-process stand-in for flock on the in-memory FS.
type memLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

func (l *memLocks) lock(path string) (func() error, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[string]bool{}
	}
	if l.held[path] {
		return nil, ErrLocked
	}
	l.held[path] = true
	return func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.held, path)
		return nil
	}, nil
}

var crashPaths = Paths{ProjectRoot: "/project", StateRoot: "/state", WorkspaceID: "ws"}

func crashStore(fsys *crashfs.FS, dur Durability) (*Store, error) {
	m := &Masker{}
	m.Add(canary)
	var mu sync.Mutex
	clock := t0
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Millisecond)
		return clock
	}
	return newStore(crashPaths, &StoreOptions{Durability: dur, Masker: m, Now: now, RuntimeEventsMaxBytes: 2048}, fsys, (&memLocks{}).lock)
}

// workloadTurns are the turns of the workload; the last one never commits.
var workloadTurns = []struct {
	steps [][]Event
	ext   any // staged extension state, nil for none
}{
	{steps: [][]Event{{Append(msg("m1", "hello")), Append(msg("m2", "hi"))}}, ext: map[string]int{"n": 1}},
	{steps: [][]Event{{Append(msg("m3", "fix the bug"))}, {Append(msg("m4", "done"))}}},
	{steps: [][]Event{{Replace("m1", msg("m1b", "hello, edited")), Remove("m2")}}, ext: map[string]int{"n": 2}},
	{steps: [][]Event{{Append(msg("m5", "again"))}}},
	{steps: [][]Event{{Truncate(), Append(msg("s1", "summary"))}, {Append(msg("m6", "after summary"))}}, ext: map[string]int{"n": 3}},
	{steps: [][]Event{{Append(msg("m7", "x")), Append(msg("m8", "y"))}, {Append(msg("m9", "z"))}}},
}

// ack is what the workload saw acknowledged: turns committed, and events of
// the open turn, at the store's durability level.
type ack struct {
	commits int // turns whose Commit returned nil
	events  int // events of turn[commits] acknowledged
	deleted bool
}

// runWorkload runs the workload until it ends or the FS crashes.
func runWorkload(fsys *crashfs.FS, dur Durability) (ack, error) {
	var a ack
	s, err := crashStore(fsys, dur)
	if err != nil {
		return a, err
	}
	// Another instance, created and deleted, so crashes also hit Delete.
	other, err := s.Open(ctx, "other", nil)
	if err != nil {
		return a, err
	}
	if err := runOne(other, Append(msg("o1", "other"))); err != nil {
		return a, err
	}
	other.Close()
	if err := s.Delete(ctx, "other"); err != nil {
		return a, err
	}
	a.deleted = dur.syncTurn()

	in, err := s.Open(ctx, "k", &OpenOptions{AgentName: "coder"})
	if err != nil {
		return a, err
	}
	for i, tw := range workloadTurns {
		turn, err := in.BeginTurn(ctx)
		if err != nil {
			return a, err
		}
		acked := 0
		// Staged before the steps, the state is logged at the first
		// EndStep and again at the commit: crashes hit both writes.
		if tw.ext != nil {
			if err := turn.SetExtension("ext", tw.ext); err != nil {
				return a, err
			}
		}
		for _, step := range tw.steps {
			if err := in.Emit(ctx, RuntimeEvent{Type: "step.started", TurnID: turn.ID(), Data: map[string]any{"auth": "Bearer " + canary}}); err != nil {
				return a, err
			}
			if err := turn.Append(ctx, step...); err != nil {
				return a, err
			}
			if dur.syncEvent() {
				acked += len(step)
				a.events = acked
			}
			if err := turn.EndStep(ctx); err != nil {
				return a, err
			}
			if dur.syncStep() {
				acked += len(step) - map[bool]int{true: len(step)}[dur.syncEvent()]
				a.events = acked
			}
		}
		if i == len(workloadTurns)-1 {
			break // the last turn stays open
		}
		if err := turn.Commit(ctx); err != nil {
			return a, err
		}
		if dur.syncTurn() {
			a.commits, a.events = i+1, 0
		}
	}
	return a, nil
}

func runOne(in *Instance, evs ...Event) error {
	turn, err := in.BeginTurn(ctx)
	if err != nil {
		return err
	}
	if err := turn.Append(ctx, evs...); err != nil {
		return err
	}
	return turn.Commit(ctx)
}

// modelApply is the test's own, independent model of the message events.
func modelApply(msgs []Message, e Event) []Message {
	switch e.Type {
	case EventAppend:
		return append(msgs, *e.Message)
	case EventReplace:
		for i := range msgs {
			if msgs[i].ID == e.TargetID {
				out := append([]Message(nil), msgs...)
				out[i] = *e.Message
				return out
			}
		}
	case EventRemove:
		var out []Message
		for _, m := range msgs {
			if m.ID != e.TargetID {
				out = append(out, m)
			}
		}
		return out
	case EventTruncate:
		return nil
	}
	panic("model: bad event")
}

func turnEvents(i int) []Event {
	var evs []Event
	for _, step := range workloadTurns[i].steps {
		evs = append(evs, step...)
	}
	return evs
}

// committedAfter returns the messages and extension state after the first c
// turns committed.
func committedAfter(c int) ([]Message, any) {
	var msgs []Message
	var ext any
	for i := range c {
		for _, e := range turnEvents(i) {
			msgs = modelApply(msgs, e)
		}
		if workloadTurns[i].ext != nil {
			ext = workloadTurns[i].ext
		}
	}
	return msgs, ext
}

// recovered is the state an Open shows.
type recovered struct {
	Msgs    []string
	Pending []string
	Ext     string
	Other   bool
}

func summarize(msgs []Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.ID+"="+string(m.Data))
	}
	return out
}

func summarizeEvents(evs []Event) []string {
	out := []string{}
	for _, e := range evs {
		s := string(e.Type) + ":" + e.TargetID
		if e.Message != nil {
			s += ":" + e.Message.ID + "=" + string(e.Message.Data)
		}
		out = append(out, s)
	}
	return out
}

func recoverState(fsys *crashfs.FS, dur Durability) (recovered, *Instance, *Store, error) {
	var r recovered
	s, err := crashStore(fsys, dur)
	if err != nil {
		return r, nil, nil, fmt.Errorf("NewStore: %w", err)
	}
	list, err := s.List(ctx)
	if err != nil {
		return r, nil, nil, err
	}
	for _, info := range list {
		if info.Key == "other" {
			r.Other = true
		}
	}
	in, err := s.Open(ctx, "k", nil)
	if err != nil {
		return r, nil, nil, fmt.Errorf("Open: %w", err)
	}
	r.Msgs = summarize(in.Messages())
	if p := in.PendingTurn(); p != nil {
		r.Pending = summarizeEvents(p.Events)
	}
	var ext json.RawMessage
	if ok, err := in.Extension("ext", &ext); ok && err == nil {
		r.Ext = string(ext)
	}
	return r, in, s, nil
}

// checkImage checks every invariant on one crash image.
func checkImage(t *testing.T, img crashfs.Image, dur Durability, a ack) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("image %s: "+format, append([]any{img.Name}, args...)...)
	}

	// A canary secret never appears in plain text, base64 or URL-encoded.
	img.FS().Walk(func(path string, data []byte) {
		for _, form := range []string{canary, base64.StdEncoding.EncodeToString([]byte(canary)), url.QueryEscape(canary)} {
			if strings.Contains(string(data), form) {
				fail("%s holds the canary secret (%q)", path, form)
			}
		}
	})

	fsys := img.FS()
	got, in, _, err := recoverState(fsys, dur)
	if err != nil {
		fail("recovery failed: %v", err)
		return
	}
	// The committed messages are exactly the fold of some prefix of the
	// turns, at or after the acknowledged one: nothing lost, nothing
	// duplicated. The pending turn is a prefix of the next turn's events.
	c := -1
	for i := len(workloadTurns) - 1; i >= 0; i-- {
		if msgs, _ := committedAfter(i); cmp.Equal(summarize(msgs), got.Msgs) {
			c = i
			break
		}
	}
	if c < 0 {
		fail("messages %v are not the fold of any prefix of the turns", got.Msgs)
		return
	}
	if c < a.commits {
		fail("%d turns committed, but %d were acknowledged", c, a.commits)
	}
	next := summarizeEvents(turnEvents(c))
	if len(got.Pending) > len(next) || (len(got.Pending) > 0 && !cmp.Equal(got.Pending, next[:len(got.Pending)])) {
		fail("pending events %v are not a prefix of turn %d's %v", got.Pending, c, next)
	}
	if c == a.commits && len(got.Pending) < a.events {
		fail("pending turn has %d events, but %d were acknowledged", len(got.Pending), a.events)
	}
	if _, ext := committedAfter(c); ext != nil {
		want, _ := json.Marshal(ext)
		if got.Ext != string(want) {
			fail("extension state %s, want %s (consistent with %d committed turns)", got.Ext, want, c)
		}
	} else if got.Ext != "" {
		fail("extension state %s, want none", got.Ext)
	}
	if a.deleted && got.Other {
		fail("the deleted instance is back")
	}
	in.Close()

	// Recovering twice equals recovering once.
	again, in2, _, err := recoverState(fsys, dur)
	if err != nil {
		fail("second recovery failed: %v", err)
		return
	}
	if diff := cmp.Diff(got, again); diff != "" {
		fail("second recovery differs (-first +second):\n%s", diff)
	}
	if r := in2.Recovery(); len(r.Repairs) > 0 || len(r.Corrupt) > 0 || r.FinishedCommit != "" {
		fail("second recovery repaired again: %+v", r)
	}

	// Writes after recovery survive a second crash.
	if in2.PendingTurn() != nil {
		if err := in2.DiscardPendingTurn(ctx); err != nil {
			fail("discard: %v", err)
			return
		}
	}
	if err := runOne(in2, Append(msg("post", "after recovery"))); err != nil {
		fail("turn after recovery: %v", err)
		return
	}
	fsys.CrashNow()
	for _, img2 := range fsys.Images() {
		if img2.Name != "drop/dropnames" && img2.Name != "zero/keepnames" {
			continue
		}
		after, in3, _, err := recoverState(img2.FS(), dur)
		if err != nil {
			fail("recovery after second crash (%s): %v", img2.Name, err)
			continue
		}
		in3.Close()
		if dur.syncTurn() && !cmp.Equal(after.Msgs, append(append([]string{}, got.Msgs...), "post="+string(msg("post", "after recovery").Data))) {
			fail("after a second crash (%s), messages %v lack the turn committed after recovery", img2.Name, after.Msgs)
		}
	}

	// Deleting the runtime event logs changes nothing.
	bare := img.FS()
	bare.Walk(func(path string, _ []byte) {
		if strings.HasPrefix(filepath.Base(path), "runtime-events") {
			bare.Remove(path)
		}
	})
	without, in4, _, err := recoverState(bare, dur)
	if err != nil {
		fail("recovery without runtime events: %v", err)
		return
	}
	in4.Close()
	if diff := cmp.Diff(got, without); diff != "" {
		fail("deleting runtime-events changed the state (-with +without):\n%s", diff)
	}
}

func TestCrashMatrix(t *testing.T) {
	for _, dur := range []Durability{DurabilityStep, DurabilityTurn, DurabilityEvent, DurabilityNone} {
		t.Run(dur.String(), func(t *testing.T) {
			clean := crashfs.New()
			full, err := runWorkload(clean, dur)
			if err != nil {
				t.Fatalf("workload without a crash: %v", err)
			}
			if dur.syncTurn() && full.commits != len(workloadTurns)-1 {
				t.Fatalf("workload acknowledged %d commits", full.commits)
			}
			ops := clean.Ops()
			t.Logf("%d crash points × 8 images", ops+1)
			for n := 0; n <= ops; n++ {
				fsys := crashfs.New()
				if n < ops {
					fsys.CrashAt(n)
				}
				a, err := runWorkload(fsys, dur)
				if n == ops {
					fsys.CrashNow() // power loss after the workload
				} else if !errors.Is(err, crashfs.ErrCrashed) {
					t.Fatalf("crash at op %d: workload error %v, want ErrCrashed", n, err)
				}
				imgs := fsys.Images()
				if len(imgs) != 8 {
					t.Fatalf("crash at op %d: %d images", n, len(imgs))
				}
				for _, img := range imgs {
					checkImage(t, img, dur, a)
				}
				if t.Failed() {
					t.Fatalf("first failure at crash point %d of %d", n, ops)
				}
			}
		})
	}
}

// TestBrokenAfterFailedWrite checks that once a write to the logs fails, the
// instance refuses further writes (no append may follow an unrepaired
// tail) until it is reopened.
func TestBrokenAfterFailedWrite(t *testing.T) {
	fsys := crashfs.New()
	s, err := crashStore(fsys, DurabilityStep)
	if err != nil {
		t.Fatal(err)
	}
	in, err := s.Open(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := in.BeginTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fsys.CrashAt(fsys.Ops()) // the next write fails
	if err := turn.Append(ctx, Append(msg("a", ""))); !errors.Is(err, crashfs.ErrCrashed) {
		t.Fatalf("Append = %v, want the write's error", err)
	}
	for name, err := range map[string]error{
		"Append": turn.Append(ctx, Append(msg("b", ""))),
		"Commit": turn.Commit(ctx),
	} {
		if !errors.Is(err, ErrBroken) || !errors.Is(err, crashfs.ErrCrashed) {
			t.Errorf("%s after a failed write = %v, want ErrBroken wrapping the cause", name, err)
		}
	}
	if _, err := in.BeginTurn(ctx); !errors.Is(err, ErrBroken) {
		t.Errorf("BeginTurn after a failed write = %v, want ErrBroken", err)
	}
}
