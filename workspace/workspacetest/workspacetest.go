// Package workspacetest is a conformance suite for instance stores: the
// contract of [workspace.Store] (locked instances, turns folded at commit,
// pending turns after a crash, extension state committed with the turn)
// written against small interfaces, so another implementation can run it.
//
// A test of a store runs [Run] with a [Harness]:
//
//	func TestConformance(t *testing.T) {
//		workspacetest.Run(t, myHarness{})
//	}
//
// [FromStore] adapts a *workspace.Store; workspace's own tests run the suite
// that way at every durability level.
package workspacetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/workspace"
)

// Harness makes the stores under test.
type Harness interface {
	// NewStore returns a store with no instances.
	NewStore(t *testing.T) Store
	// Restart returns a new store on the same state as s, as a new process
	// would see it. Instances still open on s stay open (and locked).
	Restart(t *testing.T, s Store) Store
}

// Store is the contract of [workspace.Store].
type Store interface {
	// Open opens (creating when missing) and locks an instance. A second
	// Open of an open instance fails with workspace.ErrLocked.
	Open(ctx context.Context, key string) (Instance, error)
	// List returns the keys of the instances, sorted.
	List(ctx context.Context) ([]string, error)
	// Delete removes an instance; workspace.ErrLocked while it is open,
	// fs.ErrNotExist when there is none.
	Delete(ctx context.Context, key string) error
}

// Instance is the contract of [workspace.Instance].
type Instance interface {
	Messages() []workspace.Message
	// Pending returns the events of the turn an earlier run left
	// uncommitted, or nil.
	Pending() []workspace.Event
	BeginTurn(ctx context.Context) (Turn, error)
	ResumeTurn(ctx context.Context) (Turn, error)
	DiscardPendingTurn(ctx context.Context) error
	Extension(name string, v any) (bool, error)
	// Close releases the instance; an open turn becomes pending.
	Close() error
}

// Turn is the contract of [workspace.Turn].
type Turn interface {
	Append(ctx context.Context, evs ...workspace.Event) error
	EndStep(ctx context.Context) error
	SetExtension(name string, v any) error
	Messages() []workspace.Message
	Commit(ctx context.Context) error
	Discard(ctx context.Context) error
}

// FromStore adapts a *workspace.Store to the suite's Store.
func FromStore(s *workspace.Store) Store { return store{s} }

type store struct{ s *workspace.Store }

func (s store) Open(ctx context.Context, key string) (Instance, error) {
	in, err := s.s.Open(ctx, key, nil)
	if err != nil {
		return nil, err
	}
	return instance{in}, nil
}

func (s store) List(ctx context.Context) ([]string, error) {
	infos, err := s.s.List(ctx)
	if err != nil {
		return nil, err
	}
	keys := []string{}
	for _, i := range infos {
		keys = append(keys, i.Key)
	}
	return keys, nil
}

func (s store) Delete(ctx context.Context, key string) error { return s.s.Delete(ctx, key) }

type instance struct{ *workspace.Instance }

func (in instance) Pending() []workspace.Event {
	if p := in.PendingTurn(); p != nil {
		return p.Events
	}
	return nil
}

func (in instance) BeginTurn(ctx context.Context) (Turn, error) {
	t, err := in.Instance.BeginTurn(ctx)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (in instance) ResumeTurn(ctx context.Context) (Turn, error) {
	t, err := in.Instance.ResumeTurn(ctx)
	if err != nil {
		return nil, err
	}
	return t, nil
}

var bg = context.Background()

// Run runs the conformance suite.
func Run(t *testing.T, h Harness) {
	t.Run("TurnsSurviveRestart", func(t *testing.T) { testTurnsSurviveRestart(t, h) })
	t.Run("Events", func(t *testing.T) { testEvents(t, h) })
	t.Run("InvalidEventsChangeNothing", func(t *testing.T) { testInvalidEvents(t, h) })
	t.Run("PendingTurn", func(t *testing.T) { testPendingTurn(t, h) })
	t.Run("Lock", func(t *testing.T) { testLock(t, h) })
	t.Run("ListAndDelete", func(t *testing.T) { testListAndDelete(t, h) })
	t.Run("HostileKeys", func(t *testing.T) { testHostileKeys(t, h) })
	t.Run("ExtensionState", func(t *testing.T) { testExtensionState(t, h) })
	t.Run("ConcurrentAppends", func(t *testing.T) { testConcurrentAppends(t, h) })
}

// Msg returns a user message with the given id and text.
func Msg(id, text string) workspace.Message {
	data, _ := json.Marshal(map[string]string{"role": "user", "content": text})
	return workspace.Message{ID: id, Data: data, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Source: workspace.Source{Type: "user"}}
}

func ids(msgs []workspace.Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.ID)
	}
	return out
}

