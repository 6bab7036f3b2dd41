package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/paddockdev/paddock/approval"
	"github.com/paddockdev/paddock/proposal"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

// Backend makes the sandbox a worker (or the project's tests) run in, over
// the host directory dir, and says which kind it is ("bwrap", "dir",
// "docker"), for the worker's prompt and the transcript.
type Backend func(ctx context.Context, dir string) (sb *sandbox.Sandbox, kind string, err error)

// RunConfig is one orchestrated run: the orchestrator flow of seed 000,
// step 7.
type RunConfig struct {
	// Paths are the workspace's roots; Store opens the worker's
	// instance ("run:<RunID>:<WorkerID>"). Both required.
	Paths workspace.Paths
	Store *workspace.Store
	// Orchestrator, if set, is the orchestrator's instance: the run's
	// progress goes to its runtime events.
	Orchestrator *workspace.Instance
	// RunID names the run; empty means a new ULID. WorkerID names the
	// worker; empty means "worker".
	RunID    string
	WorkerID string
	// Files are what the worker gets (see sandbox.Prepare); required.
	Files   sandbox.Selection
	Prepare *sandbox.PrepareOptions
	// Task is what the worker is asked to do; required.
	Task string
	// DoD is the definition of done, for the HANDOFF.
	DoD string
	// Model is the worker's model; required.
	Model Model
	// Backend makes the worker's sandbox and the one the project's tests
	// run in; required.
	Backend Backend
	// Tools are the worker's tool options (a CommandGuard, …).
	Tools *ToolOptions
	// Hook decides the worker's tool calls; nil runs them all. Give it an
	// Approver to answer calls that need a human during the run: without
	// one, a call that needs a human ends the run with StatusPaused.
	Hook *approval.Hook
	// ApprovalTools are named in the worker's prompt as needing approval.
	ApprovalTools []string
	// TestCommand is the project's test command, run in the worker's
	// sandbox after the worker (its output becomes the proposal's
	// test.log) and in the project after the apply. Empty: no tests.
	TestCommand string
	// Review decides whether to apply the reviewed proposal; nil approves.
	// A false answer rejects the proposal with the reason.
	Review func(ctx context.Context, r *proposal.Report) (approve bool, reason string, err error)
	// Apply are the options of the apply (policy, durability); nil means
	// the defaults.
	Apply *proposal.ApplyOptions
	// MaxSteps bounds the worker's model calls.
	MaxSteps int
	// Observe, if set, gets the run's progress, in order.
	Observe func(RunEvent)
}

// RunEvent is one step of an orchestrated run, for a transcript.
type RunEvent struct {
	// Stage is "prepared", "worker", "handoff", "proposal", "review",
	// "applied", "rejected", "tests" or "done".
	Stage string
	// Text says what happened, in one line.
	Text string
	// Loop is set for Stage "worker": the worker loop's own event.
	Loop *LoopEvent
}

// RunResult is what an orchestrated run did.
type RunResult struct {
	RunID string
	// Sandbox is the worker's sandbox; SandboxKind its backend.
	Sandbox     sandbox.Dirs
	SandboxKind string
	// Worker is how the worker's last turn ended. With StatusPaused the
	// run stopped there: resume the worker's instance (a Loop over it)
	// and call the rest yourself.
	Worker *TurnResult
	// Handoff is the worker's HANDOFF, as the orchestrator received it.
	Handoff *proposal.Handoff
	// Proposal is the worker's proposal; nil when it changed nothing.
	Proposal *proposal.Proposal
	// Applied is the apply's result; nil when the proposal was rejected
	// or empty. Rejected holds the reason of a rejection.
	Applied  *proposal.ApplyResult
	Rejected string
	// Tests is the project's test run after the apply.
	Tests *sandbox.ExecResult
}

