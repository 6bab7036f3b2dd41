// Command quickstart is paddock's main demo: an orchestrator hands a bug
// fix to a worker agent, which works in a sandbox, asks for approval of a
// risky command, and hands back a proposal that is reviewed and applied to
// the project, whose tests then pass.
//
// It needs no Docker, no network and no API key: the worker's model is
// scripted. The sandbox is bubblewrap when it can run here, otherwise the
// plain directory backend (which does not isolate; the demo says which).
// The approval is answered from the script, or on the terminal with
// -interactive.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -interactive
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/approval"
	"github.com/paddockdev/paddock/examples/internal/demo"
	"github.com/paddockdev/paddock/proposal"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

func main() {
	interactive := flag.Bool("interactive", false, "answer the approval on the terminal")
	keep := flag.Bool("keep", false, "keep the temporary project and state root")
	backend := flag.String("backend", "auto", "sandbox backend: auto (bwrap when it can run), bwrap or dir")
	flag.Parse()
	var approver approval.Approver = scriptedApprover{}
	if *interactive {
		approver = approval.NewTerminalApprover(os.Stdin, os.Stdout, "you")
	}
	if err := run(context.Background(), os.Stdout, approver, *backend, *keep); err != nil {
		log.Fatal(err)
	}
}

// The worker's rules: its tests and edits in its sandbox run, rm asks.
const workerRules = `
allow execute_bash: sh test.sh
allow edit_file: path **
allow write_file: path **
ask   execute_bash: rm
example ask execute_bash: rm -rf .cache
`

func run(ctx context.Context, w io.Writer, approver approval.Approver, backendName string, keep bool) error {
	world, err := demo.NewWorld("paddock-quickstart-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(w, "keeping %s\n", world.Dir)
	} else {
		defer world.Close()
	}
	paths, store := world.Paths, world.Store
	orch, err := store.Open(ctx, "orchestrator", &workspace.OpenOptions{AgentName: "orchestrator"})
	if err != nil {
		return err
	}
	defer orch.Close()

	backend, why, err := demo.ChooseBackend(ctx, backendName)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "project %s: `sh test.sh` fails; the orchestrator hands the fix to a worker\n", filepath.Base(paths.ProjectRoot))
	fmt.Fprintf(w, "sandbox: %s\n", why)

	ev := approval.NewEvaluator(nil)
	if err := ev.Load(approval.LayerProject, "worker.rules", []byte(workerRules)); err != nil {
		return err
	}
	hook := approval.NewHook(ev, &approval.HookOptions{Approver: approver, Session: "quickstart"})
	model, err := workerScript()
	if err != nil {
		return err
	}
	res, err := agent.Orchestrate(ctx, agent.RunConfig{
		Paths:         paths,
		Store:         store,
		Orchestrator:  orch,
		RunID:         "run-1",
		WorkerID:      "fixer",
		Files:         sandbox.Selection{"calc.sh", "test.sh"},
		Task:          "Make `sh test.sh` pass.",
		DoD:           "`sh test.sh` passes in the project.",
		Model:         model,
		Backend:       backend,
		Hook:          hook,
		ApprovalTools: []string{"execute_bash"},
		TestCommand:   "sh test.sh",
		Review: func(ctx context.Context, r *proposal.Report) (bool, string, error) {
			fmt.Fprintf(w, "orchestrator reviews proposal.json + changes.patch:\n")
			for _, f := range r.Proposal.ChangedFiles {
				fmt.Fprintf(w, "  %s %s (+%d -%d)\n", f.Status, f.Path, f.LinesAdded, f.LinesDeleted)
			}
			for _, line := range strings.Split(strings.TrimRight(string(r.Patch), "\n"), "\n") {
				if strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-") {
					fmt.Fprintf(w, "  | %s\n", line)
				}
			}
			return true, "", nil
		},
		Observe: func(e agent.RunEvent) { demo.Transcript(w, e) },
	})
	if err != nil {
		return err
	}
	if res.Tests == nil || !res.Tests.Success() {
		return fmt.Errorf("the project's tests did not pass after the run")
	}
	fmt.Fprintf(w, "project: %s", res.Tests.Stdout)
	fmt.Fprintf(w, "state root (%s):\n", "the project holds no runtime state")
	return demo.Tree(w, paths.StateRoot)
}

// workerScript is the worker model's script. Each step checks what the
// worker was told before it answers, so the demo cannot pass by accident.
func workerScript() (*agent.ScriptedModel, error) {
	var errs []error
	use := func(id, tool string, input any) agent.Block {
		b, err := agent.ToolUse(id, tool, input)
		if err != nil {
			errs = append(errs, err)
		}
		return b
	}
	isErr, notErr := true, false
	steps := []agent.Step{
		{Expect: agent.Expect{Tools: []string{"execute_bash", "edit_file"}, LastText: "test.sh"},
			Response: toolStep(agent.Text("Running the tests first."), use("t1", "execute_bash", map[string]string{"command": "sh test.sh"}))},
		{Expect: agent.Expect{ToolResult: "FAIL: 2 + 3 = -1", ToolError: &isErr},
			Response: toolStep(agent.Text("add() subtracts. Fixing calc.sh."), use("t2", "edit_file", map[string]string{"path": "calc.sh", "old_string": "$(($1 - $2))", "new_string": "$(($1 + $2))"}))},
		{Expect: agent.Expect{ToolError: &notErr},
			Response: toolStep(agent.Text("Clearing the cache and re-running the tests."), use("t3", "execute_bash", map[string]string{"command": "rm -rf .cache && sh test.sh"}))},
		{Expect: agent.Expect{ToolResult: "rm", ToolError: &isErr},
			Response: toolStep(agent.Text("Understood, no deleting. Running only the tests."), use("t4", "execute_bash", map[string]string{"command": "sh test.sh"}))},
		{Expect: agent.Expect{ToolResult: "ok: 2 + 3 = 5", ToolError: &notErr},
			Response: agent.Response{Content: []agent.Block{agent.Text("Fixed: add() subtracted instead of adding. `sh test.sh` passes.")}, StopReason: agent.EndTurn}},
	}
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return agent.NewScriptedModel(steps...), nil
}

func toolStep(blocks ...agent.Block) agent.Response {
	return agent.Response{Content: blocks, StopReason: agent.ToolUseStop}
}

// scriptedApprover answers the demo's approval: it rejects deleting, with a
// reason the worker sees as the call's result.
type scriptedApprover struct{}

func (scriptedApprover) Decide(ctx context.Context, req approval.Request) (approval.Response, error) {
	return approval.Response{Kind: approval.Reject, Message: "Do not rm anything; just run the tests.", By: "script"}, nil
}
