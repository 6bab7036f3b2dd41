package approval

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func bash(id, cmd string) ToolCall {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return ToolCall{ID: id, Name: "bash", Input: in}
}

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newHook(t *testing.T, rules string, store Store, approver Approver) (*Hook, *clock, string) {
	t.Helper()
	e := NewEvaluator(&Options{Home: "/home/dev"})
	if err := e.Load(LayerProject, "p.rules", []byte(rules)); err != nil {
		t.Fatal(err)
	}
	c := &clock{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if store == nil {
		store = NewMemoryStore()
	}
	return NewHook(e, &HookOptions{Store: store, Approver: approver, Session: "s1", Now: c.now}), c, t.TempDir()
}

func actions(b Batch) map[string]Action {
	m := map[string]Action{}
	for _, o := range b.Outcomes {
		m[o.CallID] = o.Action
	}
	return m
}

func TestHookBatch(t *testing.T) {
	h, _, cwd := newHook(t, "deny bash: rm -r -f\nallow bash: git status", nil, nil)
	calls := []ToolCall{
		bash("a", "git status"),
		bash("b", "ls -la"),
		bash("c", "rm -fr build"),
		bash("d", "git push origin main"),
		bash("e", "cat README.md | grep x"),
	}
	b, err := h.Process(context.Background(), calls, cwd)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Action{"a": Run, "b": Run, "c": Result, "d": Wait, "e": Run}
	if d := cmp.Diff(want, actions(b)); d != "" {
		t.Errorf("actions (-want +got):\n%s", d)
	}
	if o := b.Outcomes[2]; !o.IsError || !strings.Contains(o.Result, "denied by policy") || !strings.Contains(o.Result, "rm -r -f") {
		t.Errorf("denied call's tool result = %+v; the model must be told why", o)
	}
	if len(b.Pending) != 1 || b.Pending[0].CallID != "d" || b.Outcomes[3].PendingID != b.Pending[0].ID {
		t.Fatalf("pending = %+v", b.Pending)
	}
	p := b.Pending[0]
	if p.ProposedRule != "allow bash: git push" || p.Digest == "" || !p.Expires.After(p.Created) {
		t.Errorf("pending = %+v", p)
	}
	// The pending record round-trips through JSON.
	data, _ := json.Marshal(p)
	var back Pending
	if err := json.Unmarshal(data, &back); err != nil || !cmp.Equal(p, back) {
		t.Errorf("pending does not round-trip: %v %s", err, cmp.Diff(p, back))
	}
	// Duplicate and missing ids are refused.
	if _, err := h.Process(context.Background(), []ToolCall{bash("x", "ls"), bash("x", "pwd")}, cwd); err == nil {
		t.Error("duplicate call ids accepted")
	}
	if _, err := h.Process(context.Background(), []ToolCall{bash("", "ls")}, cwd); err == nil {
		t.Error("empty call id accepted")
	}
}

func TestResumeDigestBinding(t *testing.T) {
	h, _, cwd := newHook(t, "", nil, nil)
	ctx := context.Background()
	call := bash("t1", "git push origin main")
	b, err := h.Process(ctx, []ToolCall{call}, cwd)
	if err != nil || len(b.Pending) != 1 {
		t.Fatalf("%v %+v", err, b)
	}
	id := b.Pending[0].ID
	other := t.TempDir()
	changed := []struct {
		name string
		call ToolCall
		cwd  string
	}{
		{"edited command", bash("t1", "git push --force origin main"), cwd},
		{"other tool", ToolCall{ID: "t1", Name: "shell", Input: call.Input}, cwd},
		{"other cwd", call, other},
		{"other call id", bash("t2", "git push origin main"), cwd},
	}
	for _, c := range changed {
		if _, err := h.Resume(ctx, id, c.call, c.cwd, Response{Kind: Approve}); !errors.Is(err, ErrDigestMismatch) {
			t.Errorf("%s: err = %v, want ErrDigestMismatch", c.name, err)
		}
	}
	// Key order and spacing of the input do not matter.
	same := ToolCall{ID: "t1", Name: "bash", Input: json.RawMessage(` { "command" : "git push origin main" } `)}
	o, err := h.Resume(ctx, id, same, cwd, Response{Kind: Approve})
	if err != nil || o.Action != Run {
		t.Fatalf("resume = %+v, %v", o, err)
	}
	if _, err := h.Resume(ctx, id, same, cwd, Response{Kind: Approve}); !errors.Is(err, ErrNotFound) {
		t.Errorf("second resume: err = %v, want ErrNotFound", err)
	}
}

func TestDecisions(t *testing.T) {
	ctx := context.Background()
	pend := func(t *testing.T, h *Hook, cwd string, c ToolCall) string {
		t.Helper()
		b, err := h.Process(ctx, []ToolCall{c}, cwd)
		if err != nil || len(b.Pending) != 1 {
			t.Fatalf("%v %+v", err, b)
		}
		return b.Pending[0].ID
	}
	t.Run("reject returns the reason to the model", func(t *testing.T) {
		h, _, cwd := newHook(t, "", nil, nil)
		c := bash("r1", "git push")
		o, err := h.Resume(ctx, pend(t, h, cwd, c), c, cwd, Response{Kind: Reject, Message: "push after review"})
		if err != nil || o.Action != Result || !o.IsError || !strings.Contains(o.Result, "push after review") {
			t.Errorf("%+v %v", o, err)
		}
	})
	t.Run("respond", func(t *testing.T) {
		h, _, cwd := newHook(t, "", nil, nil)
		c := bash("r1", "git push")
		o, err := h.Resume(ctx, pend(t, h, cwd, c), c, cwd, Response{Kind: Respond, Message: "CI pushes for us"})
		if err != nil || o.Action != Result || o.IsError || o.Result != "CI pushes for us" {
			t.Errorf("%+v %v", o, err)
		}
	})
	t.Run("edit is evaluated again", func(t *testing.T) {
		h, _, cwd := newHook(t, "deny bash: git push -f", nil, nil)
		c := bash("r1", "git push")
		id := pend(t, h, cwd, c)
		o, err := h.Resume(ctx, id, c, cwd, Response{Kind: Edit, Input: json.RawMessage(`{"command":"git push --force"}`)})
		if err != nil || o.Action != Result || !o.IsError {
			t.Errorf("edit to a denied call: %+v %v", o, err)
		}
		id = pend(t, h, cwd, c)
		o, err = h.Resume(ctx, id, c, cwd, Response{Kind: Edit, Input: json.RawMessage(`{"command":"git push origin dev"}`)})
		if err != nil || o.Action != Run || string(o.Input) != `{"command":"git push origin dev"}` {
			t.Errorf("edit: %+v %v", o, err)
		}
	})
	t.Run("abort stops the whole turn", func(t *testing.T) {
		a := approverFunc(func(Request) Response { return Response{Kind: Abort} })
		h, _, cwd := newHook(t, "", nil, a)
		b, err := h.Process(ctx, []ToolCall{bash("1", "ls"), bash("2", "git push"), bash("3", "pwd")}, cwd)
		if err != nil || !b.Aborted {
			t.Fatalf("%+v %v", b, err)
		}
		if d := cmp.Diff(map[string]Action{"1": Stop, "2": Stop, "3": Stop}, actions(b)); d != "" {
			t.Error(d)
		}
	})
	t.Run("approve once remembers nothing", func(t *testing.T) {
		h, _, cwd := newHook(t, "", nil, nil)
		c := bash("r1", "git push")
		if o, err := h.Resume(ctx, pend(t, h, cwd, c), c, cwd, Response{Kind: Approve}); err != nil || o.Action != Run {
			t.Fatalf("%+v %v", o, err)
		}
		pend(t, h, cwd, c) // asked again
	})
	t.Run("approve session is bound to the exact call and the session", func(t *testing.T) {
		store := NewMemoryStore()
		h, _, cwd := newHook(t, "", store, nil)
		c := bash("r1", "git push origin main")
		if _, err := h.Resume(ctx, pend(t, h, cwd, c), c, cwd, Response{Kind: Approve, Scope: ScopeSession}); err != nil {
			t.Fatal(err)
		}
		b, _ := h.Process(ctx, []ToolCall{bash("r2", "git push origin main"), bash("r3", "git push origin dev")}, cwd)
		if d := cmp.Diff(map[string]Action{"r2": Run, "r3": Wait}, actions(b)); d != "" {
			t.Errorf("same call runs, another command does not (-want +got):\n%s", d)
		}
		b, _ = h.Process(ctx, []ToolCall{bash("r4", "git push origin main")}, t.TempDir())
		if b.Outcomes[0].Action != Wait {
			t.Error("a session approval covered another directory")
		}
		h2 := NewHook(h.ev, &HookOptions{Store: store, Session: "s2"})
		b, _ = h2.Process(ctx, []ToolCall{bash("r5", "git push origin main")}, cwd)
		if b.Outcomes[0].Action != Wait {
			t.Error("a session approval covered another session")
		}
	})
	t.Run("approve workspace covers other sessions", func(t *testing.T) {
		store := NewMemoryStore()
		h, _, cwd := newHook(t, "", store, nil)
		c := bash("r1", "git push origin main")
		if _, err := h.Resume(ctx, pend(t, h, cwd, c), c, cwd, Response{Kind: Approve, Scope: ScopeWorkspace}); err != nil {
			t.Fatal(err)
		}
		h2 := NewHook(h.ev, &HookOptions{Store: store, Session: "s2"})
		b, _ := h2.Process(ctx, []ToolCall{bash("r5", "git push origin main")}, cwd)
		if b.Outcomes[0].Action != Run {
			t.Error("a workspace approval did not cover another session")
		}
	})
	t.Run("approve as rule", func(t *testing.T) {
		h, _, cwd := newHook(t, "", nil, nil)
		c := bash("r1", "git push origin main")
		id := pend(t, h, cwd, c)
		if _, err := h.Resume(ctx, id, c, cwd, Response{Kind: Approve, Scope: ScopeRule, Rule: "allow bash: npm test"}); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("a rule not covering the call: err = %v", err)
		}
		if _, err := h.Resume(ctx, id, c, cwd, Response{Kind: Approve, Scope: ScopeRule, Rule: "allow bash: git push"}); err != nil {
			t.Fatal(err)
		}
		b, _ := h.Process(ctx, []ToolCall{bash("r2", "git push origin dev"), bash("r3", "git push && rm -rf ~"), bash("r4", "git pull")}, cwd)
		if d := cmp.Diff(map[string]Action{"r2": Run, "r3": Result, "r4": Wait}, actions(b)); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
	})
	t.Run("kind and scope must be allowed", func(t *testing.T) {
		h, _, cwd := newHook(t, "", nil, nil)
		c := bash("r1", "git push && git pull") // compound: no rule can be proposed
		id := pend(t, h, cwd, c)
		if _, err := h.Resume(ctx, id, c, cwd, Response{Kind: Approve, Scope: ScopeRule, Rule: "allow bash: git"}); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("err = %v, want ErrNotAllowed", err)
		}
		if _, err := h.Resume(ctx, id, c, cwd, Response{Kind: "maybe"}); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("err = %v, want ErrNotAllowed", err)
		}
	})
}

