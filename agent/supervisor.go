package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/paddockdev/paddock/sandbox"
)

// Envelope is the message the supervisor actions return (seed 004):
//
//	{"command": …, "result": …, "metadata": {"stdout": …, "stderr": …, "action": …, "dir_path": …}}
//
// Result is the action's stdout when it succeeded and its stderr (a JSON
// string) when it failed. The tool result the model sees is the envelope as
// JSON, with IsError set when the action failed.
type Envelope struct {
	// Command is what ran, as a readable command line.
	Command  string          `json:"command"`
	Result   json.RawMessage `json:"result"`
	Metadata Metadata        `json:"metadata"`
}

// Metadata is an envelope's details.
type Metadata struct {
	// Stdout is the action's structured output (see each action).
	Stdout json.RawMessage `json:"stdout"`
	Stderr string          `json:"stderr"`
	// Action is the action's name ("clone_repo", "list_files", …).
	Action string `json:"action"`
	// DirPath is the directory the action worked in, relative to the
	// sandbox's work directory ("." for the work directory itself).
	DirPath string `json:"dir_path"`
	// ExitCode is the exit status of the program run_in_venv ran, or -1
	// when it was killed; other actions leave it out. (Not in the seed.)
	ExitCode *int `json:"exit_code,omitempty"`
}

// ParseEnvelope decodes the content of a supervisor action's result.
func ParseEnvelope(content string) (*Envelope, error) {
	var e Envelope
	dec := json.NewDecoder(strings.NewReader(content))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("agent: not an action envelope: %w", err)
	}
	return &e, nil
}

func envelope(action, dir, command string, stdout any, stderr string, failed bool) (Result, error) {
	return envelopeCode(action, dir, command, stdout, stderr, failed, nil)
}

func envelopeCode(action, dir, command string, stdout any, stderr string, failed bool, code *int) (Result, error) {
	out, err := json.Marshal(stdout)
	if err != nil {
		return Result{}, err
	}
	e := Envelope{Command: command, Metadata: Metadata{Stdout: out, Stderr: stderr, Action: action, DirPath: cmpOr(dir, "."), ExitCode: code}}
	if failed {
		e.Result, _ = json.Marshal(stderr)
	} else {
		e.Result = out
	}
	b, err := json.Marshal(e)
	if err != nil {
		return Result{}, err
	}
	return Result{Content: string(b), IsError: failed}, nil
}

// SupervisorTools returns the supervisor actions of seed 004 over a sandbox:
// clone_repo, list_files, create_venv, edit and run_in_venv. Every path is
// relative to the sandbox's work directory and every process runs in the
// sandbox.
func SupervisorTools(sb *sandbox.Sandbox, opts *ToolOptions) (*Set, error) {
	o := opts.orDefault()
	return NewSet(CloneRepo(sb, &o), ListFiles(sb), CreateVenv(sb, &o), Edit(sb), RunInVenv(sb, &o))
}

// FileItem is one entry of list_files: is_dir is true for directories only
// (a symbolic link to a directory is not one).
type FileItem struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	IsDir bool   `json:"is_dir"`
}

// slashClean cleans a model-given relative path, "" meaning ".".
func slashClean(p string) string {
	if p == "" {
		return "."
	}
	return path.Clean(strings.ReplaceAll(p, "\\", "/"))
}

