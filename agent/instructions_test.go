package agent_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/sandbox"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// allTools is every standard tool and supervisor action, over one sandbox.
func allTools(t *testing.T) *agent.Set {
	t.Helper()
	sb, _ := newDir(t, sandbox.Spec{})
	std, err := agent.StandardTools(sb, &agent.ToolOptions{Network: true, AllowDomains: []string{"pkg.go.dev"}, Searcher: fakeSearcher{}})
	if err != nil {
		t.Fatal(err)
	}
	sup, err := agent.SupervisorTools(sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := std.Tools()
	for _, tool := range sup.Tools() {
		if !std.Has(tool.Name()) {
			tools = append(tools, tool)
		}
	}
	set, err := agent.NewSet(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestInstructionsGolden(t *testing.T) {
	all := allTools(t)
	std, err := all.Only("execute_bash", "read_file", "write_file", "edit_file", "list_files")
	if err != nil {
		t.Fatal(err)
	}
	box := "/state/workspaces/ws1/sandboxes/run1/worker-1"
	worker, err := agent.WorkerProfile("worker-1", box, box+"/work", nil)
	if err != nil {
		t.Fatal(err)
	}
	orch, err := agent.NewProfile("orchestrator", agent.Orchestrator, nil)
	if err != nil {
		t.Fatal(err)
	}
	reviewer, err := agent.CodeReviewer("reviewer", &agent.ProfileOptions{HomeDir: box + "/work", SandboxDir: box})
	if err != nil {
		t.Fatal(err)
	}
	testgen, err := agent.TestGenerator("testgen", &agent.ProfileOptions{HomeDir: box + "/work", SandboxDir: box})
	if err != nil {
		t.Fatal(err)
	}
	forProfile := func(p agent.Profile) *agent.Set {
		s, err := all.For(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		golden string
		cfg    agent.InstructionsConfig
	}{
		{"worker_bwrap.txt", agent.InstructionsConfig{Profile: worker, Tools: std, SandboxKind: "bwrap", Cwd: "/workspace", ApprovalTools: []string{"execute_bash", "write_file", "edit_file"}}},
		{"worker_dir_all_tools.txt", agent.InstructionsConfig{Profile: worker, Tools: all, SandboxKind: "dir", Cwd: box + "/work", ApprovalTools: []string{"execute_bash", "http_request", "not_a_tool"}}},
		{"orchestrator.txt", agent.InstructionsConfig{Profile: orch, Tools: forProfile(reviewer), Cwd: "/home/me/project"}},
		{"code_reviewer.txt", agent.InstructionsConfig{Profile: reviewer, Tools: forProfile(reviewer), SandboxKind: "docker", Cwd: "/workspace", ApprovalTools: []string{"execute_bash"}}},
		{"test_generator.txt", agent.InstructionsConfig{Profile: testgen, Tools: forProfile(testgen), SandboxKind: "bwrap", Cwd: "/workspace", ApprovalTools: []string{"execute_bash"}}},
		{"no_tools.txt", agent.InstructionsConfig{Profile: worker, SandboxKind: "firecracker"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got, err := agent.Instructions(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestInstructionsGolden -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// TestInstructionsNameOnlyToolsPresent checks, for every subset of the
// tools, that the prompt names every tool present and none absent.
func TestInstructionsNameOnlyToolsPresent(t *testing.T) {
	all := allTools(t)
	names := all.Names()
	p, err := agent.WorkerProfile("w", "/s", "/s/work", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) > 16 {
		t.Fatalf("%d tools: too many subsets", len(names))
	}
	for mask := 0; mask < 1<<len(names); mask++ {
		var chosen []string
		for i, n := range names {
			if mask&(1<<i) != 0 {
				chosen = append(chosen, n)
			}
		}
		sub, err := all.Only(chosen...)
		if err != nil {
			t.Fatal(err)
		}
		prompt, err := agent.Instructions(agent.InstructionsConfig{Profile: p, Tools: sub, SandboxKind: "bwrap", Cwd: "/workspace", ApprovalTools: names})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			has := sub.Has(n)
			mentioned := mentions(prompt, n)
			if has && !mentioned {
				t.Fatalf("tools %v: the prompt does not name %s:\n%s", chosen, n, prompt)
			}
			if !has && mentioned {
				t.Fatalf("tools %v: the prompt names %s, which the agent lacks:\n%s", chosen, n, prompt)
			}
		}
	}
}

// mentions reports whether name occurs in prompt as a whole word (not
// part of a longer identifier like edit_file). The prompt's prose never uses
// a tool's name as a plain word ("edit" included).
func mentions(prompt, name string) bool {
	isWord := func(b byte) bool {
		return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
	}
	for i := 0; ; {
		j := strings.Index(prompt[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !isWord(prompt[start-1])) && (end == len(prompt) || !isWord(prompt[end])) {
			return true
		}
		i = end
	}
}

func TestInstructionsInvalidProfile(t *testing.T) {
	if _, err := agent.Instructions(agent.InstructionsConfig{Profile: agent.Profile{Role: agent.Worker}}); err == nil {
		t.Error("an invalid profile gave a prompt")
	}
}