type approverFunc func(Request) Response

func (f approverFunc) Decide(ctx context.Context, r Request) (Response, error) { return f(r), nil }

func TestRemembered(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		resp    Response
		advance time.Duration
		runs    int // how many later identical calls run before asking again
	}{
		{"uses", Response{Kind: Approve, Scope: ScopeWorkspace, MaxUses: 2}, 0, 2},
		{"ttl", Response{Kind: Approve, Scope: ScopeSession, TTL: time.Hour}, 0, 5},
		{"ttl expired", Response{Kind: Approve, Scope: ScopeSession, TTL: time.Hour}, time.Hour, 0},
		{"rule uses", Response{Kind: Approve, Scope: ScopeRule, Rule: "allow bash: git push", MaxUses: 3}, 0, 3},
		{"rule ttl expired", Response{Kind: Approve, Scope: ScopeRule, Rule: "allow bash: git push", TTL: time.Minute}, 2 * time.Minute, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, store := range []Store{NewMemoryStore(), mustFileStore(t)} {
				h, clk, cwd := newHook(t, "", store, nil)
				c := bash("x", "git push origin main")
				b, _ := h.Process(ctx, []ToolCall{c}, cwd)
				if _, err := h.Resume(ctx, b.Pending[0].ID, c, cwd, tt.resp); err != nil {
					t.Fatal(err)
				}
				clk.t = clk.t.Add(tt.advance)
				runs := 0
				for i := 0; i < 5; i++ {
					b, err := h.Process(ctx, []ToolCall{c}, cwd)
					if err != nil {
						t.Fatal(err)
					}
					if b.Outcomes[0].Action != Run {
						break
					}
					runs++
				}
				if runs != tt.runs {
					t.Errorf("%T: %d runs, want %d", store, runs, tt.runs)
				}
			}
		})
	}
}

