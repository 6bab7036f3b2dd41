package proposal

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

// TestReplayHistory replays a real git history through proposals: the
// project starts at the first commit; for each next commit a sandbox is
// prepared, work/ is made that commit's tree, Create makes the proposal,
// Apply brings it into the project, and the project must then be git's
// tree of that commit, byte for byte and mode for mode.
//
// The history is PADDOCK_REPLAY_REPO's when set, else the repository this
// package is in (its first-parent history). PADDOCK_REPLAY_MAX caps the
// commits (default 300). A repository with fewer than two commits (a
// shallow CI clone) skips the test.
func TestReplayHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("replay is long")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	src := os.Getenv("PADDOCK_REPLAY_REPO")
	if src == "" {
		wd, _ := os.Getwd()
		out, err := exec.Command("git", "-C", wd, "rev-parse", "--show-toplevel").Output()
		if err != nil {
			t.Skip("not in a git repository and PADDOCK_REPLAY_REPO is not set")
		}
		src = strings.TrimSpace(string(out))
	}
	limit := 300
	if s := os.Getenv("PADDOCK_REPLAY_MAX"); s != "" {
		limit, _ = strconv.Atoi(s)
	}
	commits := strings.Fields(string(runGit(t, src, nil, "rev-list", "--reverse", "--first-parent", "HEAD")))
	if len(commits) > limit {
		commits = commits[len(commits)-limit:]
	}
	if len(commits) < 2 {
		t.Skipf("%s has %d commit(s); a replay needs a history", src, len(commits))
	}
	t.Logf("replaying %d commits of %s", len(commits), src)
	root := t.TempDir()
	project := filepath.Join(root, "project")
	os.MkdirAll(project, 0o755)
	tree := archive(t, src, commits[0])
	writeArchive(t, project, tree)
	ws, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(root, "state")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	applied := 0
	for i, c := range commits[1:] {
		run := fmt.Sprintf("r%04d", i)
		sb, err := sandbox.Prepare(ctx, ws, run, "replay", sandbox.Selection{"."},
			&sandbox.PrepareOptions{Symlinks: sandbox.CopySymlinksInside, Allow: []string{"node_modules", "dist"}, MaxFiles: -1, MaxBytes: -1})
		if err != nil {
			t.Fatalf("commit %s: prepare: %v", c, err)
		}
		work := sb.Dirs().Work
		if err := os.RemoveAll(work); err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(work, 0o755)
		next := archive(t, src, c)
		writeArchive(t, work, next)
		p, err := Create(ctx, sb, &CreateOptions{Allow: []string{"node_modules", "dist"}})
		if err != nil {
			t.Fatalf("commit %s: create: %v", c, err)
		}
		if len(p.Excluded) > 0 {
			t.Fatalf("commit %s: excluded %v", c, p.Excluded)
		}
		if _, err := Apply(ctx, ws, sb.Dirs().Proposal, nil); err != nil {
			t.Fatalf("commit %s: apply: %v", c, err)
		}
		if diff := cmp.Diff(readTree(t, work), readTree(t, project)); diff != "" {
			t.Fatalf("commit %s: project after Apply is not git's tree (-git +ours):\n%s", c, diff)
		}
		if err := sandbox.Destroy(ctx, ws, run, "replay"); err != nil {
			t.Fatal(err)
		}
		applied++
	}
	t.Logf("%d proposals applied", applied)
}

// archive returns the tar of commit's tree.
func archive(t *testing.T, repo, commit string) []byte {
	return runGit(t, repo, nil, "archive", "--format=tar", commit)
}

// writeArchive extracts a git archive into dir.
func writeArchive(t *testing.T, dir string, data []byte) {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(h.Linkname, p); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(p), 0o755)
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o100 != 0 {
				mode = 0o755
			}
			if err := os.WriteFile(p, b, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
}
