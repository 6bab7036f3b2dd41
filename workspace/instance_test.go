package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/internal/jsonl"
)

var ctx = context.Background()

func testPaths(t testing.TB) Paths {
	t.Helper()
	p, err := NewPaths(t.TempDir(), &PathsOptions{StateRoot: t.TempDir(), WorkspaceName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testStore(t testing.TB, opts *StoreOptions) *Store {
	t.Helper()
	s, err := NewStore(testPaths(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openInst(t testing.TB, s *Store, key string) *Instance {
	t.Helper()
	in, err := s.Open(ctx, key, &OpenOptions{AgentName: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

var t0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func msg(id, text string) Message {
	return Message{ID: id, Data: json.RawMessage(fmt.Sprintf(`{"role":"user","content":%q}`, text)), CreatedAt: t0, Source: Source{Type: "user"}}
}

func ids(msgs []Message) []string {
	out := []string{}
	for _, m := range msgs {
		out = append(out, m.ID)
	}
	return out
}

func runTurn(t testing.TB, in *Instance, evs ...Event) {
	t.Helper()
	turn, err := in.BeginTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := turn.Append(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	if err := turn.EndStep(ctx); err != nil {
		t.Fatal(err)
	}
	if err := turn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

func reopen(t testing.TB, s *Store, in *Instance) *Instance {
	t.Helper()
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	return openInst(t, s, in.Key())
}

func TestTurnsSurviveReopen(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "user:1")
	if !in.Recovery().Clean() {
		t.Errorf("new instance recovery = %+v", in.Recovery())
	}
	runTurn(t, in, Append(msg("m1", "hello")), Append(msg("m2", "hi")))
	runTurn(t, in, Append(msg("m3", "fix the bug")))
	want := in.Messages()
	if diff := cmp.Diff([]string{"m1", "m2", "m3"}, ids(want)); diff != "" {
		t.Fatalf("messages (-want +got):\n%s", diff)
	}
	in = reopen(t, s, in)
	if diff := cmp.Diff(want, in.Messages()); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
	if !in.Recovery().Clean() {
		t.Errorf("clean reopen reported recovery %+v", in.Recovery())
	}
	if md := in.Metadata(); md.Status != StatusIdle || md.AgentName != "coder" || md.InstanceKey != "user:1" {
		t.Errorf("metadata = %+v", md)
	}
}

func TestAppendOnlyCommitAppends(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	runTurn(t, in, Append(msg("m1", "a")))
	base := filepath.Join(in.Dir(), "messages", "base.jsonl")
	before, _ := os.ReadFile(base)
	fi1, _ := os.Stat(base)
	runTurn(t, in, Append(msg("m2", "b")))
	after, _ := os.ReadFile(base)
	fi2, _ := os.Stat(base)
	if !bytes.HasPrefix(after, before) || len(after) <= len(before) {
		t.Errorf("append-only commit did not append to base.jsonl")
	}
	if !os.SameFile(fi1, fi2) {
		t.Errorf("append-only commit replaced base.jsonl")
	}
	runTurn(t, in, Remove("m1"))
	fi3, _ := os.Stat(base)
	if os.SameFile(fi2, fi3) {
		t.Errorf("a remove did not rewrite base.jsonl")
	}
	rewritten, _ := os.ReadFile(base)
	if n := bytes.Count(rewritten, []byte(`"commit"`)); n != 1 {
		t.Errorf("rewritten base has %d commit marks, want 1", n)
	}
	if ev, _ := os.ReadFile(filepath.Join(in.Dir(), "messages", "events.jsonl")); len(ev) != 0 {
		t.Errorf("events.jsonl not cleared after commit: %q", ev)
	}
}

func TestEvents(t *testing.T) {
	tests := []struct {
		name    string
		turns   [][]Event
		want    []string
		wantErr string // error of the last turn's Append
	}{
		{"appends", [][]Event{{Append(msg("a", "")), Append(msg("b", ""))}}, []string{"a", "b"}, ""},
		{"replace keeps position", [][]Event{{Append(msg("a", "")), Append(msg("b", ""))}, {Replace("a", msg("a2", ""))}}, []string{"a2", "b"}, ""},
		{"replace with same id", [][]Event{{Append(msg("a", ""))}, {Replace("a", msg("a", "new"))}}, []string{"a"}, ""},
		{"remove", [][]Event{{Append(msg("a", "")), Append(msg("b", "")), Append(msg("c", ""))}, {Remove("b")}}, []string{"a", "c"}, ""},
		{"truncate then append", [][]Event{{Append(msg("a", ""))}, {Truncate(), Append(msg("s", "summary"))}}, []string{"s"}, ""},
		{"mutation of a message appended in the same turn", [][]Event{{Append(msg("a", "")), Replace("a", msg("b", "")), Append(msg("c", "")), Remove("c")}}, []string{"b"}, ""},
		{"duplicate id", [][]Event{{Append(msg("a", ""))}, {Append(msg("a", ""))}}, []string{"a"}, "already exists"},
		{"duplicate within batch", [][]Event{{Append(msg("a", "")), Append(msg("a", ""))}}, []string{}, "already exists"},
		{"replace missing", [][]Event{{Replace("x", msg("y", ""))}}, []string{}, `no message "x"`},
		{"remove missing", [][]Event{{Remove("x")}}, []string{}, `no message "x"`},
		{"replace onto an existing id", [][]Event{{Append(msg("a", "")), Append(msg("b", ""))}, {Replace("a", msg("b", ""))}}, []string{"a", "b"}, "already exists"},
		{"empty id", [][]Event{{Append(msg("", ""))}}, []string{}, "empty id"},
		{"bad data", [][]Event{{Append(Message{ID: "a", Data: json.RawMessage("{")})}}, []string{}, "not valid JSON"},
		{"unknown type", [][]Event{{{Type: "upsert"}}}, []string{}, "unknown type"},
		{"unencodable time", [][]Event{{Append(Message{ID: "a", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})}}, []string{}, "year outside of range"},
		{"batch is all or nothing", [][]Event{{Append(msg("a", "")), Remove("zzz")}}, []string{}, "no message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testStore(t, nil)
			in := openInst(t, s, "k")
			for i, evs := range tt.turns {
				turn, err := in.BeginTurn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				err = turn.Append(ctx, evs...)
				if i == len(tt.turns)-1 && tt.wantErr != "" {
					if !errors.Is(err, ErrInvalidEvent) || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("Append error = %v, want ErrInvalidEvent containing %q", err, tt.wantErr)
					}
				} else if err != nil {
					t.Fatal(err)
				}
				if err := turn.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tt.want, ids(in.Messages())); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			in = reopen(t, s, in)
			if diff := cmp.Diff(tt.want, ids(in.Messages())); diff != "" {
				t.Errorf("after reopen (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTurnMessagesView(t *testing.T) {
	in := openInst(t, testStore(t, nil), "k")
	runTurn(t, in, Append(msg("a", "")))
	turn, _ := in.BeginTurn(ctx)
	turn.Append(ctx, Append(msg("b", "")))
	if diff := cmp.Diff([]string{"a", "b"}, ids(turn.Messages())); diff != "" {
		t.Errorf("turn view (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a"}, ids(in.Messages())); diff != "" {
		t.Errorf("committed view includes the open turn (-want +got):\n%s", diff)
	}
	if _, err := in.BeginTurn(ctx); !errors.Is(err, ErrTurnActive) {
		t.Errorf("second BeginTurn: %v, want ErrTurnActive", err)
	}
	if md := in.Metadata(); md.Status != StatusProcessing {
		t.Errorf("status during a turn = %q", md.Status)
	}
	if err := turn.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if err := turn.Append(ctx, Append(msg("c", ""))); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Discard: %v, want ErrClosed", err)
	}
	if diff := cmp.Diff([]string{"a"}, ids(in.Messages())); diff != "" {
		t.Errorf("after discard (-want +got):\n%s", diff)
	}
	if md := in.Metadata(); md.Status != StatusIdle {
		t.Errorf("status after discard = %q", md.Status)
	}
}

// crashMidTurn leaves a turn uncommitted the way a killed process does: the
// events are on disk, the status is "processing", and the lock is released.
func crashMidTurn(t *testing.T, s *Store, in *Instance, evs ...Event) {
	t.Helper()
	turn, err := in.BeginTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := turn.Append(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	if err := turn.SetExtension("counter", 7); err != nil {
		t.Fatal(err)
	}
	in.Close()
}

func TestPendingTurnResume(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	runTurn(t, in, Append(msg("a", "")))
	crashMidTurn(t, s, in, Append(msg("b", "")), Replace("a", msg("a2", "")))

	in = openInst(t, s, "k")
	rec := in.Recovery()
	if !rec.Crashed || rec.Pending == nil {
		t.Fatalf("recovery = %+v, want a crash with a pending turn", rec)
	}
	if diff := cmp.Diff([]EventType{EventAppend, EventReplace}, []EventType{rec.Pending.Events[0].Type, rec.Pending.Events[1].Type}); diff != "" {
		t.Errorf("pending events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a"}, ids(in.Messages())); diff != "" {
		t.Errorf("pending events were applied silently (-want +got):\n%s", diff)
	}
	if _, err := in.BeginTurn(ctx); !errors.Is(err, ErrPendingTurn) {
		t.Fatalf("BeginTurn with a pending turn: %v", err)
	}
	turn, err := in.ResumeTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if turn.ID() != rec.Pending.ID {
		t.Errorf("resumed turn id %s, want %s", turn.ID(), rec.Pending.ID)
	}
	// Extension state is written at commit: what the crashed turn staged
	// in memory is gone, and the resumed turn must stage it again.
	var n int
	if ok, _ := turn.Extension("counter", &n); ok {
		t.Errorf("state staged by a turn that never committed came back: %d", n)
	}
	turn.SetExtension("counter", 7)
	if err := turn.Append(ctx, Append(msg("c", ""))); err != nil {
		t.Fatal(err)
	}
	if err := turn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	in = reopen(t, s, in)
	if diff := cmp.Diff([]string{"a2", "b", "c"}, ids(in.Messages())); diff != "" {
		t.Errorf("after resume and commit (-want +got):\n%s", diff)
	}
	if ok, _ := in.Extension("counter", &n); !ok || n != 7 {
		t.Errorf("extension after resumed commit = %d, %v", n, ok)
	}
	if !in.Recovery().Clean() {
		t.Errorf("recovery after a clean close = %+v", in.Recovery())
	}
}

func TestPendingTurnDiscard(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	runTurn(t, in, Append(msg("a", "")))
	crashMidTurn(t, s, in, Append(msg("b", "")))
	in = openInst(t, s, "k")
	if in.Metadata().Status != StatusProcessing {
		t.Errorf("status with a pending turn = %q", in.Metadata().Status)
	}
	if err := in.DiscardPendingTurn(ctx); err != nil {
		t.Fatal(err)
	}
	runTurn(t, in, Append(msg("c", "")))
	in = reopen(t, s, in)
	if diff := cmp.Diff([]string{"a", "c"}, ids(in.Messages())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if ok, _ := in.Extension("counter", new(int)); ok {
		t.Error("a discarded turn's extension state was committed")
	}
}

// TestFinishInterruptedCommit puts back the event log of a committed turn,
// as if the process died after writing base.jsonl and before clearing
// events.jsonl. Reopening must not apply the events twice.
func TestFinishInterruptedCommit(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	runTurn(t, in, Append(msg("a", "")))
	turn, _ := in.BeginTurn(ctx)
	turn.Append(ctx, Append(msg("b", "")), Replace("a", msg("a2", "")))
	turn.SetExtension("notes", map[string]int{"n": 1})
	turn.EndStep(ctx)
	events := filepath.Join(in.Dir(), "messages", "events.jsonl")
	saved, _ := os.ReadFile(events)
	if err := turn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	in.Close()
	// The commit also staged the extension state in the log; keep the
	// whole log as it was at the fold.
	os.WriteFile(events, saved, 0o600)
	os.Remove(filepath.Join(in.Dir(), "extensions", "notes.json"))

	in = openInst(t, s, "k")
	rec := in.Recovery()
	if rec.Pending != nil {
		t.Errorf("events of a committed turn came back as pending: %+v", rec.Pending)
	}
	if rec.FinishedCommit != turn.ID() {
		t.Errorf("FinishedCommit = %q, want %q", rec.FinishedCommit, turn.ID())
	}
	if diff := cmp.Diff([]string{"a2", "b"}, ids(in.Messages())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTornTailRepair(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	runTurn(t, in, Append(msg("a", "")))
	turn, _ := in.BeginTurn(ctx)
	turn.Append(ctx, Append(msg("b", "")))
	in.Close()
	dir := filepath.Join(in.Dir(), "messages")
	for _, name := range []string{"base.jsonl", "events.jsonl"} {
		f, _ := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(`{"c":"00000000","r":{"msg":{"id":"torn`)
		f.Close()
	}
	in = openInst(t, s, "k")
	rec := in.Recovery()
	if len(rec.Repairs) != 2 {
		t.Fatalf("repairs = %+v, want 2", rec.Repairs)
	}
	for _, r := range rec.Repairs {
		kept, err := os.ReadFile(r.SavedAs)
		if err != nil || !bytes.Contains(kept, []byte(`"torn`)) {
			t.Errorf("torn bytes not kept aside in %s: %q, %v", r.SavedAs, kept, err)
		}
		data, _ := os.ReadFile(r.File)
		if bytes.Contains(data, []byte("torn")) || int64(len(data)) != r.Offset {
			t.Errorf("%s not cut to %d bytes", r.File, r.Offset)
		}
	}
	if rec.Pending == nil || len(rec.Pending.Events) != 1 {
		t.Fatalf("pending = %+v", rec.Pending)
	}
	if err := in.DiscardPendingTurn(ctx); err != nil {
		t.Fatal(err)
	}
	runTurn(t, in, Append(msg("c", "")))
	in = reopen(t, s, in)
	if diff := cmp.Diff([]string{"a", "c"}, ids(in.Messages())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUncommittedFoldIsCut(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	runTurn(t, in, Append(msg("a", "")))
	turn, _ := in.BeginTurn(ctx)
	turn.Append(ctx, Append(msg("b", "")))
	in.Close()
	// A fold that wrote its message but died before its commit mark.
	base := filepath.Join(in.Dir(), "messages", "base.jsonl")
	data, _ := os.ReadFile(base)
	m := msg("b", "")
	line, _ := jsonl.Marshal(nil, baseRecord{Msg: &m})
	os.WriteFile(base, append(data, line...), 0o600)

	in = openInst(t, s, "k")
	rec := in.Recovery()
	if len(rec.Repairs) != 1 || !strings.Contains(rec.Repairs[0].Reason, "never committed") {
		t.Errorf("repairs = %+v", rec.Repairs)
	}
	if diff := cmp.Diff([]string{"a"}, ids(in.Messages())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if rec.Pending == nil {
		t.Error("the turn whose fold was cut is not pending")
	}
}

func TestCorruptMiddleRecordReported(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	runTurn(t, in, Append(msg("a", "first")), Append(msg("b", "second")))
	runTurn(t, in, Append(msg("c", "third")))
	in.Close()
	base := filepath.Join(in.Dir(), "messages", "base.jsonl")
	data, _ := os.ReadFile(base)
	bad := bytes.Replace(data, []byte("second"), []byte("SECOND"), 1)
	os.WriteFile(base, bad, 0o600)

	for range 2 { // reporting is stable across opens
		in = openInst(t, s, "k")
		rec := in.Recovery()
		if len(rec.Corrupt) == 0 {
			t.Fatalf("corruption not reported: %+v", rec)
		}
		kept, err := os.ReadFile(rec.Corrupt[0].SavedAs)
		if err != nil || !bytes.Contains(kept, []byte("SECOND")) {
			t.Errorf("corrupt record not copied aside: %q %v", kept, err)
		}
		if diff := cmp.Diff([]string{"a", "c"}, ids(in.Messages())); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if got, _ := os.ReadFile(base); !bytes.Equal(got, bad) {
			t.Error("the log holding a corrupt record was changed")
		}
		in.Close()
	}
}

func TestLocked(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	if _, err := s.Open(ctx, "k", nil); !errors.Is(err, ErrLocked) {
		t.Errorf("second Open: %v, want ErrLocked", err)
	}
	s2, err := NewStore(s.Paths(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Open(ctx, "k", nil); !errors.Is(err, ErrLocked) {
		t.Errorf("Open from another Store: %v, want ErrLocked", err)
	}
	if err := s.Delete(ctx, "k"); !errors.Is(err, ErrLocked) {
		t.Errorf("Delete of an open instance: %v, want ErrLocked", err)
	}
	in.Close()
	in2, err := s2.Open(ctx, "k", nil)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	in2.Close()
}

func TestListAndDelete(t *testing.T) {
	s := testStore(t, nil)
	for _, k := range []string{"b", "a/x", "c"} {
		in := openInst(t, s, k)
		runTurn(t, in, Append(msg("m", k)))
		in.Close()
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, i := range list {
		keys = append(keys, i.Key)
	}
	if diff := cmp.Diff([]string{"a/x", "b", "c"}, keys); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	dir, _ := s.Paths().InstanceDir("a/x")
	if err := s.Delete(ctx, "a/x"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("instance dir still there: %v", err)
	}
	if trash, _ := os.ReadDir(s.Paths().TrashDir()); len(trash) != 0 {
		t.Errorf("trash not emptied: %v", trash)
	}
	audit, _ := os.ReadFile(s.Paths().AuditLog())
	if !bytes.Contains(audit, []byte(`"action":"instance.created","instanceKey":"a/x"`)) {
		t.Errorf("audit log lacks the creation: %s", audit)
	}
	if !bytes.Contains(audit, []byte(`"action":"instance.deleted","instanceKey":"a/x"`)) {
		t.Errorf("audit log lacks the deletion: %s", audit)
	}
	if err := s.Delete(ctx, "a/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second Delete: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(s.Paths().ConfigFile()); err != nil {
		t.Errorf("global state touched by Delete: %v", err)
	}
	// An interrupted delete's leftovers are swept by the next store.
	leftover := filepath.Join(s.Paths().TrashDir(), "x.01")
	os.MkdirAll(filepath.Join(leftover, "messages"), 0o700)
	if _, err := NewStore(s.Paths(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leftover); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("trash leftover not swept")
	}
}

func TestExtensionState(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	type state struct {
		Steps int    `json:"steps"`
		Last  string `json:"last"`
	}
	turn, _ := in.BeginTurn(ctx)
	if err := turn.SetExtension("basicCompaction", state{42, "step-41"}); err != nil {
		t.Fatal(err)
	}
	var got state
	if ok, _ := in.Extension("basicCompaction", &got); ok {
		t.Error("staged state visible as committed before the commit")
	}
	if ok, _ := turn.Extension("basicCompaction", &got); !ok || got.Steps != 42 {
		t.Errorf("turn view of staged state = %+v, %v", got, ok)
	}
	for _, bad := range []any{func() {}, make(chan int), map[string]any{"f": func() {}}} {
		if err := turn.SetExtension("bad", bad); !errors.Is(err, ErrInvalidExtensionState) {
			t.Errorf("SetExtension(%T) = %v, want ErrInvalidExtensionState", bad, err)
		}
	}
	for _, name := range []string{"", "../x", ".hidden", "a/b", strings.Repeat("n", 101)} {
		if err := turn.SetExtension(name, 1); err == nil {
			t.Errorf("SetExtension(%q) accepted", name)
		}
	}
	if err := turn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(in.Dir(), "extensions", "basicCompaction.json")
	fi1, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	turn, _ = in.BeginTurn(ctx)
	turn.SetExtension("basicCompaction", state{42, "step-41"}) // unchanged
	turn.Commit(ctx)
	fi2, _ := os.Stat(file)
	if !os.SameFile(fi1, fi2) {
		t.Error("an unchanged extension state was rewritten")
	}
	in = reopen(t, s, in)
	got = state{}
	if ok, err := in.Extension("basicCompaction", &got); !ok || err != nil || got != (state{42, "step-41"}) {
		t.Errorf("after reopen: %+v %v %v", got, ok, err)
	}
}

func TestRuntimeEvents(t *testing.T) {
	m := &Masker{}
	m.Add("sk-canary-0123456789")
	s := testStore(t, &StoreOptions{Masker: m, RuntimeEventsMaxBytes: 1024, RuntimeEventsKeep: 2})
	in := openInst(t, s, "k")
	for i := range 40 {
		err := in.Emit(ctx, RuntimeEvent{Type: "tool.called", ToolName: "bash", Data: map[string]any{"cmd": "curl -H 'Authorization: sk-canary-0123456789'", "i": i}})
		if err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(in.Dir(), "messages")
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if bytes.Contains(data, []byte("canary")) {
			t.Errorf("%s holds the secret", e.Name())
		}
		if strings.HasPrefix(e.Name(), "runtime-events") {
			if len(data) > 1024 {
				t.Errorf("%s has %d bytes, over the cap", e.Name(), len(data))
			}
			if !bytes.Contains(data, []byte(Redacted)) || !bytes.HasPrefix(data, []byte(`{"c":`)) {
				t.Errorf("%s: unexpected content %.100q", e.Name(), data)
			}
			if first, _, _ := bytes.Cut(data, []byte("\n")); !bytes.Contains(first, []byte(`"schema":"paddock.runtime-events"`)) {
				t.Errorf("%s does not start with its header: %q", e.Name(), first)
			}
			if n := bytes.Count(data, []byte(`"header"`)); n != 1 {
				t.Errorf("%s has %d headers", e.Name(), n)
			}
		}
	}
	for _, want := range []string{"runtime-events.jsonl", "runtime-events.1.jsonl", "runtime-events.2.jsonl"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("files %v lack %s", names, want)
		}
	}
	if strings.Contains(strings.Join(names, " "), "runtime-events.3") {
		t.Errorf("more rotated files than kept: %v", names)
	}
}

func TestCorruptMetadataRebuilt(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	runTurn(t, in, Append(msg("a", "")))
	in.Close()
	name := filepath.Join(in.Dir(), "metadata.json")
	os.WriteFile(name, []byte("{not json"), 0o600)
	in = openInst(t, s, "k")
	rec := in.Recovery()
	if !rec.MetadataRebuilt || len(rec.Corrupt) != 1 {
		t.Fatalf("recovery = %+v", rec)
	}
	if kept, _ := os.ReadFile(rec.Corrupt[0].SavedAs); string(kept) != "{not json" {
		t.Errorf("the unreadable metadata was not kept aside: %q", kept)
	}
	if md := in.Metadata(); md.InstanceKey != "k" || md.Status != StatusIdle {
		t.Errorf("rebuilt metadata = %+v", md)
	}
	if diff := cmp.Diff([]string{"a"}, ids(in.Messages())); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// An extension state staged before EndStep is in the event log: a turn
// recovered after a crash has it, including a state set back to the
// committed value after a different one was logged.
func TestPendingTurnKeepsLoggedExtension(t *testing.T) {
	s := testStore(t, nil)
	in := openInst(t, s, "k")
	turn, err := in.BeginTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	turn.SetExtension("loop", 1)
	if err := turn.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	turn, err = in.BeginTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := turn.Append(ctx, Append(msg("a", ""))); err != nil {
		t.Fatal(err)
	}
	turn.SetExtension("loop", 2)
	turn.SetExtension("other", "x")
	if err := turn.EndStep(ctx); err != nil {
		t.Fatal(err)
	}
	turn.SetExtension("other", "y") // staged, not logged: lost in the crash
	in.Close()

	in = openInst(t, s, "k")
	p := in.Recovery().Pending
	if p == nil {
		t.Fatal("no pending turn")
	}
	if got := string(p.Extensions["loop"]) + " " + string(p.Extensions["other"]); got != `2 "x"` {
		t.Errorf("recovered extension states %q, want 2 \"x\"", got)
	}
	turn, err = in.ResumeTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if ok, err := turn.Extension("loop", &n); !ok || err != nil || n != 2 {
		t.Errorf("resumed turn's state %d, %v, %v; want 2", n, ok, err)
	}
	// Back to the committed value, logged over the different one.
	turn.SetExtension("loop", 1)
	if err := turn.EndStep(ctx); err != nil {
		t.Fatal(err)
	}
	in.Close()

	in = openInst(t, s, "k")
	if got := string(in.Recovery().Pending.Extensions["loop"]); got != "1" {
		t.Errorf("after setting back the committed value: %q, want 1", got)
	}
	turn, err = in.ResumeTurn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := turn.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	in = reopen(t, s, in)
	if ok, _ := in.Extension("loop", &n); !ok || n != 1 {
		t.Errorf("committed state %d, want 1", n)
	}
	var o string
	if ok, _ := in.Extension("other", &o); !ok || o != "x" {
		t.Errorf("committed other %q, want x", o)
	}
}