func mustFileStore(t *testing.T) *FileStore {
	t.Helper()
	s, err := OpenFileStore(testPaths(t), &FileStoreOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestResumeExpired(t *testing.T) {
	h, clk, cwd := newHook(t, "", nil, nil)
	c := bash("x", "git push")
	b, _ := h.Process(context.Background(), []ToolCall{c}, cwd)
	clk.t = clk.t.Add(25 * time.Hour)
	if _, err := h.Resume(context.Background(), b.Pending[0].ID, c, cwd, Response{Kind: Approve}); !errors.Is(err, ErrExpired) {
		t.Errorf("err = %v, want ErrExpired", err)
	}
}

func TestAuditOfHook(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEvaluator(nil)
	h := NewHook(e, &HookOptions{Audit: log, Approver: approverFunc(func(Request) Response { return Response{Kind: Reject, Message: "no", By: "alice"} })})
	if _, err := h.Process(context.Background(), []ToolCall{bash("1", "ls"), bash("2", "git push")}, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	log.Close()
	data, _ := os.ReadFile(path)
	f, _ := os.Open(path)
	defer f.Close()
	sum, err := VerifyAudit(f)
	if err != nil || sum.Records != 4 {
		t.Fatalf("%d records, %v; want 4 (2 evaluations, 2 decisions)\n%s", sum.Records, err, data)
	}
	if !strings.Contains(string(data), `"by":"alice"`) || !strings.Contains(string(data), `"decision":"reject"`) || !strings.Contains(string(data), `"verdicts":["shell: low`) {
		t.Errorf("audit lacks who/what/verdicts:\n%s", data)
	}
}
