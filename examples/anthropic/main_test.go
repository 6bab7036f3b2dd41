package main

import (
	"context"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/agent"
)

// TestFlowWithAScriptedModel runs the example's flow with a scripted model
// in place of the API (the agent package tests the API adapter against
// the real wire format).
func TestFlowWithAScriptedModel(t *testing.T) {
	use := func(id, tool string, input any) agent.Block {
		b, err := agent.ToolUse(id, tool, input)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	model := agent.NewScriptedModel(
		agent.Step{Expect: agent.Expect{LastText: "calc.sh"}, Response: agent.Response{StopReason: agent.ToolUseStop, Content: []agent.Block{
			use("1", "execute_bash", map[string]string{"command": "cat calc.sh; rm -f test.sh"})}}},
		agent.Step{Expect: agent.Expect{ToolResult: "No human is available"}, Response: agent.Response{StopReason: agent.ToolUseStop, Content: []agent.Block{
			use("2", "edit_file", map[string]string{"path": "calc.sh", "old_string": "$1 - $2", "new_string": "$1 + $2"})}}},
		agent.Step{Response: agent.Response{StopReason: agent.EndTurn, Content: []agent.Block{agent.Text("Fixed.")}}},
	)
	var out strings.Builder
	if err := run(context.Background(), &out, model, rejectAll{}, "dir"); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "project: ok: 2 + 3 = 5") {
		t.Errorf("output:\n%s", out.String())
	}
}