// ListFiles returns the list_files tool: the entries of a directory in the
// sandbox (recursively if asked), as an envelope whose stdout is a list of
// {name, path, is_dir}, paths relative to the work directory.
func ListFiles(sb *sandbox.Sandbox) Tool {
	schema := Object(map[string]*Schema{
		"path":        String("Directory relative to the work directory; default the work directory.", false),
		"recursive":   Boolean("List subdirectories too (default false)."),
		"max_entries": Integer("Stop after this many entries; default 1000.", 1, 100000),
	})
	return NewTool(ListFilesName,
		"List the files and directories in a sandbox directory, as {name, path, is_dir} entries.",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				Path       string `json:"path"`
				Recursive  bool   `json:"recursive"`
				MaxEntries int    `json:"max_entries"`
			}
			if err := decodeInput(ListFilesName, input, &in); err != nil {
				return Result{}, err
			}
			dir := slashClean(in.Path)
			limit := cmpOr(in.MaxEntries, 1000)
			items := []FileItem{}
			stderr := ""
			var walk func(d string) error
			walk = func(d string) error {
				es, err := sb.List(ctx, d)
				if err != nil {
					return err
				}
				for _, e := range es {
					if len(items) >= limit {
						stderr = fmt.Sprintf("stopped after %d entries; list a subdirectory or raise max_entries", limit)
						return nil
					}
					p := path.Join(d, e.Name)
					items = append(items, FileItem{Name: e.Name, Path: p, IsDir: e.Mode.IsDir()})
					if in.Recursive && e.Mode.IsDir() {
						if err := walk(p); err != nil {
							return err
						}
					}
				}
				return nil
			}
			if err := walk(dir); err != nil {
				if ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
				return Result{}, fileErr(ListFilesName, dir, err)
			}
			cmd := "list_files " + dir
			if in.Recursive {
				cmd += " --recursive"
			}
			return envelope(ListFilesName, dir, cmd, items, stderr, false)
		})
}

// checkURL refuses repository addresses that make git run programs or
// read options: transport helpers ("ext::…"), schemes other than https,
// http, ssh, git and file, and anything starting with '-'.
func checkURL(u string) error {
	switch {
	case strings.HasPrefix(u, "-"):
		return errors.New("it starts with '-'")
	case strings.Contains(u, "::"):
		return errors.New("git transport helpers (\"<helper>::<address>\") are not allowed")
	case strings.ContainsAny(u, "\x00\n\r"):
		return errors.New("it contains a control character")
	}
	if i := strings.Index(u, "://"); i >= 0 {
		switch strings.ToLower(u[:i]) {
		case "https", "http", "ssh", "git", "file":
		default:
			return fmt.Errorf("scheme %q is not one of https, http, ssh, git, file", u[:i])
		}
	}
	return nil
}

// repoName is the directory git would clone u into.
func repoName(u string) string {
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndexAny(u, "/:"); i >= 0 {
		u = u[i+1:]
	}
	u = strings.TrimSuffix(u, ".git")
	return u
}

func validName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\\\x00")
}

// CloneRepo returns the clone_repo tool: git clone of a URL (https, http,
// ssh, git, file) or a local path into a directory of the sandbox. Its stdout
// is {"repo", "path"}. Git runs in the sandbox, with ext:: and fd::
// transports off and no terminal prompts.
func CloneRepo(sb *sandbox.Sandbox, opts *ToolOptions) Tool {
	o := opts.orDefault()
	schema := Object(map[string]*Schema{
		"git_url":  String("Repository URL (https, http, ssh, git, file) or path of a local repository.", true),
		"dir_path": String("Directory to clone into, relative to the work directory; default the work directory.", false),
		"name":     String("Name of the new directory; default the repository's name.", false),
	}, "git_url")
	return NewTool(CloneRepoName,
		"Clone a git repository (a URL or a local path) into a directory of the sandbox.",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				GitURL  string `json:"git_url"`
				DirPath string `json:"dir_path"`
				Name    string `json:"name"`
			}
			if err := decodeInput(CloneRepoName, input, &in); err != nil {
				return Result{}, err
			}
			if err := checkURL(in.GitURL); err != nil {
				return Result{}, toolErr(CloneRepoName, nil, "git_url %q is refused: %v", in.GitURL, err)
			}
			name := cmpOr(in.Name, repoName(in.GitURL))
			if !validName(name) {
				return Result{}, toolErr(CloneRepoName, nil, "cannot name the clone %q; pass name, a single directory name", name)
			}
			dir := slashClean(in.DirPath)
			dest := path.Join(dir, name)
			if _, err := sb.Stat(ctx, dest); err == nil {
				return Result{}, toolErr(CloneRepoName, nil, "%q already exists; pass another name or dir_path", dest)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return Result{}, fileErr(CloneRepoName, dest, err)
			}
			if dir != "." {
				if err := sb.Mkdir(ctx, dir, 0o755); err != nil {
					return Result{}, fileErr(CloneRepoName, dir, err)
				}
			}
			argv := []string{"git", "-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never", "clone", "--quiet", "--", in.GitURL, name}
			res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: argv, Dir: dir, Timeout: o.Timeout, MaxOutput: o.MaxOutput,
				Env: map[string]string{"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true"}})
			if err != nil {
				if ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
				return Result{}, execErr(CloneRepoName, dir, err)
			}
			cmd := "git clone -- " + in.GitURL + " " + dest
			stdout := map[string]string{"repo": in.GitURL, "path": dest}
			if !res.Success() {
				return envelope(CloneRepoName, dir, cmd, stdout, exitNote(res, string(res.Stderr)), true)
			}
			return envelope(CloneRepoName, dir, cmd, stdout, string(res.Stderr), false)
		})
}

