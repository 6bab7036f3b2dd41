package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The tests in this file run the store in real child processes: the test
// binary re-executes itself with -test.run=^TestHelperProcess$ and a role in
// the environment. They check what only real processes can show: that the
// flock conflicts across processes and is released by the kernel when its
// holder is killed, and that a process killed with SIGKILL at a random
// moment of its turns loses nothing it acknowledged.

// The environment of a helper process.
const (
	helperRoleEnv    = "PADDOCK_TEST_HELPER_ROLE"    // "hold" or "turns"
	helperProjectEnv = "PADDOCK_TEST_HELPER_PROJECT" // Paths.ProjectRoot
	helperStateEnv   = "PADDOCK_TEST_HELPER_STATE"   // Paths.StateRoot
	helperMidTurnEnv = "PADDOCK_TEST_HELPER_MIDTURN" // "hold": "1" to block inside a turn
	helperPendingEnv = "PADDOCK_TEST_HELPER_PENDING" // "turns": "resume" or "discard"
	helperWorkspace  = "test"                        // the workspace name of testPaths
	helperKey        = "proc"                        // the instance the helpers open
)

// requireProcesses skips the test where the store has no cross-process lock
// or a test cannot start a copy of itself.
func requireProcesses(t *testing.T) {
	t.Helper()
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1", "ios", "android":
		t.Skipf("no flock or no re-executable test binary on %s", runtime.GOOS)
	}
}

// TestHelperProcess is not a test: it is the body of the child processes
// the other tests in this file start. Run by go test, it returns at once.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperRoleEnv)
	if role == "" {
		return
	}
	var err error
	switch role {
	case "hold":
		err = helperHold()
	case "turns":
		err = helperTurns()
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", role, err)
		os.Exit(2)
	}
	os.Exit(0)
}

func helperStore() (*Store, error) {
	paths, err := NewPaths(os.Getenv(helperProjectEnv), &PathsOptions{StateRoot: os.Getenv(helperStateEnv), WorkspaceName: helperWorkspace})
	if err != nil {
		return nil, err
	}
	return NewStore(paths, nil)
}

