package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Role is what an agent does in a run: the orchestrator plans, picks files
// and applies proposals in the project; a worker changes a sandbox copy.
type Role string

// The roles.
const (
	Orchestrator Role = "orchestrator"
	Worker       Role = "worker"
)

// CwdMode says where an agent's tools and processes run.
type CwdMode string

// The cwd modes.
const (
	// WorkspaceCwd runs in the project (workspace) root: for orchestrators.
	WorkspaceCwd CwdMode = "workspace"
	// AgentHomeCwd runs in the agent's home directory: for workers, whose
	// home is the work/ directory of their sandbox.
	AgentHomeCwd CwdMode = "agentHome"
)

// Runtime says how an agent runs.
type Runtime struct {
	// Kind is the kind of runtime ("cli", "sdk", …); empty means "sdk".
	Kind string `json:"kind"`
	// BackendID names the sandbox backend ("dir", "bwrap", "docker",
	// "auto"); empty means "auto".
	BackendID string `json:"backendId"`
	// CwdMode is where the agent runs; empty means its role's default
	// (see [DefaultCwdMode]).
	CwdMode CwdMode `json:"cwdMode"`
}

// Profile describes one agent: who it is, where it runs, what it may use.
// It round-trips through JSON.
type Profile struct {
	ID   string `json:"id"`
	Role Role   `json:"role"`
	// HomeDir is the agent's home, an absolute host path. For a worker it
	// is its sandbox's work/ directory.
	HomeDir string `json:"homeDir,omitempty"`
	// SandboxDir is the sandbox directory a worker is confined to (a
	// sandbox's Dirs.Root, or its work/ directory); HomeDir must be inside
	// it. Orchestrators leave it empty.
	SandboxDir string  `json:"sandboxDir,omitempty"`
	Runtime    Runtime `json:"runtime"`
	// Tools lists the names of the tools the agent may use; nil means every
	// tool the host offers. See [Set.For].
	// An empty non-nil list means none; it round-trips as [].
	Tools []string `json:"tools"`
	// Purpose is a short statement of the agent's job, put in its system
	// prompt (see [Instructions]); subagent profiles set it.
	Purpose string `json:"purpose,omitempty"`
}

// ProfileOptions are the optional settings of [NewProfile]. A nil
// *ProfileOptions means the defaults.
type ProfileOptions struct {
	HomeDir    string
	SandboxDir string
	// Kind and BackendID fill Runtime; empty means "sdk" and "auto".
	Kind      string
	BackendID string
	// CwdMode overrides the role's default (see [DefaultCwdMode]).
	CwdMode CwdMode
	Tools   []string
	Purpose string
}

// ErrInvalidProfile is returned when a profile's fields are missing or
// malformed (an empty id, an unknown role or cwd mode).
var ErrInvalidProfile = errors.New("agent: invalid profile")

// ErrNoHome is returned by [ResolveCwd] for an agent that runs in its home
// directory but has none, or whose sandbox is not set.
var ErrNoHome = errors.New("agent: agent has no home directory")

// ErrOutsideSandbox is returned by [ResolveCwd] when a worker's home is not
// inside its sandbox, or is (or contains) the workspace root.
var ErrOutsideSandbox = errors.New("agent: home directory outside the agent's sandbox")

// DefaultCwdMode is the cwd mode of a role when none is chosen: workers run in
// their home (their sandbox), orchestrators in the workspace. (The seed's
// createCustomAgentProfile defaulted every agent to the workspace, so workers
// ran in the user's project.)
func DefaultCwdMode(r Role) CwdMode {
	if r == Orchestrator {
		return WorkspaceCwd
	}
	return AgentHomeCwd
}

