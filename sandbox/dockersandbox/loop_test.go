package dockersandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/approval"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

// TestAgentLoop runs the agent's reference loop with a scripted model
// against a Docker sandbox: the tools write, run and read in the
// container, and a risky command waits for a decision.
func TestAgentLoop(t *testing.T) {
	s := harness{}.New(t, sandbox.Spec{})
	work := s.WorkDir()
	paths, err := workspace.NewPaths(t.TempDir(), &workspace.PathsOptions{StateRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	store, err := workspace.NewStore(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := store.Open(bg, "worker", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	tools, err := agent.StandardTools(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := approval.NewEvaluator(nil)
	if err := ev.Load(approval.LayerProject, "t.rules", []byte("allow write_file: path **\nallow execute_bash: sh run.sh\nask execute_bash: rm\n")); err != nil {
		t.Fatal(err)
	}
	use := func(id, tool string, in any) agent.Block {
		b, err := agent.ToolUse(id, tool, in)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	notErr := false
	model := agent.NewScriptedModel(
		agent.Step{Response: agent.Response{StopReason: agent.ToolUseStop, Content: []agent.Block{
			use("1", "write_file", map[string]string{"path": "run.sh", "content": "echo in $(hostname) as $(id -u)\n"}),
			use("2", "execute_bash", map[string]string{"command": "sh run.sh"})}}},
		agent.Step{Expect: agent.Expect{ToolResult: "in ", ToolError: &notErr}, Response: agent.Response{StopReason: agent.ToolUseStop, Content: []agent.Block{
			use("3", "execute_bash", map[string]string{"command": "rm run.sh"})}}},
		agent.Step{Expect: agent.Expect{ToolResult: "no"}, Response: agent.Response{StopReason: agent.EndTurn, Content: []agent.Block{agent.Text("ok")}}},
	)
	loop := &agent.Loop{Model: model, Tools: tools, Instance: inst, Hook: approval.NewHook(ev, nil), Cwd: work}
	res, err := loop.Run(bg, "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusPaused || len(res.Pending) != 1 {
		t.Fatalf("%+v", res)
	}
	res, err = loop.Resume(bg, map[string]approval.Response{res.Pending[0].ID: {Kind: approval.Reject, Message: "no"}})
	if err != nil || res.Status != agent.StatusDone {
		t.Fatalf("%+v %v", res, err)
	}
	b, err := os.ReadFile(filepath.Join(work, "run.sh"))
	if err != nil || !strings.HasPrefix(string(b), "echo in") {
		t.Errorf("run.sh after the rejected rm: %q, %v", b, err)
	}
	if n := len(inst.Messages()); n != 6 {
		t.Errorf("%d messages committed, want 6", n)
	}
}
