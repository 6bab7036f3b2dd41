// Command anthropic runs the quickstart's flow with a real model: a worker
// backed by the Anthropic Messages API fixes the demo project's failing
// test in a sandbox, and its proposal is reviewed and applied.
//
// It needs ANTHROPIC_API_KEY; without it, it says so and exits 0. Calls
// that need a human are answered on the terminal with -interactive, and
// rejected otherwise (the model is told why and can carry on).
//
//	ANTHROPIC_API_KEY=… go run ./examples/anthropic [-model name] [-interactive]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/approval"
	"github.com/paddockdev/paddock/examples/internal/demo"
	"github.com/paddockdev/paddock/proposal"
	"github.com/paddockdev/paddock/sandbox"
)

// workerRules let the worker run the tests and edit in its sandbox; every
// other command asks a human.
const workerRules = `
allow execute_bash: sh test.sh
allow edit_file: path **
allow write_file: path **
`

func main() {
	model := flag.String("model", agent.DefaultAnthropicModel, "the Anthropic model")
	interactive := flag.Bool("interactive", false, "answer approvals on the terminal")
	backend := flag.String("backend", "auto", "sandbox backend: auto, bwrap or dir")
	flag.Parse()
	if os.Getenv("ANTHROPIC_API_KEY") == "" {
		fmt.Println("ANTHROPIC_API_KEY is not set: this example needs the Anthropic API.")
		fmt.Println("Set it and run again, or run the offline demo: go run ./examples/quickstart")
		return
	}
	var approver approval.Approver = rejectAll{}
	if *interactive {
		approver = approval.NewTerminalApprover(os.Stdin, os.Stdout, "you")
	}
	m := agent.NewAnthropicModel(&agent.AnthropicOptions{Model: *model})
	if err := run(context.Background(), os.Stdout, m, approver, *backend); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, w io.Writer, model agent.Model, approver approval.Approver, backendName string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	world, err := demo.NewWorld("paddock-anthropic-")
	if err != nil {
		return err
	}
	defer world.Close()
	paths, store := world.Paths, world.Store
	backend, why, err := demo.ChooseBackend(ctx, backendName)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sandbox: %s\n", why)
	ev := approval.NewEvaluator(nil)
	if err := ev.Load(approval.LayerProject, "worker.rules", []byte(workerRules)); err != nil {
		return err
	}
	res, err := agent.Orchestrate(ctx, agent.RunConfig{
		Paths: paths, Store: store,
		Files:         sandbox.Selection{"calc.sh", "test.sh"},
		Task:          "`sh test.sh` fails. Find the bug in calc.sh and fix it so that `sh test.sh` passes. Change nothing else.",
		DoD:           "`sh test.sh` passes in the project.",
		Model:         model,
		Backend:       backend,
		Hook:          approval.NewHook(ev, &approval.HookOptions{Approver: approver}),
		ApprovalTools: []string{"execute_bash"},
		TestCommand:   "sh test.sh",
		MaxSteps:      20,
		Review: func(ctx context.Context, r *proposal.Report) (bool, string, error) {
			fmt.Fprintf(w, "proposal:\n%s", r.Patch)
			return true, "", nil
		},
		Observe: func(e agent.RunEvent) { demo.Transcript(w, e) },
	})
	if err != nil {
		return err
	}
	if res.Tests == nil || !res.Tests.Success() {
		return fmt.Errorf("the project's tests do not pass after the run (worker: %s)", res.Worker.Status)
	}
	fmt.Fprintf(w, "project: %s", res.Tests.Stdout)
	return nil
}

// rejectAll answers every approval with a rejection the model can read.
type rejectAll struct{}

func (rejectAll) Decide(ctx context.Context, req approval.Request) (approval.Response, error) {
	return approval.Response{Kind: approval.Reject, Message: "No human is available to approve this; use only `sh test.sh` and the file tools.", By: "example"}, nil
}
