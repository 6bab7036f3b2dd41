package agent

import (
	"fmt"
	"slices"
	"strings"
)

// InstructionsConfig is what the system prompt is built from.
type InstructionsConfig struct {
	// Profile is the agent's profile: its id, role and purpose.
	Profile Profile
	// Tools are the tools the agent actually has (after [Set.For]); nil
	// means none.
	Tools *Set
	// SandboxKind is the backend its tools run in: "bwrap", "dir",
	// "docker", or "" for none (an orchestrator in the workspace).
	SandboxKind string
	// Cwd is where its tools run, as [ResolveCwd] decided.
	Cwd string
	// ApprovalTools lists the tools whose calls wait for a decision (a
	// rule or a human) before they run. Names the agent lacks are ignored.
	ApprovalTools []string
}

// writers are the tools that change files.
var writers = []string{ExecuteBashName, WriteFileName, EditFileName, EditName, CloneRepoName, CreateVenvName, RunInVenvName}

// guidance is advice that is given only when every tool it names is there.
var guidance = []struct {
	needs []string
	text  string
}{
	{[]string{ListFilesName, ReadFileName}, "Look before you act: use list_files to find files and read_file to read them."},
	{[]string{ReadFileName}, "Read a large file in ranges with read_file's start_line and max_lines."},
	{[]string{EditFileName}, "For a small change, use edit_file with an old_string copied exactly from the file and long enough to occur once."},
	{[]string{WriteFileName}, "Use write_file to create a file or to replace one whole."},
	{[]string{EditName}, "Use edit to write several whole files in one call; it keeps a .bak backup of each file it replaces."},
	{[]string{ExecuteBashName}, "Use execute_bash to build and run the tests after every change, and read the failures before changing more. Commands time out; run long jobs with an explicit timeout_seconds."},
	{[]string{CloneRepoName}, "Use clone_repo to fetch a repository into the sandbox instead of cloning with a shell command."},
	{[]string{CreateVenvName, RunInVenvName}, "For Python, create a virtual environment with create_venv and run programs with run_in_venv."},
	{[]string{HTTPRequestName}, "http_request reaches only the domains listed in its description; other hosts are refused."},
	{[]string{WebSearchName}, "Use web_search for documentation you cannot find in the sandbox; prefer the code in front of you."},
}

// Instructions builds an agent's system prompt (the seed's
// getCodingInstructions) from its profile, the tools it has, its sandbox, its
// cwd and the approval policy. The prompt names only tools in cfg.Tools: no
// advice mentions a tool the agent lacks. It returns an error for an invalid
// profile.
func Instructions(cfg InstructionsConfig) (string, error) {
	p := cfg.Profile
	if err := p.Validate(); err != nil {
		return "", err
	}
	tools := cfg.Tools
	if tools == nil {
		tools = &Set{}
	}
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }

	line("You are %s, a coding agent.", p.ID)
	switch p.Role {
	case Orchestrator:
		line("You are the orchestrator: you plan the work, choose which files a worker gets, review the worker's proposal and apply it to the project. You work in the user's project itself, so change it only by applying reviewed proposals.")
	case Worker:
		if slices.ContainsFunc(writers, tools.Has) {
			line("You are a worker: you change a copy of the files you were given, in your own sandbox, never the user's project. When you are done, say what you changed and why, and how you tested it; the orchestrator reviews your changes as a proposal.")
		} else {
			line("You are a worker: you look at a copy of the files you were given, in your own sandbox, and you cannot change them. When you are done, report what you found.")
		}
	}
	if p.Purpose != "" {
		line("")
		line("%s", p.Purpose)
	}

	line("")
	line("# Environment")
	if cfg.Cwd != "" {
		line("Your working directory is %s. Give paths relative to it.", cfg.Cwd)
	}
	switch cfg.SandboxKind {
	case "":
		line("You do not run in a sandbox: your tools act on the host directly.")
	case "bwrap":
		line("Your tools run in a bubblewrap sandbox: only your working directory is writable, the system is read-only, and the network is off unless it was allowed.")
	case "docker":
		line("Your tools run in a Docker container: only your working directory is shared with the host.")
	case "dir":
		line("Your tools run in a plain directory sandbox, which does not isolate commands: stay in your working directory.")
	default:
		line("Your tools run in the %q sandbox.", cfg.SandboxKind)
	}

	line("")
	line("# Tools")
	if tools.Len() == 0 {
		line("You have no tools: answer with text only.")
	} else {
		line("You have exactly these tools; there are no others:")
		for _, t := range tools.Tools() {
			line("- %s: %s", t.Name(), t.Description())
		}
		first := true
		for _, g := range guidance {
			if !slices.ContainsFunc(g.needs, func(n string) bool { return !tools.Has(n) }) {
				if first {
					line("")
					first = false
				}
				line("%s", g.text)
			}
		}
	}

	var held []string
	for _, n := range tools.Names() {
		if slices.Contains(cfg.ApprovalTools, n) {
			held = append(held, n)
		}
	}
	if tools.Len() > 0 {
		line("")
		line("# Approval")
		if len(held) == 0 {
			line("Your tool calls run without waiting for approval.")
		} else {
			line("Calls to %s wait for approval before they run. A call may be approved, edited, rejected with a reason, or answered with a message instead of running; you will see which in its result. Do not repeat a rejected call unchanged: follow the reason.", strings.Join(held, ", "))
		}
	}

	line("")
	line("# Style")
	line("Be brief and concrete. Do not guess file contents or command output: check. If a tool fails, read its error: it says what was wrong and what to do.")
	return b.String(), nil
}
