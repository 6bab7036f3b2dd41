// Command proposal walks a worker's change back into a project: a
// temporary git project, a sandbox prepared from it, edits in work/,
// proposal.Create with its summary, Review and Apply; then a second run
// where the project changed meanwhile (drift), once in other lines (Apply
// merges) and once in the same line (Apply returns the conflict and leaves
// the project as it was).
//
//	go run ./examples/proposal
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/paddockdev/paddock/proposal"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

const config = `# settings
name = demo
retries = 3
timeout = 10s
verbose = false
`

func run(w io.Writer) error {
	dir, err := os.MkdirTemp("", "paddock-proposal-example")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	// A project under git.
	project := filepath.Join(dir, "project")
	files := map[string]string{
		"main.go":     "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
		"config.toml": config,
		"old.md":      "# Notes\n\nThese notes move to docs/.\n",
		"tmp.txt":     "scratch\n",
	}
	if err := writeAll(project, files); err != nil {
		return err
	}
	if err := git(project, "init", "-q"); err != nil {
		return err
	}
	if err := git(project, "add", "-A"); err != nil {
		return err
	}
	if err := git(project, "commit", "-qm", "base"); err != nil {
		return err
	}
	ws, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(dir, "state")})
	if err != nil {
		return err
	}

	// Run 1: a worker edits its sandbox; the orchestrator applies.
	sb, err := sandbox.Prepare(ctx, ws, "run1", "worker", sandbox.Selection{"."}, nil)
	if err != nil {
		return err
	}
	work := sb.Dirs().Work
	edits := map[string]string{
		"main.go":       "package main\n\nfunc main() {\n\tprintln(\"hello, paddock\")\n}\n",
		"docs/notes.md": files["old.md"],
		"NEW.md":        "A new file.\n",
	}
	if err := writeAll(work, edits); err != nil {
		return err
	}
	for _, r := range []string{"old.md", "tmp.txt"} {
		if err := os.Remove(filepath.Join(work, r)); err != nil {
			return err
		}
	}
	p, err := proposal.Create(ctx, sb, &proposal.CreateOptions{Notes: "Greet paddock; move the notes.", TestLog: []byte("ok  demo\n")})
	if err != nil {
		return err
	}
	summary, err := os.ReadFile(filepath.Join(sb.Dirs().Proposal, proposal.SummaryFile))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "== run 1: summary.md\n%s", strings.ReplaceAll(string(summary), shortID(p.ID), "<id>"))
	fmt.Fprintf(w, "== handoff\n%s", proposal.NewHandoff("<sandbox>", p).Format())
	r, err := proposal.Review(ctx, sb.Dirs().Proposal, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "== review: %d file(s), patch of %d bytes\n", len(r.Files), len(r.Patch))
	res, err := proposal.Apply(ctx, ws, sb.Dirs().Proposal, &proposal.ApplyOptions{Reverse: true})
	if err != nil {
		return err
	}
	printVerdicts(w, "apply", res)
	status, err := gitOut(project, "status", "--porcelain")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "git status after apply:\n%s", status)

	// Run 2: the worker changes "retries"; meanwhile the user changes
	// "verbose" in the project: the files drifted, and Apply merges.
	sb2, err := sandbox.Prepare(ctx, ws, "run2", "worker", sandbox.Selection{"config.toml"}, nil)
	if err != nil {
		return err
	}
	if err := writeAll(sb2.Dirs().Work, map[string]string{"config.toml": strings.Replace(config, "retries = 3", "retries = 5", 1)}); err != nil {
		return err
	}
	if _, err := proposal.Create(ctx, sb2, nil); err != nil {
		return err
	}
	if err := writeAll(project, map[string]string{"config.toml": strings.Replace(config, "verbose = false", "verbose = true", 1)}); err != nil {
		return err
	}
	res, err = proposal.Apply(ctx, ws, sb2.Dirs().Proposal, nil)
	if err != nil {
		return err
	}
	printVerdicts(w, "run 2, drift in other lines", res)
	merged, err := os.ReadFile(filepath.Join(project, "config.toml"))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "config.toml now:\n%s", merged)

	// Run 3: the worker and the user both change "timeout".
	sb3, err := sandbox.Prepare(ctx, ws, "run3", "worker", sandbox.Selection{"config.toml"}, nil)
	if err != nil {
		return err
	}
	if err := writeAll(sb3.Dirs().Work, map[string]string{"config.toml": strings.Replace(string(merged), "timeout = 10s", "timeout = 30s", 1)}); err != nil {
		return err
	}
	if _, err := proposal.Create(ctx, sb3, nil); err != nil {
		return err
	}
	if err := writeAll(project, map[string]string{"config.toml": strings.Replace(string(merged), "timeout = 10s", "timeout = 1m", 1)}); err != nil {
		return err
	}
	before, err := os.ReadFile(filepath.Join(project, "config.toml"))
	if err != nil {
		return err
	}
	_, err = proposal.Apply(ctx, ws, sb3.Dirs().Proposal, nil)
	var ce *proposal.ConflictError
	if !errors.As(err, &ce) {
		return fmt.Errorf("run 3: want a conflict, got %v", err)
	}
	fmt.Fprintf(w, "== run 3, drift in the same line: conflict (drift: %v)\n", errors.Is(err, proposal.ErrDrift))
	for _, f := range ce.Files {
		for _, reg := range f.Regions {
			fmt.Fprintf(w, "%s, base lines %d-%d: project %q, worker %q\n", f.Path, reg.BaseStart+1, reg.BaseEnd, reg.Ours, reg.Theirs)
		}
	}
	after, err := os.ReadFile(filepath.Join(project, "config.toml"))
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "project unchanged: %v\n", string(before) == string(after))
	if _, err := proposal.Reject(ctx, sb3.Dirs().Proposal, "conflicts with the user's timeout; rebase on it", nil); err != nil {
		return err
	}
	evs, err := proposal.ReadEvents(sb3.Dirs().Proposal)
	if err != nil {
		return err
	}
	fmt.Fprint(w, "run 3 events:")
	for _, e := range evs {
		fmt.Fprint(w, " ", e.Type)
	}
	fmt.Fprintln(w)
	return nil
}

func printVerdicts(w io.Writer, what string, res *proposal.ApplyResult) {
	fmt.Fprintf(w, "== %s\n", what)
	for _, f := range res.Files {
		name := f.Path
		if f.OldPath != "" {
			name = f.OldPath + " -> " + f.Path
		}
		fmt.Fprintf(w, "  %-16s %s\n", f.Verdict, name)
	}
}

func writeAll(dir string, files map[string]string) error {
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func shortID(id string) string { return strings.TrimPrefix(id, "sha256:")[:12] }

// gitEnv is git without any user or system configuration.
func gitEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+dir,
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(dir), "GIT_AUTHOR_NAME=demo", "GIT_AUTHOR_EMAIL=demo@example.com",
		"GIT_COMMITTER_NAME=demo", "GIT_COMMITTER_EMAIL=demo@example.com")
}

func git(dir string, args ...string) error {
	_, err := gitOut(dir, args...)
	return err
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