// helperHold opens the instance, commits a turn (or, mid-turn, leaves one
// open after a step), prints "locked" and holds the instance until its
// stdin closes.
func helperHold() error {
	s, err := helperStore()
	if err != nil {
		return err
	}
	in, err := s.Open(ctx, helperKey, nil)
	if err != nil {
		return err
	}
	turn, err := in.BeginTurn(ctx)
	if err != nil {
		return err
	}
	if os.Getenv(helperMidTurnEnv) == "1" {
		if err := turn.Append(ctx, Append(msg("p1", "pending one")), Append(msg("p2", "pending two"))); err != nil {
			return err
		}
		if err := turn.EndStep(ctx); err != nil {
			return err
		}
	} else {
		if err := turn.Append(ctx, Append(msg("c1", "committed by the child"))); err != nil {
			return err
		}
		if err := turn.Commit(ctx); err != nil {
			return err
		}
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	return in.Close()
}

// helperTurns opens the instance, deals with a pending turn, and runs the
// turns of procTurn forever from where the log is. It prints "started"
// first, "resuming N" or "discarded N" when it found turn N pending,
// "opened" before its first new turn, "appended N K" after each Append and
// "step N K" after each EndStep (K events of turn N written), and
// "committed C" after each Commit (C turns committed). It exits when its stdin closes, so
// it never outlives its parent.
func helperTurns() error {
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
	fmt.Println("started")
	s, err := helperStore()
	if err != nil {
		return err
	}
	in, err := s.Open(ctx, helperKey, nil)
	if err != nil {
		return err
	}
	next, err := procCommitted(in.Messages())
	if err != nil {
		return err
	}
	if p := in.PendingTurn(); p != nil {
		if os.Getenv(helperPendingEnv) == "resume" {
			fmt.Printf("resuming %d\n", next)
			if err := procResume(in, next, p); err != nil {
				return err
			}
			next++
		} else {
			if err := in.DiscardPendingTurn(ctx); err != nil {
				return err
			}
			fmt.Printf("discarded %d\n", next)
		}
	}
	fmt.Println("opened")
	for n := next; ; n++ {
		turn, err := in.BeginTurn(ctx)
		if err != nil {
			return err
		}
		acked := 0
		for _, step := range procTurn(n) {
			if err := turn.Append(ctx, step...); err != nil {
				return fmt.Errorf("turn %d: %w", n, err)
			}
			acked += len(step)
			fmt.Printf("appended %d %d\n", n, acked)
			if err := turn.EndStep(ctx); err != nil {
				return err
			}
			fmt.Printf("step %d %d\n", n, acked)
		}
		if err := procCommit(turn, n); err != nil {
			return err
		}
	}
}

// procResume resumes the pending turn n, appends the rest of its events
// and commits it.
func procResume(in *Instance, n int, p *PendingTurn) error {
	all := procEvents(n)
	if !procPrefix(p.Events, all) {
		return fmt.Errorf("pending turn is not a prefix of turn %d", n)
	}
	turn, err := in.ResumeTurn(ctx)
	if err != nil {
		return err
	}
	if rest := all[len(p.Events):]; len(rest) > 0 {
		if err := turn.Append(ctx, rest...); err != nil {
			return fmt.Errorf("resumed turn %d: %w", n, err)
		}
		fmt.Printf("appended %d %d\n", n, len(all))
	}
	if err := turn.EndStep(ctx); err != nil {
		return err
	}
	fmt.Printf("step %d %d\n", n, len(all))
	return procCommit(turn, n)
}

func procCommit(turn *Turn, n int) error {
	if v, ok := procExtAfter(n + 1); ok && n%3 == 0 {
		if err := turn.SetExtension("turns", v); err != nil {
			return err
		}
	}
	if err := turn.Commit(ctx); err != nil {
		return fmt.Errorf("commit turn %d: %w", n, err)
	}
	fmt.Printf("committed %d\n", n+1)
	return nil
}

// procCommitted reads the number of committed turns off the messages: the
// last message is always one that the last committed turn appended.
func procCommitted(msgs []Message) (int, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	var n, j int
	if _, err := fmt.Sscanf(msgs[len(msgs)-1].ID, "t%d-m%d", &n, &j); err != nil {
		return 0, fmt.Errorf("last message %q: %w", msgs[len(msgs)-1].ID, err)
	}
	return n + 1, nil
}

// procTurn returns the steps of turn n, a function of n alone: the turn
// appends 1 to 3 messages t<n>-m<j>; every fourth turn first replaces the
// previous turn's first message (so its commit rewrites base.jsonl), every
// fifth removes the first message of the turn before that. Even turns with
// more than one event take two steps.
func procTurn(n int) [][]Event {
	var evs []Event
	if n%4 == 3 {
		old := fmt.Sprintf("t%d-m0", n-1)
		evs = append(evs, Replace(old, msg(old+"r", fmt.Sprintf("turn %d, edited by turn %d", n-1, n))))
	}
	if n%5 == 4 {
		evs = append(evs, Remove(procFirstAfter(n-2)))
	}
	for j := range 1 + n%3 {
		evs = append(evs, Append(msg(fmt.Sprintf("t%d-m%d", n, j), fmt.Sprintf("turn %d, message %d", n, j))))
	}
	if n%2 == 1 || len(evs) == 1 {
		return [][]Event{evs}
	}
	h := len(evs) / 2
	return [][]Event{evs[:h], evs[h:]}
}

// procFirstAfter is the id of turn n's first message once turn n+1 is
// committed.
func procFirstAfter(n int) string {
	id := fmt.Sprintf("t%d-m0", n)
	if (n+1)%4 == 3 {
		id += "r"
	}
	return id
}

func procEvents(n int) []Event {
	var evs []Event
	for _, step := range procTurn(n) {
		evs = append(evs, step...)
	}
	return evs
}

// procExtAfter is the "turns" extension state once c turns are committed:
// every third turn, starting with turn 0, sets it to its number plus one.
func procExtAfter(c int) (int, bool) {
	if c == 0 {
		return 0, false
	}
	last := (c - 1) / 3 * 3
	return last + 1, true
}

// procSame reports whether a and b hold the same messages.
func procSame(a, b []Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || !bytes.Equal(x.Data, y.Data) || !x.CreatedAt.Equal(y.CreatedAt) || x.Source != y.Source || len(x.Metadata) != 0 || len(y.Metadata) != 0 {
			return false
		}
	}
	return true
}

// procPrefix reports whether evs is a prefix of all.
func procPrefix(evs, all []Event) bool {
	return len(evs) <= len(all) && slices.Equal(summarizeProcEvents(evs), summarizeProcEvents(all[:len(evs)]))
}

// procModel is the test's own fold of the turns, independent of the
// store's message list: a slice searched by id.
type procModel struct {
	turns int
	msgs  []Message
}

