package approval

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTerminalApprover(t *testing.T) {
	req := Request{Pending: Pending{Tool: "bash", Input: []byte(`{"command":"git push"}`), Cwd: "/p", Reason: "no rule",
		Allowed: AllResponses, Scopes: []Scope{ScopeOnce, ScopeSession, ScopeWorkspace, ScopeRule}, ProposedRule: "allow bash: git push"}}
	tests := []struct {
		input string
		want  Response
		shown string
	}{
		{"y\n", Response{Kind: Approve, Scope: ScopeOnce, By: "alice"}, ""},
		{"s\n", Response{Kind: Approve, Scope: ScopeSession, By: "alice"}, ""},
		{"always\n", Response{Kind: Approve, Scope: ScopeWorkspace, By: "alice"}, ""},
		{"r\ny\n", Response{Kind: Approve, Scope: ScopeRule, Rule: "allow bash: git push", By: "alice"}, "this rule will be saved:\n  allow bash: git push\n"},
		{"r\nn\ny\n", Response{Kind: Approve, Scope: ScopeOnce, By: "alice"}, "allow bash: git push"},
		{"edit\nnot json\ne\n{\"command\":\"git push -n\"}\n", Response{Kind: Edit, Input: []byte(`{"command":"git push -n"}`), By: "alice"}, "not valid JSON"},
		{"n\nwait for CI\n", Response{Kind: Reject, Message: "wait for CI", By: "alice"}, "reason"},
		{"m\nalready pushed\n", Response{Kind: Respond, Message: "already pushed", By: "alice"}, ""},
		{"what\nq\n", Response{Kind: Abort, By: "alice"}, "answer one of"},
	}
	for _, tt := range tests {
		var out strings.Builder
		a := NewTerminalApprover(strings.NewReader(tt.input), &out, "alice")
		got, err := a.Decide(context.Background(), req)
		if err != nil {
			t.Fatalf("%q: %v", tt.input, err)
		}
		if got.Kind != tt.want.Kind || got.Scope != tt.want.Scope || got.Rule != tt.want.Rule || string(got.Input) != string(tt.want.Input) ||
			got.Message != tt.want.Message || got.By != tt.want.By {
			t.Errorf("%q: %+v, want %+v", tt.input, got, tt.want)
		}
		if !strings.Contains(out.String(), tt.shown) || !strings.Contains(out.String(), `{"command":"git push"}`) {
			t.Errorf("%q: output lacks %q:\n%s", tt.input, tt.shown, out.String())
		}
	}
	a := NewTerminalApprover(strings.NewReader(""), &strings.Builder{}, "")
	if _, err := a.Decide(context.Background(), req); err == nil {
		t.Error("closed terminal gave an answer")
	}
}

func TestChannelApprover(t *testing.T) {
	a, ch := NewChannelApprover()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r := <-ch
		r.Reply <- Response{Kind: Reject, Message: "not " + r.Tool}
	}()
	h, _, cwd := newHook(t, "", nil, a)
	b, err := h.Process(context.Background(), []ToolCall{bash("1", "git push")}, cwd)
	<-done
	if err != nil || b.Outcomes[0].Action != Result || !strings.Contains(b.Outcomes[0].Result, "not bash") {
		t.Errorf("%+v %v", b, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := a.Decide(ctx, Request{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("nobody listening: err = %v", err)
	}
}
