// Command sandbox prepares a worker's sandbox from a small generated
// project, runs commands in it with the plain-directory backend and, when
// bubblewrap can run here, with the bubblewrap backend, and shows an escape
// attempt being refused.
//
//	go run ./examples/sandbox
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

	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/bwrapsandbox"
	"github.com/paddockdev/paddock/sandbox/dirsandbox"
	"github.com/paddockdev/paddock/workspace"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(w io.Writer) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "paddock-sandbox-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// A small project, a git repository when git is installed.
	project := filepath.Join(tmp, "project")
	files := map[string]string{
		"main.go":              "package main\n\nfunc main() { println(greet()) }\n",
		"greet.go":             "package main\n\nfunc greet() string { return \"hello\" }\n",
		"docs/README.md":       "# demo\n",
		"node_modules/dep.js":  "module.exports = 1\n",
		"secrets/.env.example": "TOKEN=\n",
	}
	for name, content := range files {
		p := filepath.Join(project, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	haveGit := exec.Command("git", "--version").Run() == nil
	if haveGit {
		git := func(args ...string) error {
			cmd := exec.Command("git", append([]string{"-C", project, "-c", "user.name=demo", "-c", "user.email=demo@example.com"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("git %v: %v: %s", args, err, out)
			}
			return nil
		}
		if err := git("init", "-q"); err != nil {
			return err
		}
		if err := git("add", "."); err != nil {
			return err
		}
		if err := git("commit", "-qm", "demo"); err != nil {
			return err
		}
	}

	paths, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(tmp, "state")})
	if err != nil {
		return err
	}

	// 1. Prepare: the selection is copied into input/ (read-only) and work/.
	prep, err := sandbox.Prepare(ctx, paths, "run-1", "worker-a", sandbox.Selection{"*.go", "docs"}, nil)
	if err != nil {
		return err
	}
	defer sandbox.Destroy(ctx, paths, "run-1", "worker-a")
	m := prep.Manifest()
	fmt.Fprintf(w, "prepared %d files (%d bytes); git HEAD recorded: %v\n", len(m.Files), m.TotalBytes, m.Base.GitHead != "")
	for _, f := range m.Files {
		fmt.Fprintf(w, "  %s\n", f.Path)
	}
	_, err = sandbox.Prepare(ctx, paths, "run-1", "worker-b", sandbox.Selection{"node_modules"}, nil)
	fmt.Fprintf(w, "selecting node_modules: refused (%v)\n", errors.Is(err, sandbox.ErrBlocked))

	// 2. Run commands with the plain-directory backend (no isolation).
	env := map[string]string{}
	for _, kv := range prep.Env() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	drv, err := dirsandbox.New(prep.Dirs().Work, sandbox.Spec{Network: true}, nil)
	if err != nil {
		return err
	}
	sbx := sandbox.New(drv, &sandbox.Options{Env: env})
	defer sbx.Close(ctx)
	res, err := sbx.Exec(ctx, sandbox.ExecRequest{Command: "ls; grep -c func *.go | sort"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "dirsandbox: %s", indent(res.Stdout))
	if haveGit {
		res, err = sbx.Exec(ctx, sandbox.ExecRequest{Argv: []string{"git", "rev-parse", "--show-toplevel"}})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "git inside work/ finds the project's repository: %v\n", res.Success())
	}

	// 3. The same with bubblewrap, when it can run here.
	if err := bwrapsandbox.Probe(ctx, ""); err != nil {
		fmt.Fprintf(w, "bwrapsandbox: unavailable here: %v\n", err)
	} else {
		bdrv, err := bwrapsandbox.New(ctx, prep.Dirs().Work, sandbox.Spec{}, nil)
		if err != nil {
			return err
		}
		bsbx := sandbox.New(bdrv, &sandbox.Options{Env: env})
		defer bsbx.Close(ctx)
		res, err := bsbx.Exec(ctx, sandbox.ExecRequest{Command: `echo "cwd $(pwd), pid $$, interfaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"; ls ` + project + ` 2>&1 | head -1`})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "bwrapsandbox: %s", indent(res.Stdout))
	}

	// 4. An escape attempt: the worker plants a symlink to /etc/passwd and
	// asks the host's file tool to read it.
	if _, err := sbx.Exec(ctx, sandbox.ExecRequest{Command: "ln -s /etc/passwd leak"}); err != nil {
		return err
	}
	_, err = sbx.ReadFile(ctx, "leak", 0)
	fmt.Fprintf(w, "reading the planted symlink: refused as a path escape: %v\n", errors.Is(err, sandbox.ErrPathEscape))
	_, err = sbx.Exec(ctx, sandbox.ExecRequest{Command: "true", Dir: "../../.."})
	fmt.Fprintf(w, "running in ../../..: refused as a path escape: %v\n", errors.Is(err, sandbox.ErrPathEscape))
	return nil
}

func indent(b []byte) string {
	return strings.ReplaceAll(strings.TrimRight(string(b), "\n"), "\n", "\n  ") + "\n"
}
