package proposal

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	st := replayCommits(t, src, commits, commits)
	t.Logf("%d proposals applied: %s", st.applied, st)
}

// replayStats counts what a replay carried.
type replayStats struct {
	applied      int // proposals applied
	files        map[Status]int
	added, deled int // lines
}

func (s replayStats) String() string {
	var parts []string
	for _, st := range slices.Sorted(maps.Keys(s.files)) {
		parts = append(parts, fmt.Sprintf("%d %s", s.files[st], st))
	}
	return fmt.Sprintf("files %s; lines +%d -%d", strings.Join(parts, ", "), s.added, s.deled)
}

// replayCommits replays commits (oldest first) of the git repository src
// through proposals and returns what they carried: the project starts as
// git's tree of commits[0]; for each next commit a sandbox is prepared,
// work/ is made git's tree of that commit (git archive), Create makes the
// proposal, real git checks its patch against the project (git apply
// --check), Apply brings it into the project, and the project must then be
// that tree, byte for byte and mode for mode. labels[i] names commits[i] in
// failure messages (a hash, or a release's version).
func replayCommits(t *testing.T, src string, commits, labels []string) replayStats {
	t.Helper()
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
	st := replayStats{files: map[Status]int{}}
	for i, c := range commits[1:] {
		step := fmt.Sprintf("%s -> %s", labels[i], labels[i+1])
		run := fmt.Sprintf("r%04d", i)
		sb, err := sandbox.Prepare(ctx, ws, run, "replay", sandbox.Selection{"."},
			&sandbox.PrepareOptions{Symlinks: sandbox.CopySymlinksInside, Allow: []string{"node_modules", "dist"}, MaxFiles: -1, MaxBytes: -1})
		if err != nil {
			t.Fatalf("%s: prepare: %v", step, err)
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
			t.Fatalf("%s: create: %v", step, err)
		}
		if len(p.Excluded) > 0 {
			t.Fatalf("%s: excluded %v", step, p.Excluded)
		}
		for _, f := range p.ChangedFiles {
			st.files[f.Status]++
			st.added += f.LinesAdded
			st.deled += f.LinesDeleted
		}
		if len(p.ChangedFiles) > 0 {
			patch, err := os.ReadFile(filepath.Join(sb.Dirs().Proposal, "changes.patch"))
			if err != nil {
				t.Fatal(err)
			}
			if out, err := tryGit(t, project, patch, "apply", "--check", "-"); err != nil {
				t.Fatalf("%s: git apply --check refuses our patch: %v\n%s", step, err, out)
			}
		}
		if _, err := Apply(ctx, ws, sb.Dirs().Proposal, nil); err != nil {
			t.Fatalf("%s: apply: %v", step, err)
		}
		if diff := cmp.Diff(readTree(t, work), readTree(t, project)); diff != "" {
			t.Fatalf("%s: project after Apply is not git's tree (-git +ours):\n%s", step, diff)
		}
		if err := sandbox.Destroy(ctx, ws, run, "replay"); err != nil {
			t.Fatal(err)
		}
		st.applied++
	}
	return st
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