func open(t *testing.T, s Store, key string) Instance {
	t.Helper()
	in, err := s.Open(bg, key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

func commitTurn(t *testing.T, in Instance, evs ...workspace.Event) {
	t.Helper()
	turn, err := in.BeginTurn(bg)
	if err != nil {
		t.Fatalf("BeginTurn: %v", err)
	}
	if err := turn.Append(bg, evs...); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := turn.EndStep(bg); err != nil {
		t.Fatalf("EndStep: %v", err)
	}
	if err := turn.Commit(bg); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// restart closes in and opens its key on a restarted store.
func restart(t *testing.T, h Harness, s Store, in Instance, key string) (Store, Instance) {
	t.Helper()
	if err := in.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = h.Restart(t, s)
	return s, open(t, s, key)
}

func testTurnsSurviveRestart(t *testing.T, h Harness) {
	s := h.NewStore(t)
	in := open(t, s, "k")
	commitTurn(t, in, workspace.Append(Msg("m1", "hello")), workspace.Append(Msg("m2", "hi")))
	commitTurn(t, in, workspace.Append(Msg("m3", "bye")))
	want := in.Messages()
	_, in = restart(t, h, s, in, "k")
	if diff := cmp.Diff(want, in.Messages()); diff != "" {
		t.Errorf("messages after restart (-want +got):\n%s", diff)
	}
	if p := in.Pending(); p != nil {
		t.Errorf("clean close left a pending turn: %v", p)
	}
}

func testEvents(t *testing.T, h Harness) {
	s := h.NewStore(t)
	in := open(t, s, "k")
	commitTurn(t, in, workspace.Append(Msg("a", "")), workspace.Append(Msg("b", "")), workspace.Append(Msg("c", "")))
	steps := []struct {
		ev   workspace.Event
		want []string
	}{
		{workspace.Replace("b", Msg("b2", "edited")), []string{"a", "b2", "c"}},
		{workspace.Remove("a"), []string{"b2", "c"}},
		{workspace.Append(Msg("d", "")), []string{"b2", "c", "d"}},
		{workspace.Truncate(), []string{}},
		{workspace.Append(Msg("summary", "")), []string{"summary"}},
	}
	turn, err := in.BeginTurn(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if err := turn.Append(bg, st.ev); err != nil {
			t.Fatalf("%s: %v", st.ev.Type, err)
		}
		if diff := cmp.Diff(st.want, ids(turn.Messages())); diff != "" {
			t.Errorf("after %s (-want +got):\n%s", st.ev.Type, diff)
		}
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, ids(in.Messages())); diff != "" {
		t.Errorf("committed messages changed before Commit (-want +got):\n%s", diff)
	}
	if err := turn.Commit(bg); err != nil {
		t.Fatal(err)
	}
	_, in = restart(t, h, s, in, "k")
	if diff := cmp.Diff([]string{"summary"}, ids(in.Messages())); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
}

func testInvalidEvents(t *testing.T, h Harness) {
	s := h.NewStore(t)
	in := open(t, s, "k")
	commitTurn(t, in, workspace.Append(Msg("a", "")))
	bad := [][]workspace.Event{
		{workspace.Append(Msg("a", ""))},
		{workspace.Append(Msg("x", "")), workspace.Append(Msg("x", ""))},
		{workspace.Replace("missing", Msg("y", ""))},
		{workspace.Remove("missing")},
		{workspace.Append(Msg("ok", "")), workspace.Remove("missing")},
		{workspace.Append(workspace.Message{})},
		{{Type: "bogus"}},
	}
	turn, err := in.BeginTurn(bg)
	if err != nil {
		t.Fatal(err)
	}
	for _, evs := range bad {
		if err := turn.Append(bg, evs...); !errors.Is(err, workspace.ErrInvalidEvent) {
			t.Errorf("Append(%v) = %v, want ErrInvalidEvent", evs, err)
		}
	}
	if diff := cmp.Diff([]string{"a"}, ids(turn.Messages())); diff != "" {
		t.Errorf("rejected events changed the turn (-want +got):\n%s", diff)
	}
	if err := turn.Commit(bg); err != nil {
		t.Fatal(err)
	}
	_, in = restart(t, h, s, in, "k")
	if diff := cmp.Diff([]string{"a"}, ids(in.Messages())); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
}

func testPendingTurn(t *testing.T, h Harness) {
	s := h.NewStore(t)
	in := open(t, s, "k")
	commitTurn(t, in, workspace.Append(Msg("a", "")))
	turn, err := in.BeginTurn(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := turn.Append(bg, workspace.Append(Msg("b", "")), workspace.Remove("a")); err != nil {
		t.Fatal(err)
	}
	s, in = restart(t, h, s, in, "k") // the turn never committed
	if diff := cmp.Diff([]string{"a"}, ids(in.Messages())); diff != "" {
		t.Errorf("an uncommitted turn was applied (-want +got):\n%s", diff)
	}
	if got := len(in.Pending()); got != 2 {
		t.Fatalf("pending events = %d, want 2", got)
	}
	if _, err := in.BeginTurn(bg); !errors.Is(err, workspace.ErrPendingTurn) {
		t.Errorf("BeginTurn with a pending turn = %v, want ErrPendingTurn", err)
	}
	turn, err = in.ResumeTurn(bg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b"}, ids(turn.Messages())); diff != "" {
		t.Errorf("resumed turn (-want +got):\n%s", diff)
	}
	if err := turn.Append(bg, workspace.Append(Msg("c", ""))); err != nil {
		t.Fatal(err)
	}
	if err := turn.Commit(bg); err != nil {
		t.Fatal(err)
	}
	s, in = restart(t, h, s, in, "k")
	if diff := cmp.Diff([]string{"b", "c"}, ids(in.Messages())); diff != "" {
		t.Errorf("after resume and commit (-want +got):\n%s", diff)
	}

	// And discarding.
	turn, _ = in.BeginTurn(bg)
	turn.Append(bg, workspace.Append(Msg("d", "")))
	s, in = restart(t, h, s, in, "k")
	if err := in.DiscardPendingTurn(bg); err != nil {
		t.Fatal(err)
	}
	commitTurn(t, in, workspace.Append(Msg("e", "")))
	_, in = restart(t, h, s, in, "k")
	if diff := cmp.Diff([]string{"b", "c", "e"}, ids(in.Messages())); diff != "" {
		t.Errorf("after discard (-want +got):\n%s", diff)
	}
}

func testLock(t *testing.T, h Harness) {
	s := h.NewStore(t)
	in := open(t, s, "k")
	other := h.Restart(t, s)
	if _, err := other.Open(bg, "k"); !errors.Is(err, workspace.ErrLocked) {
		t.Errorf("Open of an open instance = %v, want ErrLocked", err)
	}
	if err := other.Delete(bg, "k"); !errors.Is(err, workspace.ErrLocked) {
		t.Errorf("Delete of an open instance = %v, want ErrLocked", err)
	}
	in.Close()
	again, err := other.Open(bg, "k")
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	again.Close()
}

func testListAndDelete(t *testing.T, h Harness) {
	s := h.NewStore(t)
	for _, k := range []string{"b", "a", "c"} {
		in := open(t, s, k)
		commitTurn(t, in, workspace.Append(Msg("m", k)))
		in.Close()
	}
	if err := s.Delete(bg, "b"); err != nil {
		t.Fatal(err)
	}
	keys, err := s.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "c"}, keys); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if err := s.Delete(bg, "b"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Delete of a deleted instance = %v, want fs.ErrNotExist", err)
	}
	in := open(t, s, "b")
	if n := len(in.Messages()); n != 0 {
		t.Errorf("a re-created instance has %d old messages", n)
	}
}

func testHostileKeys(t *testing.T, h Harness) {
	s := h.NewStore(t)
	keys := []string{"..", ".", "a/b", "a-b", "A-B", "../../etc/passwd", "/abs", `c:\x`, "con", "user:1", "日本語", strings.Repeat("long", 100)}
	for i, k := range keys {
		in := open(t, s, k)
		commitTurn(t, in, workspace.Append(Msg(fmt.Sprint("m", i), k)))
		in.Close()
	}
	got, err := s.List(bg)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(keys))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List: every key must come back exactly (-want +got):\n%s", diff)
	}
	for i, k := range keys {
		in := open(t, s, k)
		if diff := cmp.Diff([]string{fmt.Sprint("m", i)}, ids(in.Messages())); diff != "" {
			t.Errorf("key %q shares state with another key (-want +got):\n%s", k, diff)
		}
		in.Close()
	}
	for _, bad := range []string{"", "\xff"} {
		if _, err := s.Open(bg, bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

func testExtensionState(t *testing.T, h Harness) {
	s := h.NewStore(t)
	in := open(t, s, "k")
	type state struct{ N int }
	turn, _ := in.BeginTurn(bg)
	if err := turn.SetExtension("counter", state{1}); err != nil {
		t.Fatal(err)
	}
	if err := turn.SetExtension("bad", map[string]any{"f": func() {}}); !errors.Is(err, workspace.ErrInvalidExtensionState) {
		t.Errorf("SetExtension(func) = %v, want ErrInvalidExtensionState", err)
	}
	if ok, _ := in.Extension("counter", new(state)); ok {
		t.Error("state visible before its turn committed")
	}
	turn.Commit(bg)
	turn, _ = in.BeginTurn(bg)
	turn.SetExtension("counter", state{2})
	turn.Discard(bg)
	s, in = restart(t, h, s, in, "k")
	var got state
	if ok, err := in.Extension("counter", &got); !ok || err != nil || got.N != 1 {
		t.Errorf("Extension = %+v, %v, %v; want the committed {1}, not the discarded {2}", got, ok, err)
	}
}

func testConcurrentAppends(t *testing.T, h Harness) {
	s := h.NewStore(t)
	in := open(t, s, "k")
	turn, err := in.BeginTurn(bg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if err := turn.Append(bg, workspace.Append(Msg(fmt.Sprintf("g%d-%d", g, i), ""))); err != nil {
					t.Error(err)
					return
				}
				turn.Messages()
			}
		}()
	}
	wg.Wait()
	if err := turn.Commit(bg); err != nil {
		t.Fatal(err)
	}
	_, in = restart(t, h, s, in, "k")
	if n := len(in.Messages()); n != 100 {
		t.Errorf("%d messages after concurrent appends, want 100", n)
	}
}
