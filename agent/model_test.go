package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/agent"
)

func mustToolUse(t *testing.T, id, name string, input any) agent.Block {
	t.Helper()
	b, err := agent.ToolUse(id, name, input)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWireFormat checks that the types marshal to the Anthropic Messages
// API's JSON, field by field, and back.
func TestWireFormat(t *testing.T) {
	req := agent.Request{
		System: "be good",
		Messages: []agent.Message{
			agent.UserText("fix it"),
			{Role: agent.Assistant, Content: []agent.Block{agent.Text("looking"), mustToolUse(t, "toolu_1", "read_file", map[string]string{"path": "a.go"})}},
			{Role: agent.User, Content: []agent.Block{agent.ToolResult("toolu_1", agent.Result{Content: "no such file", IsError: true})}},
		},
		Tools:     []agent.ToolDef{{Name: "read_file", Description: "read", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens: 1024,
	}
	got, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"system":"be good","messages":[` +
		`{"role":"user","content":[{"type":"text","text":"fix it"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"looking"},{"type":"tool_use","id":"toolu_1","name":"read_file","input":{"path":"a.go"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"no such file","is_error":true}]}],` +
		`"tools":[{"name":"read_file","description":"read","input_schema":{"type":"object"}}],"max_tokens":1024}`
	if string(got) != want {
		t.Errorf("request JSON:\n got %s\nwant %s", got, want)
	}
	// A response as the API sends it.
	wire := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_2","name":"execute_bash","input":{"command":"go test ./..."}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":34}}`
	var resp agent.Response
	if err := json.Unmarshal([]byte(wire), &resp); err != nil {
		t.Fatal(err)
	}
	wantResp := agent.Response{ID: "msg_1", Model: "claude-x", StopReason: agent.ToolUseStop, Usage: agent.Usage{InputTokens: 12, OutputTokens: 34},
		Content: []agent.Block{agent.Text("ok"), {Type: agent.ToolUseBlock, ID: "toolu_2", Name: "execute_bash", Input: json.RawMessage(`{"command":"go test ./..."}`)}}}
	if diff := cmp.Diff(wantResp, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	if uses := resp.Message().ToolUses(); len(uses) != 1 || uses[0].Name != "execute_bash" || resp.Message().TextContent() != "ok" {
		t.Errorf("Message() = %+v", resp.Message())
	}
}

func TestRequestValidate(t *testing.T) {
	use := mustToolUse(t, "u1", "read_file", map[string]string{"path": "x"})
	result := agent.ToolResult("u1", agent.Result{Content: "x"})
	asst := func(b ...agent.Block) agent.Message { return agent.Message{Role: agent.Assistant, Content: b} }
	user := func(b ...agent.Block) agent.Message { return agent.Message{Role: agent.User, Content: b} }
	for _, tc := range []struct {
		name string
		msgs []agent.Message
		want string // "" valid
	}{
		{"one user message", []agent.Message{agent.UserText("hi")}, ""},
		{"tool round", []agent.Message{agent.UserText("hi"), asst(use), user(result)}, ""},
		{"pending tool use at the end", []agent.Message{agent.UserText("hi"), asst(use)}, ""},
		{"empty", nil, "no messages"},
		{"starts with assistant", []agent.Message{asst(agent.Text("x"))}, `message 0 has role "assistant", want "user"`},
		{"two users", []agent.Message{agent.UserText("a"), agent.UserText("b")}, `message 1 has role "user", want "assistant"`},
		{"tool use from the user", []agent.Message{user(use)}, "tool_use in a user message"},
		{"unanswered tool use", []agent.Message{agent.UserText("hi"), asst(use), agent.UserText("and?")}, `tool_use "u1" (read_file) has no tool_result`},
		{"result for nothing", []agent.Message{agent.UserText("hi"), asst(agent.Text("x")), user(result)}, `tool_result for "u1" answers no tool_use`},
		{"bad input", []agent.Message{agent.UserText("hi"), asst(agent.Block{Type: agent.ToolUseBlock, ID: "u", Name: "n", Input: json.RawMessage("{")})}, "needs an id, a name and a JSON object as input"},
		{"unknown block", []agent.Message{user(agent.Block{Type: "image"})}, `unknown block type "image"`},
	} {
		err := (&agent.Request{Messages: tc.msgs}).Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: Validate = %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, bad := range []any{[]byte("{"), []int{1}, "text", json.RawMessage("null")} {
		if _, err := agent.ToolUse("u", "n", bad); err == nil {
			t.Errorf("ToolUse took %v as input", bad)
		}
	}
	if b, err := agent.ToolUse("u", "n", nil); err != nil || string(b.Input) != "{}" {
		t.Errorf("ToolUse(nil) = %s, %v", b.Input, err)
	}
}

func TestScriptedModel(t *testing.T) {
	ctx := context.Background()
	isErr := true
	m := agent.NewScriptedModel(
		agent.Step{
			Expect:   agent.Expect{Tools: []string{"read_file"}, NoTools: []string{"execute_bash"}, SystemContains: "worker", LastText: "fix"},
			Response: agent.Response{Content: []agent.Block{mustToolUse(t, "u1", "read_file", map[string]string{"path": "a.go"})}},
		},
		agent.Step{
			Expect:   agent.Expect{ToolResult: "does not exist", ToolError: &isErr},
			Response: agent.Response{Content: []agent.Block{agent.Text("done")}, Usage: agent.Usage{InputTokens: 5, OutputTokens: 1}},
		},
	)
	req := &agent.Request{System: "you are a worker", Messages: []agent.Message{agent.UserText("please fix a.go")}, Tools: []agent.ToolDef{{Name: "read_file"}}}
	resp, err := m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != agent.ToolUseStop || resp.Model != "scripted" {
		t.Errorf("first response = %+v", resp)
	}
	req.Messages = append(req.Messages, resp.Message(), agent.Message{Role: agent.User, Content: []agent.Block{agent.ToolResult("u1", agent.Result{Content: `"a.go" does not exist`, IsError: true})}})
	resp, err = m.Generate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if reqs := m.Requests(); len(reqs) != 2 || len(reqs[0].Messages) != 1 || len(reqs[1].Messages) != 3 {
		t.Errorf("Requests() has %d requests; the first has %d messages", len(reqs), len(reqs[0].Messages))
	}
	if resp.StopReason != agent.EndTurn || resp.Message().TextContent() != "done" || m.Remaining() != 0 {
		t.Errorf("second response = %+v, remaining %d", resp, m.Remaining())
	}
	if _, err := m.Generate(ctx, req); !errors.Is(err, agent.ErrScriptExhausted) || !strings.Contains(err.Error(), "request 3: the script has 2 steps") {
		t.Errorf("exhausted: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := agent.NewScriptedModel(agent.Step{}).Generate(cctx, req); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestScriptedModelMismatch(t *testing.T) {
	no := false
	base := &agent.Request{System: "sys", Messages: []agent.Message{agent.UserText("hello")}, Tools: []agent.ToolDef{{Name: "read_file"}, {Name: "execute_bash"}}}
	withResult := &agent.Request{Messages: []agent.Message{agent.UserText("x"),
		{Role: agent.Assistant, Content: []agent.Block{mustToolUse(t, "u", "execute_bash", map[string]string{"command": "ls"})}},
		{Role: agent.User, Content: []agent.Block{agent.ToolResult("u", agent.Result{Content: "command refused: no", IsError: true})}}}}
	for _, tc := range []struct {
		expect agent.Expect
		req    *agent.Request
		want   string
	}{
		{agent.Expect{Tools: []string{"write_file"}}, base, `step 1: tool "write_file" is not offered`},
		{agent.Expect{NoTools: []string{"execute_bash"}}, base, `tool "execute_bash" is offered but should not be`},
		{agent.Expect{SystemContains: "orchestrator"}, base, `system prompt does not contain "orchestrator"`},
		{agent.Expect{LastText: "bye"}, base, `last message's text "hello" does not contain "bye"`},
		{agent.Expect{ToolResult: "refused"}, base, `last message has no tool_result containing "refused"`},
		{agent.Expect{ToolResult: "refused", ToolError: &no}, withResult, `with is_error false`},
		{agent.Expect{Check: func(r *agent.Request) error { return errors.New("custom check failed") }}, base, "custom check failed"},
		{agent.Expect{}, &agent.Request{Messages: []agent.Message{{Role: agent.Assistant}}}, "malformed request"},
	} {
		m := agent.NewScriptedModel(agent.Step{Expect: tc.expect, Response: agent.Response{Content: []agent.Block{agent.Text("x")}}})
		_, err := m.Generate(context.Background(), tc.req)
		if !errors.Is(err, agent.ErrUnexpectedRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Expect %+v: %v, want ErrUnexpectedRequest containing %q", tc.expect, err, tc.want)
		}
	}
	// The same expectations hold on a matching request.
	m := agent.NewScriptedModel(agent.Step{Expect: agent.Expect{ToolResult: "refused", ToolError: ptr(true)}})
	if _, err := m.Generate(context.Background(), withResult); err != nil {
		t.Errorf("matching request: %v", err)
	}
}