func (m *procModel) advance() {
	for _, e := range procEvents(m.turns) {
		switch e.Type {
		case EventAppend:
			m.msgs = append(m.msgs, *e.Message)
		case EventReplace, EventRemove:
			i := 0
			for i < len(m.msgs) && m.msgs[i].ID != e.TargetID {
				i++
			}
			if i == len(m.msgs) {
				panic(fmt.Sprintf("model: turn %d: no message %q", m.turns, e.TargetID))
			}
			if e.Type == EventReplace {
				m.msgs[i] = *e.Message
			} else {
				m.msgs = append(m.msgs[:i:i], m.msgs[i+1:]...)
			}
		default:
			panic("model: unexpected event " + string(e.Type))
		}
	}
	m.turns++
}

// helper is a running child process.
type helper struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *lineBuffer
	stderr bytes.Buffer

	waitOnce sync.Once
	waitErr  error
}

// startHelper starts the test binary as a helper in role on paths. The
// child is killed and waited for when the test ends.
func startHelper(t *testing.T, role string, paths Paths, env ...string) *helper {
	t.Helper()
	h := &helper{out: newLineBuffer()}
	h.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	h.cmd.Env = append(os.Environ(), helperRoleEnv+"="+role, helperProjectEnv+"="+paths.ProjectRoot, helperStateEnv+"="+paths.StateRoot)
	h.cmd.Env = append(h.cmd.Env, env...)
	h.cmd.Stdout = h.out
	h.cmd.Stderr = &h.stderr
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.cmd.Process.Kill()
		h.wait()
	})
	return h
}

// wait waits for the child once; later calls return the same error.
func (h *helper) wait() error {
	h.waitOnce.Do(func() { h.waitErr = h.cmd.Wait() })
	return h.waitErr
}

// await waits for the child to print want.
func (h *helper) await(t *testing.T, want string) {
	t.Helper()
	if !h.out.await(want, 30*time.Second) {
		h.cmd.Process.Kill()
		err := h.wait()
		t.Fatalf("child did not print %q (exit: %v); stdout:\n%s\nstderr:\n%s", want, err, strings.Join(h.out.lines(), "\n"), h.stderr.String())
	}
}

// kill kills the child with SIGKILL, waits for it, and fails the test if it
// had ended on its own.
func (h *helper) kill(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatal(err)
	}
	h.wait()
	if code := h.cmd.ProcessState.ExitCode(); code != -1 {
		t.Fatalf("child ended on its own before it was killed (%v); stderr:\n%s", h.cmd.ProcessState, h.stderr.String())
	}
}

// lineBuffer collects a child's stdout by line.
type lineBuffer struct {
	mu      sync.Mutex
	partial []byte
	done    []string
	changed chan struct{} // closed and replaced at each new line
}

func newLineBuffer() *lineBuffer { return &lineBuffer{changed: make(chan struct{})} }

func (b *lineBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.partial = append(b.partial, p...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		b.done = append(b.done, string(b.partial[:i]))
		b.partial = b.partial[i+1:]
		close(b.changed)
		b.changed = make(chan struct{})
	}
	return len(p), nil
}

// lines returns the complete lines written so far.
func (b *lineBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.done...)
}

func (b *lineBuffer) await(want string, timeout time.Duration) bool {
	deadline := time.After(timeout)
	for {
		b.mu.Lock()
		changed := b.changed
		found := false
		for _, l := range b.done {
			found = found || l == want
		}
		b.mu.Unlock()
		if found {
			return true
		}
		select {
		case <-changed:
		case <-deadline:
			return false
		}
	}
}