// exitNote prefixes stderr with how the command ended when it was not a
// plain exit.
func exitNote(res *sandbox.ExecResult, stderr string) string {
	switch res.Reason {
	case sandbox.Exited:
		if stderr == "" {
			return fmt.Sprintf("exit status %d", res.ExitCode)
		}
		return stderr
	case sandbox.TimedOut:
		return "killed: timed out\n" + stderr
	}
	return fmt.Sprintf("ended: %s\n%s", res.Reason, stderr)
}

var pyVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)

// CreateVenv returns the create_venv tool: a Python virtual environment made
// in the sandbox with the chosen interpreter, optionally upgrading pip and
// setuptools and installing a requirements file. Its stdout is {"venv",
// "python", "pip", "installed", "upgraded", "interpreter_cmd"}, paths
// relative to the work directory. An interpreter that is not there, or whose
// version is not python_version, is an error saying so.
//
// Unlike the seed, upgrade_deps defaults to false: sandboxes have no network
// by default, and upgrading needs it. with_pip false (not in the seed) makes
// the environment without pip, which is several times faster; "pip" is then
// "".
func CreateVenv(sb *sandbox.Sandbox, opts *ToolOptions) Tool {
	o := opts.orDefault()
	schema := Object(map[string]*Schema{
		"dir_path":       String("Project directory, relative to the work directory; default the work directory.", false),
		"venv_name":      String("Directory of the environment, relative to dir_path; default \".venv\".", false),
		"requirements":   String("requirements.txt to install, a file inside dir_path.", false),
		"upgrade_deps":   Boolean("Upgrade pip and setuptools (needs network); default false."),
		"with_pip":       Boolean("Install pip in the environment (default true); false is much faster, but then nothing can be installed."),
		"python_version": String("Wanted major.minor version, like \"3.11\"; picks python3.11 unless interpreter is given.", false),
		"interpreter":    String("Python command to use, like \"python3.11\" or \"/usr/bin/python3\"; default python3.", false),
	})
	return NewTool(CreateVenvName,
		"Create a Python virtual environment in the sandbox, optionally installing a requirements file.",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				DirPath       string `json:"dir_path"`
				VenvName      string `json:"venv_name"`
				Requirements  string `json:"requirements"`
				UpgradeDeps   bool   `json:"upgrade_deps"`
				WithPip       *bool  `json:"with_pip"`
				PythonVersion string `json:"python_version"`
				Interpreter   string `json:"interpreter"`
			}
			if err := decodeInput(CreateVenvName, input, &in); err != nil {
				return Result{}, err
			}
			dir := slashClean(in.DirPath)
			venv := slashClean(cmpOr(in.VenvName, ".venv"))
			if venv == "." || path.IsAbs(venv) || venv == ".." || strings.HasPrefix(venv, "../") {
				return Result{}, toolErr(CreateVenvName, nil, "venv_name %q must be a directory name inside dir_path, like \".venv\"", in.VenvName)
			}
			if in.PythonVersion != "" && !pyVersion.MatchString(in.PythonVersion) {
				return Result{}, toolErr(CreateVenvName, nil, "python_version %q must be major.minor, like \"3.11\"", in.PythonVersion)
			}
			interp := strings.Fields(in.Interpreter)
			if len(interp) == 0 {
				if in.PythonVersion != "" {
					interp = []string{"python" + in.PythonVersion}
				} else {
					interp = []string{"python3"}
				}
			}
			interpCmd := strings.Join(interp, " ")
			withPip := in.WithPip == nil || *in.WithPip
			if !withPip && (in.Requirements != "" || in.UpgradeDeps) {
				return Result{}, toolErr(CreateVenvName, nil, "with_pip false cannot go with requirements or upgrade_deps, which need pip")
			}
			if in.Requirements != "" {
				if r := slashClean(in.Requirements); path.IsAbs(r) || r == ".." || strings.HasPrefix(r, "../") {
					return Result{}, toolErr(CreateVenvName, nil, "requirements %q must be a file inside dir_path, like \"requirements.txt\"", in.Requirements)
				}
				req := path.Join(dir, slashClean(in.Requirements))
				if _, err := sb.Stat(ctx, req); err != nil {
					return Result{}, fileErr(CreateVenvName, req, err)
				}
			}
			run := func(argv []string) (*sandbox.ExecResult, error) {
				res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: argv, Dir: dir, Timeout: o.MaxTimeout, MaxOutput: o.MaxOutput})
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					return nil, execErr(CreateVenvName, dir, err)
				}
				if res.Reason == sandbox.Cancelled {
					return nil, ctx.Err()
				}
				return res, nil
			}
			// The interpreter: there, and the wanted version.
			// Through sh, so that every backend reports a missing program
			// the same way (exit status 127).
			probeArgv := append([]string{"/bin/sh", "-c", `command -v "$1" >/dev/null 2>&1 || { echo "$1: not found" >&2; exit 127; }; exec "$@"`, "sh"}, interp...)
			probe, err := run(append(probeArgv, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"))
			if err != nil {
				return Result{}, err
			}
			if probe.Reason == sandbox.Exited && (probe.ExitCode == 127 || probe.ExitCode == 126) {
				return Result{}, toolErr(CreateVenvName, nil, "interpreter %q was not found in the sandbox (exit status %d: %s); pass an interpreter that exists there, like \"python3\"", interpCmd, probe.ExitCode, strings.TrimSpace(string(probe.Stderr)))
			}
			if !probe.Success() {
				return Result{}, toolErr(CreateVenvName, nil, "interpreter %q does not run: %s", interpCmd, strings.TrimSpace(exitNote(probe, string(probe.Stderr))))
			}
			got := strings.TrimSpace(string(probe.Stdout))
			if in.PythonVersion != "" && got != in.PythonVersion {
				return Result{}, toolErr(CreateVenvName, nil, "interpreter %q is Python %s, not %s; pass the interpreter of Python %s", interpCmd, got, in.PythonVersion, in.PythonVersion)
			}
			stdout := map[string]any{
				"venv":            path.Join(dir, venv),
				"python":          path.Join(dir, venv, "bin", "python"),
				"pip":             path.Join(dir, venv, "bin", "pip"),
				"installed":       false,
				"upgraded":        in.UpgradeDeps,
				"interpreter_cmd": interpCmd,
			}
			argv := append(append([]string{}, interp...), "-m", "venv")
			if in.UpgradeDeps {
				argv = append(argv, "--upgrade-deps")
			}
			if !withPip {
				argv = append(argv, "--without-pip")
				stdout["pip"] = ""
			}
			argv = append(argv, venv)
			cmds := []string{strings.Join(argv, " ")}
			res, err := run(argv)
			if err != nil {
				return Result{}, err
			}
			var stderr strings.Builder
			stderr.Write(res.Stderr)
			if !res.Success() {
				msg := exitNote(res, stderr.String())
				if strings.Contains(msg, "ensurepip") {
					msg += "\n(the interpreter's venv module cannot install pip: on Debian/Ubuntu install the python3-venv package)"
				}
				stdout["upgraded"] = false
				return envelope(CreateVenvName, dir, strings.Join(cmds, " && "), stdout, msg, true)
			}
			if in.Requirements != "" {
				pip := []string{"./" + path.Join(venv, "bin", "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "-r", slashClean(in.Requirements)}
				cmds = append(cmds, strings.Join(pip, " "))
				res, err := run(pip)
				if err != nil {
					return Result{}, err
				}
				stderr.Write(res.Stderr)
				if !res.Success() {
					return envelope(CreateVenvName, dir, strings.Join(cmds, " && "), stdout, exitNote(res, stderr.String()), true)
				}
				stdout["installed"] = true
			}
			return envelope(CreateVenvName, dir, strings.Join(cmds, " && "), stdout, stderr.String(), false)
		})
}

// RunInVenv returns the run_in_venv tool: the virtual environment's python
// run with argv, in cwd, with a timeout. Its stdout is the program's stdout,
// and the envelope's metadata has its exit_code.
func RunInVenv(sb *sandbox.Sandbox, opts *ToolOptions) Tool {
	o := opts.orDefault()
	schema := Object(map[string]*Schema{
		"venv_path": String("The virtual environment's directory, relative to the work directory.", true),
		"argv":      &Schema{Type: "array", Description: "Arguments after python, like [\"train.py\", \"--epochs\", \"10\"].", Items: &Schema{Type: "string"}, MinItems: ptr(1)},
		"cwd":       String("Working directory, relative to the work directory; default the work directory.", false),
		"timeout":   Integer(fmt.Sprintf("Seconds before the program is killed; default %d.", int(o.Timeout.Seconds())), 1, o.MaxTimeout.Seconds()),
	}, "venv_path", "argv")
	return NewTool(RunInVenvName,
		"Run the python of a virtual environment in the sandbox with the given arguments.",
		schema, func(ctx context.Context, input json.RawMessage) (Result, error) {
			var in struct {
				VenvPath string   `json:"venv_path"`
				Argv     []string `json:"argv"`
				Cwd      string   `json:"cwd"`
				Timeout  int      `json:"timeout"`
			}
			if err := decodeInput(RunInVenvName, input, &in); err != nil {
				return Result{}, err
			}
			venv := slashClean(in.VenvPath)
			py := path.Join(venv, "bin", "python")
			if _, err := sb.Stat(ctx, py); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return Result{}, toolErr(RunInVenvName, err, "%q is not a virtual environment (it has no bin/python); create one with create_venv", venv)
				}
				return Result{}, fileErr(RunInVenvName, py, err)
			}
			cwd := slashClean(in.Cwd)
			rel, err := filepath.Rel(filepath.FromSlash(cwd), filepath.FromSlash(py))
			if err != nil || cwd == ".." || strings.HasPrefix(cwd, "../") || path.IsAbs(cwd) {
				return Result{}, toolErr(RunInVenvName, err, "cwd %q must be a directory relative to the work directory", in.Cwd)
			}
			rel = filepath.ToSlash(rel)
			if !strings.HasPrefix(rel, ".") {
				rel = "./" + rel
			}
			timeout := o.Timeout
			if in.Timeout > 0 {
				timeout = time.Duration(in.Timeout) * time.Second
			}
			argv := append([]string{rel}, in.Argv...)
			res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: argv, Dir: cwd, Timeout: timeout, MaxOutput: o.MaxOutput})
			if err != nil {
				if ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
				return Result{}, execErr(RunInVenvName, cwd, err)
			}
			if res.Reason == sandbox.Cancelled {
				return Result{}, ctx.Err()
			}
			cmd := strings.Join(append([]string{py}, in.Argv...), " ")
			stderr := string(res.Stderr)
			if res.Reason != sandbox.Exited {
				stderr = exitNote(res, stderr)
			}
			code := res.ExitCode
			return envelopeCode(RunInVenvName, cwd, cmd, string(res.Stdout), stderr, !res.Success(), &code)
		})
}

func ptr[T any](v T) *T { return &v }
