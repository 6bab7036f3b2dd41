package agent_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/approval"
	"github.com/paddockdev/paddock/proposal"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dirsandbox"
	"github.com/paddockdev/paddock/workspace"
)

func dirBackend(ctx context.Context, dir string) (*sandbox.Sandbox, string, error) {
	drv, err := dirsandbox.New(dir, sandbox.Spec{Network: true}, nil)
	if err != nil {
		return nil, "", err
	}
	return sandbox.New(drv, nil), "dir", nil
}

// orchestrateEnv is a project with one file and a store.
func orchestrateEnv(t *testing.T) (workspace.Paths, *workspace.Store) {
	t.Helper()
	paths := newPaths(t)
	writeFile(t, filepath.Join(paths.ProjectRoot, "a.txt"), "old\n")
	writeFile(t, filepath.Join(paths.ProjectRoot, "b.txt"), "untouched\n")
	store, err := workspace.NewStore(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	return paths, store
}

func writerModel(t *testing.T, extra ...agent.Step) *agent.ScriptedModel {
	steps := []agent.Step{
		{Expect: agent.Expect{SystemContains: "work", LastText: "Update a.txt"},
			Response: answer(toolUse(t, "w1", "write_file", map[string]string{"path": "a.txt", "content": "new\n"}))},
	}
	steps = append(steps, extra...)
	if len(extra) == 0 {
		steps = append(steps, agent.Step{Response: answer(agent.Text("a.txt updated."))})
	}
	return agent.NewScriptedModel(steps...)
}

func TestOrchestrateApplies(t *testing.T) {
	paths, store := orchestrateEnv(t)
	var stages []string
	res, err := agent.Orchestrate(context.Background(), agent.RunConfig{
		Paths: paths, Store: store, RunID: "r1",
		Files: sandbox.Selection{"a.txt", "b.txt"}, Task: "Update a.txt to say new.", DoD: "a.txt says new",
		Model: writerModel(t), Backend: dirBackend, TestCommand: "grep -qx new a.txt",
		Observe: func(e agent.RunEvent) {
			if e.Loop == nil {
				stages = append(stages, e.Stage)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(paths.ProjectRoot, "a.txt")); got != "new\n" {
		t.Errorf("project a.txt = %q", got)
	}
	if res.Worker.Status != agent.StatusDone || res.Applied == nil || res.Tests == nil || !res.Tests.Success() {
		t.Errorf("result %+v", res)
	}
	if h := res.Handoff; h == nil || strings.Join(h.ChangedFiles, ",") != "a.txt" || h.DoD != "a.txt says new" || !strings.HasSuffix(h.ProposalJSON, "proposal.json") {
		t.Errorf("handoff %+v", res.Handoff)
	}
	// The worker's test run is the proposal's test.log.
	report, err := proposal.Review(context.Background(), filepath.Join(res.Sandbox.Root, "proposal"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report.TestLog), "passed") {
		t.Errorf("test.log = %q", report.TestLog)
	}
	if got := strings.Join(stages, " "); got != "prepared handoff proposal review applied tests done" {
		t.Errorf("stages %q", got)
	}
}

func TestOrchestrateRejects(t *testing.T) {
	paths, store := orchestrateEnv(t)
	res, err := agent.Orchestrate(context.Background(), agent.RunConfig{
		Paths: paths, Store: store, RunID: "r2",
		Files: sandbox.Selection{"a.txt"}, Task: "Update a.txt to say new.",
		Model: writerModel(t), Backend: dirBackend,
		Review: func(ctx context.Context, r *proposal.Report) (bool, string, error) {
			return false, "not today", nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected != "not today" || res.Applied != nil {
		t.Errorf("result %+v", res)
	}
	if got := readFile(t, filepath.Join(paths.ProjectRoot, "a.txt")); got != "old\n" {
		t.Errorf("a rejected proposal changed the project: %q", got)
	}
}

func TestOrchestratePausesWithoutApprover(t *testing.T) {
	paths, store := orchestrateEnv(t)
	ev := approval.NewEvaluator(nil)
	if err := ev.Load(approval.LayerProject, "t.rules", []byte("allow write_file: path **\nask execute_bash: rm\n")); err != nil {
		t.Fatal(err)
	}
	hook := approval.NewHook(ev, nil)
	model := writerModel(t, agent.Step{Response: answer(toolUse(t, "w2", "execute_bash", map[string]string{"command": "rm b.txt"}))})
	res, err := agent.Orchestrate(context.Background(), agent.RunConfig{
		Paths: paths, Store: store, RunID: "r3",
		Files: sandbox.Selection{"a.txt", "b.txt"}, Task: "Update a.txt to say new.",
		Model: model, Backend: dirBackend, Hook: hook,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Worker.Status != agent.StatusPaused || len(res.Worker.Pending) != 1 || res.Proposal != nil {
		t.Errorf("result %+v", res)
	}
	if got := readFile(t, filepath.Join(paths.ProjectRoot, "a.txt")); got != "old\n" {
		t.Errorf("a paused run changed the project: %q", got)
	}
}

func TestOrchestrateRefusesIncompleteConfig(t *testing.T) {
	paths, store := orchestrateEnv(t)
	for name, cfg := range map[string]agent.RunConfig{
		"no files": {Paths: paths, Store: store, Task: "x", Model: writerModel(t), Backend: dirBackend},
		"no task":  {Paths: paths, Store: store, Files: sandbox.Selection{"a.txt"}, Model: writerModel(t), Backend: dirBackend},
		"no model": {Paths: paths, Store: store, Files: sandbox.Selection{"a.txt"}, Task: "x", Backend: dirBackend},
	} {
		if _, err := agent.Orchestrate(context.Background(), cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
