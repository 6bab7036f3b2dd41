package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireGit skips the test without git, unless PADDOCK_REQUIRE names git.
func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if strings.Contains(os.Getenv("PADDOCK_REQUIRE"), "git") {
			t.Fatal("git is required (PADDOCK_REQUIRE) but not on PATH")
		}
		t.Skip("git not on PATH")
	}
}

// cleanEnv is the test's environment without git's own variables and
// without GIT_CEILING_DIRECTORIES.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestGitHead(t *testing.T) {
	requireGit(t)
	ws := newPaths(t, false)
	p := ws.ProjectRoot
	writeTree(t, p, "a.txt", "sub/b.txt")
	ctx := context.Background()
	check := func(name, want string) {
		t.Helper()
		got, err := GitHead(ctx, p)
		if err != nil || got != want {
			t.Errorf("%s: gitHead = %q, %v; want %q (git rev-parse HEAD)", name, got, err, want)
		}
	}
	check("no repository", "")
	git(t, p, "init", "-q", "-b", "main")
	check("empty repository", "")
	git(t, p, "add", ".")
	git(t, p, "commit", "-q", "-m", "one")
	check("loose ref", git(t, p, "rev-parse", "HEAD"))
	git(t, p, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(p, ".git/refs/heads/main")); err == nil {
		t.Fatal("pack-refs left the loose ref")
	}
	check("packed ref", git(t, p, "rev-parse", "HEAD"))
	git(t, p, "commit", "-q", "--allow-empty", "-m", "two")
	check("loose ref over a packed one", git(t, p, "rev-parse", "HEAD"))
	git(t, p, "checkout", "-q", "--detach", "HEAD~1")
	check("detached HEAD", git(t, p, "rev-parse", "HEAD"))
	git(t, p, "checkout", "-q", "main")
	git(t, p, "symbolic-ref", "HEAD", "refs/heads/unborn")
	check("unborn branch", "")
	git(t, p, "checkout", "-q", "main")

	// A worktree has a .git file and shares refs through commondir.
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, p, "worktree", "add", "-q", "-b", "side", wt, "HEAD~1")
	got, err := GitHead(ctx, wt)
	if want := git(t, wt, "rev-parse", "HEAD"); err != nil || got != want {
		t.Errorf("worktree: gitHead = %q, %v; want %q", got, err, want)
	}

	// A project below the repository's top level records its HEAD too, and
	// Prepare puts it in the manifest.
	sub, err := Prepare(ctx, ws, "r", "a", Selection{"a.txt"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := git(t, p, "rev-parse", "HEAD"); sub.Manifest().Base.GitHead != want {
		t.Errorf("manifest base.gitHead = %q, want %q", sub.Manifest().Base.GitHead, want)
	}
	got, err = GitHead(ctx, filepath.Join(p, "sub"))
	if want := git(t, p, "rev-parse", "HEAD"); err != nil || got != want {
		t.Errorf("subdirectory: gitHead = %q, %v; want %q", got, err, want)
	}
}

// TestGitCeiling runs git in work/ with and without Env, with the state
// root outside and inside the project.
func TestGitCeiling(t *testing.T) {
	requireGit(t)
	for _, inside := range []bool{false, true} {
		name := "state outside"
		if inside {
			name = "state inside"
		}
		t.Run(name, func(t *testing.T) {
			ws := newPaths(t, inside)
			p := ws.ProjectRoot
			writeTree(t, p, "a.txt")
			// When the state root is outside, put it in a repository of
			// its own: git in work/ must not find that one either.
			git(t, p, "init", "-q")
			if !inside {
				must(t, os.MkdirAll(ws.StateRoot, 0o700))
				git(t, ws.StateRoot, "init", "-q")
			}
			sb, err := Prepare(context.Background(), ws, "r", "a", Selection{"a.txt"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			work := sb.Dirs().Work
			revParse := func(env []string) (string, error) {
				cmd := exec.Command("git", "rev-parse", "--show-toplevel")
				cmd.Dir = work
				cmd.Env = env
				out, err := cmd.CombinedOutput()
				return strings.TrimSpace(string(out)), err
			}
			// Without the variable git finds an enclosing repository:
			// the project's or the state root's.
			out, err := revParse(cleanEnv())
			if err != nil {
				t.Fatalf("control: git rev-parse without GIT_CEILING_DIRECTORIES failed (%v): %s", err, out)
			}
			t.Logf("without Env, git finds %s", out)
			out, err = revParse(append(cleanEnv(), sb.Env()...))
			if err == nil || !strings.Contains(out, "not a git repository") {
				t.Errorf("git rev-parse in work/ with Env: %v, %q; want it to find no repository", err, out)
			}
			// The worker can still have a repository of its own in work/.
			git(t, work, "init", "-q")
			out, err = revParse(append(cleanEnv(), sb.Env()...))
			if err != nil || out != work {
				t.Errorf("git in work/ with its own repository: %q, %v; want %s", out, err, work)
			}
		})
	}
}
