package agent_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

func TestNewProfileDefaults(t *testing.T) {
	for _, tc := range []struct {
		role agent.Role
		opts *agent.ProfileOptions
		want agent.CwdMode
	}{
		{agent.Worker, nil, agent.AgentHomeCwd},
		{agent.Orchestrator, nil, agent.WorkspaceCwd},
		{agent.Orchestrator, &agent.ProfileOptions{CwdMode: agent.AgentHomeCwd}, agent.AgentHomeCwd},
		{agent.Worker, &agent.ProfileOptions{Kind: "cli"}, agent.AgentHomeCwd},
	} {
		p, err := agent.NewProfile("a1", tc.role, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if p.Runtime.CwdMode != tc.want {
			t.Errorf("%s %+v: cwd mode %q, want %q", tc.role, tc.opts, p.Runtime.CwdMode, tc.want)
		}
		if p.Runtime.BackendID != "auto" {
			t.Errorf("backend %q, want auto", p.Runtime.BackendID)
		}
	}
}

func TestNewProfileInvalid(t *testing.T) {
	for _, tc := range []struct {
		id   string
		role agent.Role
		opts *agent.ProfileOptions
	}{
		{"", agent.Worker, nil},
		{"a", "boss", nil},
		{"a", agent.Worker, &agent.ProfileOptions{CwdMode: "project"}},
		{"a", agent.Worker, &agent.ProfileOptions{Tools: []string{"read_file", "read_file"}}},
		{"a", agent.Worker, &agent.ProfileOptions{Tools: []string{""}}},
	} {
		_, err := agent.NewProfile(tc.id, tc.role, tc.opts)
		if !errors.Is(err, agent.ErrInvalidProfile) {
			t.Errorf("NewProfile(%q, %q, %+v) = %v, want ErrInvalidProfile", tc.id, tc.role, tc.opts, err)
		}
	}
}

func TestProfileJSONRoundTrip(t *testing.T) {
	for _, tools := range [][]string{nil, {}, {"read_file"}} {
		p, err := agent.NewProfile("w", agent.Worker, &agent.ProfileOptions{HomeDir: "/s/work", SandboxDir: "/s", Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var got agent.Profile
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		// nil (all tools) and [] (none) must stay apart.
		if diff := cmp.Diff(p, got); diff != "" || (p.Tools == nil) != (got.Tools == nil) {
			t.Errorf("round trip of %s (-want +got):\n%s", b, diff)
		}
	}
}

func TestResolveCwd(t *testing.T) {
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "project")
	state := filepath.Join(tmp, "state")
	box := filepath.Join(state, "sandboxes", "run1", "w1")
	work := filepath.Join(box, "work")
	for _, d := range []string{ws, work, filepath.Join(tmp, "elsewhere")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link inside the sandbox that leads out of it.
	escape := filepath.Join(box, "escape")
	if err := os.Symlink(filepath.Join(tmp, "elsewhere"), escape); err != nil {
		t.Fatal(err)
	}
	// A sandbox inside the project (a project-local state dir).
	localBox := filepath.Join(ws, ".paddock", "sandboxes", "r", "w")

	worker := func(home, sandboxDir string) agent.Profile {
		return agent.Profile{ID: "w1", Role: agent.Worker, HomeDir: home, SandboxDir: sandboxDir, Runtime: agent.Runtime{CwdMode: agent.AgentHomeCwd}}
	}
	orch := agent.Profile{ID: "o", Role: agent.Orchestrator}
	for _, tc := range []struct {
		name    string
		p       agent.Profile
		ws      string
		want    string
		wantErr error
	}{
		{"orchestrator runs in the workspace", orch, ws, ws, nil},
		{"orchestrator, workspace root cleaned", orch, ws + "/./", ws, nil},
		{"orchestrator, relative workspace root", orch, "project", "", agent.ErrInvalidProfile},
		{"orchestrator, empty workspace root", orch, "", "", agent.ErrInvalidProfile},
		{"orchestrator in agentHome", agent.Profile{ID: "o", Role: agent.Orchestrator, HomeDir: work, Runtime: agent.Runtime{CwdMode: agent.AgentHomeCwd}}, ws, work, nil},
		{"orchestrator in agentHome without home", agent.Profile{ID: "o", Role: agent.Orchestrator, Runtime: agent.Runtime{CwdMode: agent.AgentHomeCwd}}, ws, "", agent.ErrNoHome},
		{"worker runs in its home", worker(work, box), ws, work, nil},
		{"worker home is the sandbox itself", worker(box, box), ws, box, nil},
		{"worker with default cwd mode", agent.Profile{ID: "w", Role: agent.Worker, HomeDir: work, SandboxDir: box}, ws, work, nil},
		{"worker home not yet created, inside", worker(filepath.Join(box, "work2"), box), ws, filepath.Join(box, "work2"), nil},
		{"worker without home", worker("", box), ws, "", agent.ErrNoHome},
		{"worker with relative home", worker("work", box), ws, "", agent.ErrNoHome},
		{"worker without sandbox", worker(work, ""), ws, "", agent.ErrNoHome},
		{"worker home outside its sandbox", worker(filepath.Join(tmp, "elsewhere"), box), ws, "", agent.ErrOutsideSandbox},
		{"worker home .. out of its sandbox", worker(box+"/work/../../other", box), ws, "", agent.ErrOutsideSandbox},
		{"worker home is a sibling with a common prefix", worker(box+"-evil", box), ws, "", agent.ErrOutsideSandbox},
		{"worker home through a link out of the sandbox", worker(escape, box), ws, "", agent.ErrOutsideSandbox},
		{"worker home is the workspace", worker(ws, ws), ws, "", agent.ErrOutsideSandbox},
		{"worker sandbox contains the workspace", worker(tmp, tmp), ws, "", agent.ErrOutsideSandbox},
		{"worker in workspace mode", agent.Profile{ID: "w", Role: agent.Worker, HomeDir: work, SandboxDir: box, Runtime: agent.Runtime{CwdMode: agent.WorkspaceCwd}}, ws, "", agent.ErrOutsideSandbox},
		{"worker in a project-local sandbox", worker(filepath.Join(localBox, "work"), localBox), ws, filepath.Join(localBox, "work"), nil},
		{"unknown role", agent.Profile{ID: "x", Role: "boss"}, ws, "", agent.ErrInvalidProfile},
		{"unknown cwd mode", agent.Profile{ID: "x", Role: agent.Worker, Runtime: agent.Runtime{CwdMode: "root"}}, ws, "", agent.ErrInvalidProfile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := agent.ResolveCwd(tc.p, tc.ws)
			if !errors.Is(err, tc.wantErr) || (err != nil) != (tc.wantErr != nil) {
				t.Fatalf("ResolveCwd = %q, %v; want error %v", got, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ResolveCwd = %q, want %q", got, tc.want)
			}
			if err != nil && got != "" {
				t.Errorf("an error came with a directory %q", got)
			}
		})
	}
}

func TestSubagentProfiles(t *testing.T) {
	dir := t.TempDir()
	opts := &agent.ProfileOptions{HomeDir: filepath.Join(dir, "work"), SandboxDir: dir}
	rev, err := agent.CodeReviewer("reviewer", opts)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := agent.TestGenerator("tests", opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p       agent.Profile
		want    []string
		without []string
	}{
		{rev, []string{"list_files", "read_file", "web_search"}, []string{"write_file", "edit_file", "execute_bash", "http_request"}},
		{gen, []string{"execute_bash", "read_file", "write_file", "edit_file", "list_files"}, []string{"web_search", "http_request"}},
	} {
		if tc.p.Role != agent.Worker || tc.p.Runtime.CwdMode != agent.AgentHomeCwd || tc.p.Purpose == "" {
			t.Errorf("%s: %+v, want a worker in agentHome with a purpose", tc.p.ID, tc.p)
		}
		for _, w := range tc.want {
			if !contains(tc.p.Tools, w) {
				t.Errorf("%s lacks %s", tc.p.ID, w)
			}
		}
		for _, w := range tc.without {
			if contains(tc.p.Tools, w) {
				t.Errorf("%s has %s", tc.p.ID, w)
			}
		}
		if _, err := agent.ResolveCwd(tc.p, t.TempDir()); err != nil {
			t.Errorf("%s: %v", tc.p.ID, err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestResolveCwdPreparedSandbox resolves a worker's cwd in a sandbox made by
// sandbox.Prepare, and refuses the same worker pointed at the project.
func TestResolveCwdPreparedSandbox(t *testing.T) {
	tmp := t.TempDir()
	project := filepath.Join(tmp, "project")
	writeFile(t, filepath.Join(project, "main.go"), "package main\n")
	ws, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(tmp, "state")})
	if err != nil {
		t.Fatal(err)
	}
	prep, err := sandbox.Prepare(t.Context(), ws, "run1", "coder-1", sandbox.Selection{"main.go"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs := prep.Dirs()
	p, err := agent.WorkerProfile("coder-1", dirs.Root, dirs.Work, nil)
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := agent.ResolveCwd(p, ws.ProjectRoot)
	if err != nil || cwd != dirs.Work {
		t.Fatalf("ResolveCwd = %q, %v; want %q", cwd, err, dirs.Work)
	}
	if _, err := os.Stat(filepath.Join(cwd, "main.go")); err != nil {
		t.Errorf("the worker's cwd has no copy of main.go: %v", err)
	}
	// The same worker pointed at the project is refused.
	p.HomeDir = ws.ProjectRoot
	if cwd, err := agent.ResolveCwd(p, ws.ProjectRoot); !errors.Is(err, agent.ErrOutsideSandbox) {
		t.Errorf("home in the project: ResolveCwd = %q, %v", cwd, err)
	}
	// Another worker's sandbox is not this worker's.
	other, err := sandbox.Paths(ws, "run1", "coder-2")
	if err != nil {
		t.Fatal(err)
	}
	p.HomeDir = other.Work
	if cwd, err := agent.ResolveCwd(p, ws.ProjectRoot); !errors.Is(err, agent.ErrOutsideSandbox) {
		t.Errorf("home in another sandbox: ResolveCwd = %q, %v", cwd, err)
	}
}