// NewProfile returns a custom profile for id in role, with the role's default
// cwd mode unless opts chooses one. It checks the fields but not the
// directories: [ResolveCwd] does, when the agent is about to run.
func NewProfile(id string, role Role, opts *ProfileOptions) (Profile, error) {
	if opts == nil {
		opts = &ProfileOptions{}
	}
	p := Profile{
		ID:         id,
		Role:       role,
		HomeDir:    opts.HomeDir,
		SandboxDir: opts.SandboxDir,
		Runtime: Runtime{
			Kind:      cmpOr(opts.Kind, "sdk"),
			BackendID: cmpOr(opts.BackendID, "auto"),
			CwdMode:   cmpOr(opts.CwdMode, DefaultCwdMode(role)),
		},
		Tools:   slices.Clone(opts.Tools),
		Purpose: opts.Purpose,
	}
	if err := p.Validate(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Validate checks the profile's fields: a non-empty id, a known role and cwd
// mode, and no empty or repeated tool name. The error wraps ErrInvalidProfile.
func (p Profile) Validate() error {
	var problems []string
	if strings.TrimSpace(p.ID) == "" {
		problems = append(problems, "id is empty")
	}
	switch p.Role {
	case Orchestrator, Worker:
	default:
		problems = append(problems, fmt.Sprintf("role %q is not %q or %q", p.Role, Orchestrator, Worker))
	}
	switch p.Runtime.CwdMode {
	case "", WorkspaceCwd, AgentHomeCwd:
	default:
		problems = append(problems, fmt.Sprintf("runtime.cwdMode %q is not %q or %q", p.Runtime.CwdMode, WorkspaceCwd, AgentHomeCwd))
	}
	seen := map[string]bool{}
	for _, t := range p.Tools {
		if t == "" {
			problems = append(problems, "tools has an empty name")
		} else if seen[t] {
			problems = append(problems, fmt.Sprintf("tools lists %q twice", t))
		}
		seen[t] = true
	}
	if len(problems) > 0 {
		return fmt.Errorf("profile %q: %s: %w", p.ID, strings.Join(problems, "; "), ErrInvalidProfile)
	}
	return nil
}

// CwdMode returns the profile's cwd mode, its role's default when unset.
func (p Profile) CwdMode() CwdMode {
	return cmpOr(p.Runtime.CwdMode, DefaultCwdMode(p.Role))
}

// ResolveCwd returns the directory an agent's tools and processes run in, and
// is the one place that decides it:
//
//   - an orchestrator in workspace mode runs in workspaceRoot;
//   - an agent in agentHome mode runs in its HomeDir, which must be set and
//     absolute (else ErrNoHome);
//   - a worker must be in agentHome mode, must have a SandboxDir, and its home
//     must be that directory or inside it, after resolving symbolic links,
//     and must not be workspaceRoot nor contain it (else ErrOutsideSandbox).
//
// There is no fallback: a worker that cannot run in its sandbox gets an error,
// never the workspace root. The checks are on paths; the sandbox backend is
// what confines the processes.
func ResolveCwd(p Profile, workspaceRoot string) (string, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	mode := p.CwdMode()
	if p.Role == Worker && mode != AgentHomeCwd {
		return "", fmt.Errorf("worker %q has cwd mode %q; workers run in their sandbox (cwd mode %q): %w", p.ID, mode, AgentHomeCwd, ErrOutsideSandbox)
	}
	if mode == WorkspaceCwd {
		if workspaceRoot == "" || !filepath.IsAbs(workspaceRoot) {
			return "", fmt.Errorf("agent %q runs in the workspace, but the workspace root %q is not an absolute path: %w", p.ID, workspaceRoot, ErrInvalidProfile)
		}
		return filepath.Clean(workspaceRoot), nil
	}
	if p.HomeDir == "" {
		return "", fmt.Errorf("agent %q has cwd mode %q but no home directory; set HomeDir to its sandbox's work directory: %w", p.ID, mode, ErrNoHome)
	}
	if !filepath.IsAbs(p.HomeDir) {
		return "", fmt.Errorf("agent %q: home directory %q is not an absolute path: %w", p.ID, p.HomeDir, ErrNoHome)
	}
	home := filepath.Clean(p.HomeDir)
	if p.Role != Worker {
		return home, nil
	}
	if p.SandboxDir == "" || !filepath.IsAbs(p.SandboxDir) {
		return "", fmt.Errorf("worker %q: sandbox directory %q is not an absolute path; set SandboxDir to the sandbox it is confined to: %w", p.ID, p.SandboxDir, ErrNoHome)
	}
	box := resolveLinks(filepath.Clean(p.SandboxDir))
	realHome := resolveLinks(home)
	if !within(box, realHome) {
		return "", fmt.Errorf("worker %q: home %q is not inside its sandbox %q: %w", p.ID, home, p.SandboxDir, ErrOutsideSandbox)
	}
	if workspaceRoot != "" {
		ws := resolveLinks(filepath.Clean(workspaceRoot))
		if within(realHome, ws) {
			return "", fmt.Errorf("worker %q: home %q is the workspace root %q or contains it: %w", p.ID, home, workspaceRoot, ErrOutsideSandbox)
		}
	}
	return home, nil
}

// resolveLinks resolves symbolic links in the longest existing prefix of
// path, so that a home reached through a link is judged by where it leads.
func resolveLinks(path string) string {
	rest := ""
	for cur := path; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, os.ErrNotExist) {
			return path
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within reports whether path is dir or inside it (lexically; both clean).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// WorkerProfile returns a worker profile whose home is a prepared sandbox's
// work directory (workDir, usually sandbox.Dirs.Work) confined to the sandbox
// directory sandboxDir (usually sandbox.Dirs.Root).
func WorkerProfile(id, sandboxDir, workDir string, opts *ProfileOptions) (Profile, error) {
	o := ProfileOptions{}
	if opts != nil {
		o = *opts
	}
	o.HomeDir, o.SandboxDir = workDir, sandboxDir
	return NewProfile(id, Worker, &o)
}

// The names of the standard tools (see [StandardTools] and
// [SupervisorTools]).
const (
	ExecuteBashName = "execute_bash"
	ReadFileName    = "read_file"
	WriteFileName   = "write_file"
	EditFileName    = "edit_file"
	ListFilesName   = "list_files"
	HTTPRequestName = "http_request"
	WebSearchName   = "web_search"
	CloneRepoName   = "clone_repo"
	CreateVenvName  = "create_venv"
	EditName        = "edit"
	RunInVenvName   = "run_in_venv"
)

// CodeReviewer returns the profile of the code-reviewer subagent: a worker
// that reads and comments, with only read_file, list_files and web_search.
// Its home and sandbox come from opts (its Tools and Purpose are set here).
func CodeReviewer(id string, opts *ProfileOptions) (Profile, error) {
	return subagent(id, opts, []string{ReadFileName, ListFilesName, WebSearchName},
		"You are a code reviewer. Read the changed code and report bugs, risky changes, missing tests and unclear names, each with the file and line. You do not change files or run commands.")
}

// TestGenerator returns the profile of the test-generator subagent: a worker
// that writes and runs tests, with read_file, list_files, write_file,
// edit_file and execute_bash (no network tools).
func TestGenerator(id string, opts *ProfileOptions) (Profile, error) {
	return subagent(id, opts, []string{ReadFileName, ListFilesName, WriteFileName, EditFileName, ExecuteBashName},
		"You are a test generator. Read the code under test, write focused tests for its behaviour and edge cases, run them, and report which pass and which fail. Change only test files.")
}

func subagent(id string, opts *ProfileOptions, tools []string, purpose string) (Profile, error) {
	o := ProfileOptions{}
	if opts != nil {
		o = *opts
	}
	o.Tools, o.Purpose = tools, purpose
	return NewProfile(id, Worker, &o)
}
