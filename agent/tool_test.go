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

var errBroken = errors.New("sandbox is broken")

// echo is a tool whose behaviour the input picks.
func echo(name string) agent.Tool {
	return agent.NewTool(name, "echo the text", agent.Object(map[string]*agent.Schema{
		"text": agent.String("what to say", true),
		"fail": {Type: "string", Enum: []any{"model", "host"}},
	}, "text"), func(ctx context.Context, input json.RawMessage) (agent.Result, error) {
		var in struct{ Text, Fail string }
		if err := json.Unmarshal(input, &in); err != nil {
			return agent.Result{}, err
		}
		switch in.Fail {
		case "model":
			return agent.Result{}, &agent.ToolError{Tool: name, Message: "say something else", Err: errors.New("internal detail")}
		case "host":
			return agent.Result{}, errBroken
		}
		return agent.Result{Content: in.Text}, nil
	})
}

func TestNewSetRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tools []agent.Tool
		want  string
	}{
		{"duplicate", []agent.Tool{echo("a"), echo("a")}, `two tools are named "a"`},
		{"bad name", []agent.Tool{echo("read file")}, "must be 1-64 letters"},
		{"empty name", []agent.Tool{echo("")}, "must be 1-64 letters"},
		{"nil", []agent.Tool{nil}, "tool 0 is nil"},
		{"non-object schema", []agent.Tool{agent.NewTool("s", "", agent.String("x", false), nil)}, "must be an object schema"},
		{"required not a property", []agent.Tool{agent.NewTool("s", "", agent.Object(nil, "x"), nil)}, `required field "x" is not a property`},
		{"unknown type", []agent.Tool{agent.NewTool("s", "", agent.Object(map[string]*agent.Schema{"x": {Type: "int"}}), nil)}, `schema x: unknown type "int"`},
	} {
		_, err := agent.NewSet(tc.tools...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewSet = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestSetCall(t *testing.T) {
	set, err := agent.NewSet(echo("echo"), echo("say"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, tool, input string
		want              agent.Result
	}{
		{"ok", "echo", `{"text":"hi"}`, agent.Result{Content: "hi"}},
		{"unknown tool", "shout", `{"text":"hi"}`, agent.Result{IsError: true, Content: `there is no tool named "shout"; the tools are echo, say`}},
		{"missing field", "echo", `{}`, agent.Result{IsError: true, Content: "invalid input for echo: text: is required"}},
		{"empty input is {}", "echo", ``, agent.Result{IsError: true, Content: "invalid input for echo: text: is required"}},
		{"extra field", "echo", `{"text":"a","loud":true}`, agent.Result{IsError: true, Content: "invalid input for echo: loud: is not a known field; the fields are fail, text"}},
		{"tool error is for the model", "echo", `{"text":"a","fail":"model"}`, agent.Result{IsError: true, Content: "say something else"}},
	} {
		got, err := set.Call(ctx, tc.tool, json.RawMessage(tc.input))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if _, err := set.Call(ctx, "echo", json.RawMessage(`{"text":"a","fail":"host"}`)); !errors.Is(err, errBroken) {
		t.Errorf("host error: %v, want errBroken", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := set.Call(cctx, "echo", json.RawMessage(`{"text":"a"}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestSetOnlyAndFor(t *testing.T) {
	set, err := agent.NewSet(echo("a"), echo("b"), echo("c"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := set.Only("c", "a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "c"}, sub.Names()); diff != "" {
		t.Errorf("Only (-want +got):\n%s", diff)
	}
	if _, err := set.Only("a", "z"); err == nil || !strings.Contains(err.Error(), "has no z") {
		t.Errorf("Only(z) = %v", err)
	}
	all, err := set.For(agent.Profile{ID: "p", Role: agent.Worker})
	if err != nil || all.Len() != 3 {
		t.Errorf("For(nil tools) = %v, %v", all, err)
	}
	none, err := set.For(agent.Profile{ID: "p", Role: agent.Worker, Tools: []string{}})
	if err != nil || none.Len() != 0 {
		t.Errorf("For(no tools) = %v, %v", none, err)
	}
	res, err := none.Call(context.Background(), "a", json.RawMessage(`{"text":"x"}`))
	if err != nil || !res.IsError {
		t.Errorf("a tool outside the profile ran: %+v %v", res, err)
	}
	defs := sub.Defs()
	if len(defs) != 2 || defs[0].Name != "a" || !json.Valid(defs[0].InputSchema) || !strings.Contains(string(defs[0].InputSchema), `"required":["text"]`) {
		t.Errorf("Defs = %+v", defs)
	}
}

// TestToolValidatesOnItsOwn calls a tool's Run directly, without a Set: its
// input is still checked against its schema.
func TestToolValidatesOnItsOwn(t *testing.T) {
	ran := false
	tool := agent.NewTool("t", "", agent.Object(map[string]*agent.Schema{"n": agent.Integer("n", 1, 3)}, "n"),
		func(ctx context.Context, input json.RawMessage) (agent.Result, error) {
			ran = true
			return agent.Result{}, nil
		})
	_, err := tool.Run(context.Background(), json.RawMessage(`{"n":7}`))
	var te *agent.ToolError
	if !errors.As(err, &te) || !errors.Is(err, agent.ErrInvalidInput) || te.Message != "invalid input for t: n: must be at most 3 (got 7)" || ran {
		t.Errorf("Run = %v (ran %v)", err, ran)
	}
	if _, err := tool.Run(context.Background(), json.RawMessage(`{"n":2}`)); err != nil || !ran {
		t.Errorf("valid input: %v (ran %v)", err, ran)
	}
}