// Orchestrate runs the orchestrator flow of seed 000: start a run, prepare
// the worker's sandbox from the chosen files, run the worker (its own
// instance, profile, cwd, tools and prompt) until it ends its turn, receive
// its HANDOFF, create and review the proposal, approve or reject it, apply
// it to the project, run the project's tests, and log every step.
//
// An error leaves what was done in place (the sandbox, the worker's
// instance, a proposal); the project is only ever changed by the atomic
// apply.
func Orchestrate(ctx context.Context, cfg RunConfig) (*RunResult, error) {
	switch {
	case cfg.Store == nil, cfg.Model == nil, cfg.Backend == nil:
		return nil, errors.New("agent: Orchestrate needs RunConfig.Store, Model and Backend")
	case len(cfg.Files) == 0:
		return nil, errors.New("agent: Orchestrate needs RunConfig.Files: the files the worker gets")
	case strings.TrimSpace(cfg.Task) == "":
		return nil, errors.New("agent: Orchestrate needs RunConfig.Task")
	}
	if cfg.RunID == "" {
		cfg.RunID = ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader).String()
	}
	if cfg.WorkerID == "" {
		cfg.WorkerID = "worker"
	}
	r := &runner{cfg: cfg, res: &RunResult{RunID: cfg.RunID}}
	return r.res, r.run(ctx)
}

type runner struct {
	cfg RunConfig
	res *RunResult
}

func (r *runner) log(ctx context.Context, stage, format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if r.cfg.Observe != nil {
		r.cfg.Observe(RunEvent{Stage: stage, Text: text})
	}
	if r.cfg.Orchestrator != nil {
		_ = r.cfg.Orchestrator.Emit(ctx, workspace.RuntimeEvent{Type: "run." + stage, Data: map[string]any{"runId": r.cfg.RunID, "text": text}})
	}
}

