// Package demo holds what the examples share: the demo project, the choice
// of sandbox backend, and the transcript printer.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/approval"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/bwrapsandbox"
	"github.com/paddockdev/paddock/sandbox/dirsandbox"
	"github.com/paddockdev/paddock/workspace"
)

// The project: a calculator whose add subtracts, and its test.
const (
	CalcSh = `#!/bin/sh
# calc.sh A B prints A + B.
add() { echo $(($1 - $2)); }
add "$@"
`
	TestSh = `#!/bin/sh
got=$(sh calc.sh 2 3)
if [ "$got" = 5 ]; then echo "ok: 2 + 3 = 5"; else echo "FAIL: 2 + 3 = $got, want 5"; exit 1; fi
`
)

// ChooseBackend returns the backend named (bubblewrap, when it can run
// here, for "auto"), and a line saying which and why.
func ChooseBackend(ctx context.Context, name string) (agent.Backend, string, error) {
	bwrap := func(ctx context.Context, dir string) (*sandbox.Sandbox, string, error) {
		drv, err := bwrapsandbox.New(ctx, dir, sandbox.Spec{}, nil)
		if err != nil {
			return nil, "", err
		}
		return sandbox.New(drv, nil), "bwrap", nil
	}
	plain := func(ctx context.Context, dir string) (*sandbox.Sandbox, string, error) {
		drv, err := dirsandbox.New(dir, sandbox.Spec{Network: true}, nil)
		if err != nil {
			return nil, "", err
		}
		return sandbox.New(drv, nil), "dir", nil
	}
	const bwrapLine = "bwrap (own namespaces, no network, only its work/ writable)"
	switch name {
	case "bwrap":
		if err := bwrapsandbox.Probe(ctx, ""); err != nil {
			return nil, "", err
		}
		return bwrap, bwrapLine, nil
	case "dir":
		return plain, "dir: NO isolation (asked for with -backend dir)", nil
	case "auto":
		if err := bwrapsandbox.Probe(ctx, ""); err != nil {
			return plain, fmt.Sprintf("dir: NO isolation, bubblewrap cannot run here (%v)", err), nil
		}
		return bwrap, bwrapLine, nil
	}
	return nil, "", fmt.Errorf("unknown backend %q: use auto, bwrap or dir", name)
}

// A World is the demo project and a state root in a temporary directory.
type World struct {
	Dir   string // the temporary directory
	Paths workspace.Paths
	Store *workspace.Store
}

// NewWorld makes the demo project (see MakeProject) and a workspace store
// over it, in a new temporary directory named after prefix. Remove it with
// Close.
func NewWorld(prefix string) (*World, error) {
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	w := &World{Dir: tmp}
	project := filepath.Join(tmp, "project")
	if err := MakeProject(project); err != nil {
		w.Close()
		return nil, err
	}
	if w.Paths, err = workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(tmp, "state")}); err != nil {
		w.Close()
		return nil, err
	}
	if w.Store, err = workspace.NewStore(w.Paths, nil); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Close removes the world's directory.
func (w *World) Close() error { return os.RemoveAll(w.Dir) }

// MakeProject writes the demo project (a calculator whose add subtracts,
// and its test) into dir, as a git repository when git is installed.
func MakeProject(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range map[string]string{"calc.sh": CalcSh, "test.sh": TestSh} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			return err
		}
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil // a git repository is optional: the proposal's base then has no commit
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=demo", "GIT_AUTHOR_EMAIL=demo@example.com", "GIT_COMMITTER_NAME=demo", "GIT_COMMITTER_EMAIL=demo@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := git("init", "-q"); err != nil {
		return err
	}
	if err := git("add", "."); err != nil {
		return err
	}
	return git("commit", "-qm", "calculator")
}

// Transcript prints the run compactly.
func Transcript(w io.Writer, e agent.RunEvent) {
	if e.Loop == nil {
		fmt.Fprintf(w, "[%s] %s\n", e.Stage, e.Text)
		return
	}
	ev := e.Loop
	switch ev.Kind {
	case agent.EventUser:
		fmt.Fprintf(w, "  orchestrator → worker: %s\n", ev.Text)
	case agent.EventAssistant:
		fmt.Fprintf(w, "  worker: %s\n", ev.Text)
	case agent.EventDecision:
		o := ev.Outcome
		line := fmt.Sprintf("  %s %s", ev.Call.Name, describeInput(ev.Call.Input))
		switch o.Action {
		case approval.Run:
			fmt.Fprintf(w, "%s   [allowed: %s]\n", line, o.By)
		default:
			fmt.Fprintf(w, "%s   [%s: %s]\n", line, o.Decision.Effect, o.Decision.Reason)
			fmt.Fprintf(w, "    → answered by %s: %s\n", o.By, firstLine(o.Result))
		}
	case agent.EventToolRun:
		fmt.Fprintf(w, "    → %s\n", summarizeResult(ev.Result.Content))
	case agent.EventEnd:
		fmt.Fprintf(w, "  (worker's turn: %s)\n", ev.Status)
	}
}

func describeInput(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	if c, ok := m["command"].(string); ok {
		return "`" + c + "`"
	}
	if p, ok := m["path"].(string); ok {
		return p
	}
	return string(raw)
}

// summarizeResult shortens a tool result to its first line, plus the first
// line of its output for a command.
func summarizeResult(s string) string {
	first := firstLine(s)
	if _, out, ok := strings.Cut(s, "stdout:\n"); ok {
		first = strings.TrimSuffix(first, " …") + ": " + firstLine(out)
	}
	return first
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

// Tree prints the state root's layout, collapsing the sandbox's copies.
func Tree(w io.Writer, root string) error {
	return filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			return nil
		}
		depth := strings.Count(rel, string(filepath.Separator))
		name := d.Name()
		if d.IsDir() {
			name += "/"
			if base := d.Name(); base == "input" || base == "work" {
				n := 0
				filepath.WalkDir(path, func(_ string, e os.DirEntry, _ error) error {
					if e != nil && !e.IsDir() {
						n++
					}
					return nil
				})
				fmt.Fprintf(w, "  %s%s (%d files)\n", strings.Repeat("  ", depth), name, n)
				return filepath.SkipDir
			}
		}
		fmt.Fprintf(w, "  %s%s\n", strings.Repeat("  ", depth), name)
		return nil
	})
}