func TestProcessLock(t *testing.T) {
	requireProcesses(t)
	paths := testPaths(t)
	s, err := NewStore(paths, nil)
	if err != nil {
		t.Fatal(err)
	}

	// A child holds the instance: this process can neither open nor
	// delete it.
	h := startHelper(t, "hold", paths)
	h.await(t, "locked")
	if in, err := s.Open(ctx, helperKey, nil); !errors.Is(err, ErrLocked) {
		if err == nil {
			in.Close()
		}
		t.Fatalf("Open while a child process holds the instance: %v, want ErrLocked", err)
	}
	if err := s.Delete(ctx, helperKey); !errors.Is(err, ErrLocked) {
		t.Fatalf("Delete while a child process holds the instance: %v, want ErrLocked", err)
	}

	// It lets go when it closes the instance.
	h.stdin.Close()
	if err := h.wait(); err != nil {
		t.Fatalf("child: %v; stderr:\n%s", err, h.stderr.String())
	}
	in, err := s.Open(ctx, helperKey, nil)
	if err != nil {
		t.Fatalf("Open after the child closed the instance: %v", err)
	}
	if diff := cmp.Diff([]string{"c1"}, ids(in.Messages())); diff != "" {
		t.Errorf("the child's committed turn (-want +got):\n%s", diff)
	}
	if r := in.Recovery(); !r.Clean() {
		t.Errorf("recovery after the child closed cleanly = %+v", r)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestProcessLockReleasedOnKill(t *testing.T) {
	requireProcesses(t)
	for _, midTurn := range []bool{false, true} {
		t.Run(fmt.Sprintf("midTurn=%v", midTurn), func(t *testing.T) {
			paths := testPaths(t)
			s, err := NewStore(paths, nil)
			if err != nil {
				t.Fatal(err)
			}
			h := startHelper(t, "hold", paths, helperMidTurnEnv+"="+map[bool]string{true: "1"}[midTurn])
			h.await(t, "locked")
			if _, err := s.Open(ctx, helperKey, nil); !errors.Is(err, ErrLocked) {
				t.Fatalf("Open while a child process holds the instance: %v, want ErrLocked", err)
			}
			h.kill(t)

			// The kernel dropped the flock with the process: no wait,
			// no stale lock.
			in, err := s.Open(ctx, helperKey, nil)
			if err != nil {
				t.Fatalf("Open right after the holder was killed: %v", err)
			}
			defer in.Close()
			r := in.Recovery()
			if !midTurn {
				if diff := cmp.Diff([]string{"c1"}, ids(in.Messages())); diff != "" {
					t.Errorf("messages (-want +got):\n%s", diff)
				}
				if !r.Clean() {
					t.Errorf("a holder killed between turns left something to recover: %+v", r)
				}
				return
			}
			if !r.Crashed || r.Pending == nil {
				t.Fatalf("recovery = %+v, want a crash with a pending turn", r)
			}
			var pending []string
			for _, e := range r.Pending.Events {
				pending = append(pending, string(e.Type)+" "+e.Message.ID)
			}
			if diff := cmp.Diff([]string{"append p1", "append p2"}, pending); diff != "" {
				t.Errorf("pending events (-want +got):\n%s", diff)
			}
			if len(in.Messages()) != 0 {
				t.Errorf("the uncommitted turn's messages are committed: %v", ids(in.Messages()))
			}
			if st := in.Metadata().Status; st != StatusProcessing {
				t.Errorf("status with a pending turn = %q, want %q", st, StatusProcessing)
			}
		})
	}
}

// TestProcessKillLoop kills a child process running turns with SIGKILL at
// a random moment, again and again on the same state root, and checks
// after each kill that recovery keeps every acknowledged turn and step and
// invents nothing. PADDOCK_TEST_SEED replays a run.
func TestProcessKillLoop(t *testing.T) {
	requireProcesses(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PADDOCK_TEST_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("PADDOCK_TEST_SEED: %v", err)
		}
	}
	t.Logf("PADDOCK_TEST_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	iterations := 20
	if testing.Short() {
		iterations = 5
	}

	paths := testPaths(t)
	s, err := NewStore(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	var model procModel // advanced to the committed turns of the last check
	// The next child resumes or discards a pending turn it finds, in
	// turn, so both paths run.
	mode := "resume"
	totalRepairs, resumed, discarded := 0, 0, 0
	for it := range iterations {
		delay := time.Duration(5+rng.IntN(56)) * time.Millisecond
		// Mostly kill inside the turns; sometimes count from the start,
		// to kill during Open's recovery or the pending turn's handling.
		from := "opened"
		if rng.IntN(4) == 0 {
			from = "started"
		}
		childMode := mode
		h := startHelper(t, "turns", paths, helperPendingEnv+"="+childMode)
		h.await(t, from)
		time.Sleep(delay)
		h.kill(t)

		// What the child acknowledged before it died.
		// A process crash loses no write that returned (see Durability):
		// every event whose Append returned counts, not only synced steps.
		acked, ackTurn, ackEvents := model.turns, -1, 0
		for _, l := range h.out.lines() {
			var a, b int
			if _, err := fmt.Sscanf(l, "committed %d", &a); err == nil {
				acked = a
			} else if _, err := fmt.Sscanf(l, "appended %d %d", &a, &b); err == nil {
				ackTurn, ackEvents = a, b
			} else if _, err := fmt.Sscanf(l, "step %d %d", &a, &b); err == nil {
				ackTurn, ackEvents = a, b
			} else if strings.HasPrefix(l, "resuming ") {
				resumed++
			} else if strings.HasPrefix(l, "discarded ") {
				discarded++
			}
		}

		in, err := s.Open(ctx, helperKey, nil)
		if err != nil {
			t.Fatalf("iteration %d: Open after the kill: %v", it, err)
		}
		rec := in.Recovery()
		msgs := in.Messages()

		// The messages are the fold of turns 0..c-1, for a c at or after
		// the last acknowledged commit: the child may have died between
		// a commit and printing it, never two commits later.
		c, first := -1, model.turns
		for model.turns <= acked+1 {
			if procSame(model.msgs, msgs) {
				c = model.turns
				break
			}
			model.advance()
		}
		if c < 0 {
			t.Fatalf("iteration %d: messages %v are not the fold of turns 0..c-1 for any c in [%d, %d] (seed %d)", it, ids(msgs), first, acked+1, seed)
		}
		if c < acked {
			t.Fatalf("iteration %d: %d turns committed, but the child acknowledged %d (seed %d)", it, c, acked, seed)
		}

		// The pending turn is a prefix of turn c, holding at least the
		// steps the child acknowledged.
		p := in.PendingTurn()
		var pendingEvents []Event
		if p != nil {
			pendingEvents = p.Events
		}
		all := procEvents(c)
		if !procPrefix(pendingEvents, all) {
			t.Fatalf("iteration %d: pending events %v are not a prefix of turn %d (seed %d)", it, summarizeProcEvents(pendingEvents), c, seed)
		}
		if ackTurn == c && len(pendingEvents) < ackEvents {
			t.Fatalf("iteration %d: pending turn %d has %d events, but the child wrote %d (seed %d)", it, c, len(pendingEvents), ackEvents, seed)
		}
		if p != nil {
			mode = map[string]string{"resume": "discard", "discard": "resume"}[mode]
		}
		if p != nil && !rec.Crashed {
			t.Errorf("iteration %d: a pending turn, but Recovery().Crashed is false", it)
		}
		if len(rec.Corrupt) > 0 {
			t.Errorf("iteration %d: a killed process left corrupt records: %+v", it, rec.Corrupt)
		}
		var ext int
		okExt, err := in.Extension("turns", &ext)
		if err != nil {
			t.Fatal(err)
		}
		if wantExt, wantOK := procExtAfter(c); okExt != wantOK || ext != wantExt {
			t.Errorf("iteration %d: extension state %d (present %v), want %d (present %v) after %d turns", it, ext, okExt, wantExt, wantOK, c)
		}
		totalRepairs += len(rec.Repairs)
		t.Logf("iteration %d: killed %v after %q (pending: %s); acknowledged %d commits and %d events of turn %d; recovered %d turns (%d messages), %d pending events, crashed=%v, %d repairs",
			it, delay, from, childMode, acked, ackEvents, ackTurn, c, len(msgs), len(pendingEvents), rec.Crashed, len(rec.Repairs))

		// Recovering again finds the same state and repairs nothing.
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		in, err = s.Open(ctx, helperKey, nil)
		if err != nil {
			t.Fatalf("iteration %d: second Open: %v", it, err)
		}
		if again := in.Messages(); !procSame(msgs, again) {
			diff := cmp.Diff(msgs, again, cmpopts.EquateEmpty())
			t.Errorf("iteration %d: second recovery's messages differ (-first +second):\n%s", it, diff)
		}
		var again []Event
		if p2 := in.PendingTurn(); p2 != nil {
			again = p2.Events
			if p == nil || p2.ID != p.ID {
				t.Errorf("iteration %d: second recovery's pending turn %s, first %v", it, p2.ID, p)
			}
		}
		if diff := cmp.Diff(summarizeProcEvents(pendingEvents), summarizeProcEvents(again)); diff != "" {
			t.Errorf("iteration %d: second recovery's pending events differ (-first +second):\n%s", it, diff)
		}
		if r := in.Recovery(); len(r.Repairs) > 0 || len(r.Corrupt) > 0 || r.FinishedCommit != "" {
			t.Errorf("iteration %d: second recovery repaired again: %+v", it, r)
		}
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d turns committed over %d kills; %d pending turns resumed, %d discarded; %d torn tails repaired", model.turns, iterations, resumed, discarded, totalRepairs)
}

func summarizeProcEvents(evs []Event) []string {
	out := []string{}
	for _, e := range evs {
		b, _ := json.Marshal(e)
		out = append(out, string(b))
	}
	return out
}
