package agent_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/approval"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dirsandbox"
	"github.com/paddockdev/paddock/workspace"
)

// A loop whose model wants to delete a file: the hook puts the call up for
// approval, the turn pauses, and a human's rejection goes back to the model
// as the call's result.
func ExampleLoop() {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "loop-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "work")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("keep me\n"), 0o644)

	paths, _ := workspace.NewPaths(filepath.Join(tmp, "project"), &workspace.PathsOptions{StateRoot: filepath.Join(tmp, "state")})
	store, _ := workspace.NewStore(paths, nil)
	inst, err := store.Open(ctx, "worker", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer inst.Close()
	drv, _ := dirsandbox.New(work, sandbox.Spec{Network: true}, nil)
	tools, _ := agent.StandardTools(sandbox.New(drv, nil), nil)
	ev := approval.NewEvaluator(nil)
	ev.Load(approval.LayerProject, "example.rules", []byte("ask execute_bash: rm\n"))

	del, _ := agent.ToolUse("call-1", "execute_bash", map[string]string{"command": "rm notes.txt"})
	model := agent.NewScriptedModel(
		agent.Step{Response: agent.Response{Content: []agent.Block{del}, StopReason: agent.ToolUseStop}},
		agent.Step{Response: agent.Response{Content: []agent.Block{agent.Text("I'll leave notes.txt alone.")}, StopReason: agent.EndTurn}},
	)
	loop := &agent.Loop{Model: model, Tools: tools, Instance: inst, Hook: approval.NewHook(ev, nil), Cwd: work}

	res, err := loop.Run(ctx, "Tidy up the work directory.")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Pending[0].Tool, res.Pending[0].Reason)
	res, err = loop.Resume(ctx, map[string]approval.Response{
		res.Pending[0].ID: {Kind: approval.Reject, Message: "notes.txt is mine"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Text)
	_, err = os.Stat(filepath.Join(work, "notes.txt"))
	fmt.Println("notes.txt kept:", err == nil)
	fmt.Println("messages:", len(inst.Messages()))
	// Output:
	// paused execute_bash rule "ask execute_bash: rm"
	// done I'll leave notes.txt alone.
	// notes.txt kept: true
	// messages: 4
}