func (r *runner) run(ctx context.Context) error {
	cfg := r.cfg
	// 1. The worker's sandbox.
	prep, err := sandbox.Prepare(ctx, cfg.Paths, cfg.RunID, cfg.WorkerID, cfg.Files, cfg.Prepare)
	if err != nil {
		return err
	}
	dirs := prep.Dirs()
	r.res.Sandbox = dirs
	sb, kind, err := cfg.Backend(ctx, dirs.Work)
	if err != nil {
		return fmt.Errorf("agent: the worker's sandbox: %w", err)
	}
	defer sb.Close(context.WithoutCancel(ctx))
	r.res.SandboxKind = kind
	r.log(ctx, "prepared", "run %s: %d files in a %s sandbox", cfg.RunID, len(prep.Manifest().Files), kind)

	// 2. The worker: profile, cwd, tools, prompt, instance, loop.
	profile, err := WorkerProfile(cfg.WorkerID, dirs.Root, dirs.Work, nil)
	if err != nil {
		return err
	}
	cwd, err := ResolveCwd(profile, cfg.Paths.ProjectRoot)
	if err != nil {
		return err
	}
	all, err := StandardTools(sb, cfg.Tools)
	if err != nil {
		return err
	}
	tools, err := all.For(profile)
	if err != nil {
		return err
	}
	system, err := Instructions(InstructionsConfig{Profile: profile, Tools: tools, SandboxKind: kind, Cwd: cwd, ApprovalTools: cfg.ApprovalTools})
	if err != nil {
		return err
	}
	inst, err := cfg.Store.Open(ctx, "run:"+cfg.RunID+":"+cfg.WorkerID, &workspace.OpenOptions{AgentName: cfg.WorkerID})
	if err != nil {
		return err
	}
	defer inst.Close()
	loop := &Loop{Model: cfg.Model, Tools: tools, Instance: inst, Hook: cfg.Hook, Cwd: cwd, System: system, MaxSteps: cfg.MaxSteps}
	if cfg.Observe != nil {
		loop.Observe = func(ev LoopEvent) { cfg.Observe(RunEvent{Stage: "worker", Loop: &ev}) }
	}
	turn, err := loop.Run(ctx, cfg.Task)
	r.res.Worker = turn
	if err != nil {
		return fmt.Errorf("agent: the worker: %w", err)
	}
	if turn.Status != StatusDone {
		r.log(ctx, "worker", "the worker stopped: %s", turn.Status)
		return nil
	}

	// 3. Its tests, its proposal, and the HANDOFF.
	var testLog []byte
	if cfg.TestCommand != "" {
		res, err := sb.Exec(ctx, sandbox.ExecRequest{Command: cfg.TestCommand})
		if err != nil {
			return fmt.Errorf("agent: the worker's tests: %w", err)
		}
		testLog = append(append(res.Stdout, res.Stderr...), fmt.Sprintf("\n[%s: %s]\n", cfg.TestCommand, describeExit(res))...)
	}
	p, err := proposal.Create(ctx, prep, &proposal.CreateOptions{Notes: turn.Text, TestLog: testLog, Instance: cfg.Orchestrator})
	if err != nil {
		return err
	}
	if len(p.ChangedFiles) == 0 {
		r.log(ctx, "proposal", "the worker changed nothing")
		return nil
	}
	h := proposal.NewHandoff(dirs.Root, p)
	h.Context, h.Goal, h.DoD = cfg.Task, cfg.Task, cfg.DoD
	if cfg.TestCommand != "" {
		h.Tests = []string{cfg.TestCommand}
	}
	// The orchestrator receives the HANDOFF as text and works from what it
	// says, as it would from a worker in another process.
	received, err := proposal.ParseHandoff(h.Format())
	if err != nil {
		return fmt.Errorf("agent: the worker's HANDOFF: %w", err)
	}
	r.res.Handoff = received
	r.log(ctx, "handoff", "HANDOFF: %d changed files, proposal %s", len(received.ChangedFiles), received.ProposalJSON)

	// 4. Review, then apply or reject.
	dir := proposalDir(received.ProposalJSON)
	report, err := proposal.Review(ctx, dir, &proposal.ReviewOptions{Policy: applyPolicy(cfg.Apply), Instance: cfg.Orchestrator})
	if err != nil {
		return err
	}
	r.res.Proposal = report.Proposal
	r.log(ctx, "proposal", "proposal %s: %s", shortID(report.Proposal.ID), changedSummary(report.Proposal))
	approve, reason := true, ""
	if cfg.Review != nil {
		if approve, reason, err = cfg.Review(ctx, report); err != nil {
			return err
		}
	}
	if !approve {
		if _, err := proposal.Reject(ctx, dir, reason, &proposal.RejectOptions{Instance: cfg.Orchestrator}); err != nil {
			return err
		}
		r.res.Rejected = reason
		r.log(ctx, "rejected", "rejected: %s", reason)
		return nil
	}
	r.log(ctx, "review", "approved")
	opts := proposal.ApplyOptions{}
	if cfg.Apply != nil {
		opts = *cfg.Apply
	}
	if opts.Instance == nil {
		opts.Instance = cfg.Orchestrator
	}
	applied, err := proposal.Apply(ctx, cfg.Paths, dir, &opts)
	if err != nil {
		return err
	}
	r.res.Applied = applied
	r.log(ctx, "applied", "applied %d files to the project", len(applied.Files))

	// 5. The project's tests, in a sandbox over the project.
	if cfg.TestCommand != "" {
		psb, _, err := cfg.Backend(ctx, cfg.Paths.ProjectRoot)
		if err != nil {
			return fmt.Errorf("agent: the project's test sandbox: %w", err)
		}
		defer psb.Close(context.WithoutCancel(ctx))
		res, err := psb.Exec(ctx, sandbox.ExecRequest{Command: cfg.TestCommand})
		if err != nil {
			return fmt.Errorf("agent: the project's tests: %w", err)
		}
		r.res.Tests = res
		r.log(ctx, "tests", "%s in the project: %s", cfg.TestCommand, describeExit(res))
	}
	r.log(ctx, "done", "run %s done", cfg.RunID)
	return nil
}

func applyPolicy(o *proposal.ApplyOptions) *proposal.Policy {
	if o == nil {
		return nil
	}
	return o.Policy
}

// proposalDir is the proposal directory of a HANDOFF's ProposalJson path.
func proposalDir(jsonPath string) string {
	return strings.TrimSuffix(strings.TrimSuffix(jsonPath, proposal.JSONFile), "/")
}

func describeExit(res *sandbox.ExecResult) string {
	if res.Success() {
		return "passed"
	}
	if res.Reason == sandbox.Exited {
		return fmt.Sprintf("failed (exit %d)", res.ExitCode)
	}
	return "failed (" + string(res.Reason) + ")"
}

func shortID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func changedSummary(p *proposal.Proposal) string {
	var parts []string
	for _, f := range p.ChangedFiles {
		parts = append(parts, string(f.Status)+" "+f.Path)
	}
	return strings.Join(parts, ", ")
}
