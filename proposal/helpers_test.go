package proposal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

// gitEnv is a hardened environment for the git oracle: no system or global
// configuration, a temporary HOME, no repository discovery above dir.
func gitEnv(t testing.TB, dir string) []string {
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME="+home,
		"GIT_CEILING_DIRECTORIES="+filepath.Dir(dir),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
}

// runGit runs git in dir and returns its stdout, failing the test on error.
func runGit(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	out, err := tryGit(t, dir, stdin, args...)
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func tryGit(t testing.TB, dir string, stdin []byte, args ...string) ([]byte, error) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed; it is the oracle of these tests")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t, dir)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, &gitError{err: err, stderr: stderr.String()}
	}
	return out, nil
}

type gitError struct {
	err    error
	stderr string
}

func (e *gitError) Error() string { return e.err.Error() + ": " + e.stderr }

// entry is one file of a tree as git sees it.
type entry struct {
	Mode string // 100644, 100755, 120000
	Data string
}

// readTree returns every file and link below dir, skipping .git and the
// names in skip.
func readTree(t testing.TB, dir string, skip ...string) map[string]entry {
	t.Helper()
	tree := map[string]entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		for _, s := range append([]string{".git"}, skip...) {
			if rel == s || strings.HasPrefix(rel, s+"/") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if d.IsDir() {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			tree[rel] = entry{"120000", l}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m := "100644"
		if info.Mode()&0o100 != 0 {
			m = "100755"
		}
		tree[rel] = entry{m, string(b)}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// treeHash is a digest of every file, link, mode and directory below dir
// (including empty directories and stray files), for "byte-identical"
// checks.
func treeHash(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := rel + " " + info.Mode().String()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			line += " -> " + l
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := sha256.Sum256(b)
			line += " " + hex.EncodeToString(s[:])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	s := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(s[:])
}

// writeTree writes files into dir: a value starting with "->" is a
// symbolic link; a key ending in "*" is executable (the star is dropped).
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		perm := fs.FileMode(0o644)
		if strings.HasSuffix(name, "*") {
			name, perm = strings.TrimSuffix(name, "*"), 0o755
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
		if l, ok := strings.CutPrefix(data, "->"); ok {
			if err := os.Symlink(l, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(data), perm); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
	}
}

// copyTree copies src into a new directory, with write permission.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	files := map[string]string{}
	for p, e := range readTree(t, src) {
		switch e.Mode {
		case "120000":
			files[p] = "->" + e.Data
		case "100755":
			files[p+"*"] = e.Data
		default:
			files[p] = e.Data
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, dst, files)
	return dst
}

// fixture is a project in git with a prepared sandbox of all of it.
type fixture struct {
	ws workspace.Paths
	sb *sandbox.Prepared
}

func newFixture(t testing.TB, files map[string]string) *fixture {
	t.Helper()
	root := t.TempDir()
	project := filepath.Join(root, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, project, files)
	runGit(t, project, nil, "init", "-q")
	runGit(t, project, nil, "add", "-A")
	runGit(t, project, nil, "commit", "-q", "-m", "base")
	ws, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(root, "state")})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Prepare(context.Background(), ws, "run1", "worker", sandbox.Selection{"."},
		&sandbox.PrepareOptions{Symlinks: sandbox.CopySymlinksInside})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sandbox.Destroy(context.Background(), ws, "run1", "worker") })
	return &fixture{ws: ws, sb: sb}
}

func (f *fixture) work() string { return f.sb.Dirs().Work }

// edit applies changes to work/: a nil-like value "" with key prefix "-"
// removes a file.
func (f *fixture) edit(t testing.TB, files map[string]string, remove ...string) {
	t.Helper()
	for _, r := range remove {
		if err := os.Remove(filepath.Join(f.work(), filepath.FromSlash(r))); err != nil {
			t.Fatal(err)
		}
	}
	writeTree(t, f.work(), files)
}
