package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/workspace"
)

// testTime is the modification time of the files writeTree creates.
var testTime = time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)

// writeTree creates files under dir: a name ending in "/" is a directory,
// "name -> target" a symbolic link, anything else a file whose contents are
// its name.
func writeTree(t testing.TB, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if name, target, ok := strings.Cut(n, " -> "); ok {
			p := filepath.Join(dir, name)
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.Symlink(target, p))
			continue
		}
		p := filepath.Join(dir, n)
		if strings.HasSuffix(n, "/") {
			must(t, os.MkdirAll(p, 0o755))
			continue
		}
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(n), 0o644))
		must(t, os.Chtimes(p, testTime, testTime))
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// newPaths returns workspace paths for a new project directory, with the
// state root outside the project or, when inside is set, in
// <project>/.paddock.
func newPaths(t testing.TB, inside bool) workspace.Paths {
	t.Helper()
	base := t.TempDir()
	project := filepath.Join(base, "project")
	state := filepath.Join(base, "state")
	if inside {
		state = filepath.Join(project, ".paddock")
	}
	must(t, os.MkdirAll(project, 0o755))
	ws, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: state, AllowStateInProject: inside})
	must(t, err)
	return ws
}

// listTree returns the paths below dir ('/'-separated), links as
// "name -> target".
func listTree(t testing.TB, dir string) []string {
	t.Helper()
	var got []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			rel += " -> " + target
		case d.IsDir():
			rel += "/"
		}
		got = append(got, rel)
		return nil
	})
	must(t, err)
	return got
}

// assertNothingLeft checks that a failed Prepare left no sandbox and no
// temporary directory.
func assertNothingLeft(t *testing.T, ws workspace.Paths) {
	t.Helper()
	des, err := os.ReadDir(ws.SandboxesDir())
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	must(t, err)
	for _, de := range des {
		if left := listTree(t, filepath.Join(ws.SandboxesDir(), de.Name())); len(left) > 0 {
			t.Errorf("failed Prepare left %v in %s", left, de.Name())
		}
	}
}

func TestPrepare(t *testing.T) {
	ws := newPaths(t, false)
	writeTree(t, ws.ProjectRoot, "a.txt", "src/x.go", "src/sub/y.txt", "src/empty", "other.txt")
	must(t, os.WriteFile(filepath.Join(ws.ProjectRoot, "src/empty"), nil, 0o600))
	must(t, os.Chmod(filepath.Join(ws.ProjectRoot, "src/x.go"), 0o755))
	must(t, os.Chmod(filepath.Join(ws.ProjectRoot, "src/sub"), 0o750))
	must(t, os.Chtimes(filepath.Join(ws.ProjectRoot, "src/empty"), testTime, testTime))

	p, err := Prepare(context.Background(), ws, "run-1", "custom:coder/1", Selection{"a.txt", "src"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Dirs()
	want, err := Paths(ws, "run-1", "custom:coder/1")
	must(t, err)
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Dirs (-want +got):\n%s", diff)
	}
	wantTree := []string{"a.txt", "src/", "src/empty", "src/sub/", "src/sub/y.txt", "src/x.go"}
	for _, dir := range []string{d.Work, d.Input} {
		if diff := cmp.Diff(wantTree, listTree(t, dir)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", dir, diff)
		}
	}
	if diff := cmp.Diff([]string{"input/", "manifest.json", "proposal/", "work/"}, topLevel(t, d.Root)); diff != "" {
		t.Errorf("sandbox root (-want +got):\n%s", diff)
	}

	// The manifest, checked against sha256sum and the files themselves.
	m := p.Manifest()
	if m.Schema != ManifestSchema || m.Version != ManifestVersion || m.RunID != "run-1" || m.AgentID != "custom:coder/1" {
		t.Errorf("manifest header = %q %d %q %q", m.Schema, m.Version, m.RunID, m.AgentID)
	}
	if m.Base.ProjectRoot != ws.ProjectRoot || m.Base.GitHead != "" {
		t.Errorf("manifest base = %+v", m.Base)
	}
	var paths []string
	var total int64
	for _, f := range m.Files {
		paths = append(paths, f.Path)
		total += f.Size
		src := filepath.Join(ws.ProjectRoot, f.Path)
		if got := sha256sum(t, src); f.SHA256 != got {
			t.Errorf("%s: sha256 %s, sha256sum says %s", f.Path, f.SHA256, got)
		}
		fi, err := os.Stat(src)
		must(t, err)
		if f.Size != fi.Size() || f.Mode != fi.Mode().Perm() || !f.ModTime.Equal(testTime) {
			t.Errorf("%s: manifest says size %d mode %v mtime %v; want %d %v %v", f.Path, f.Size, f.Mode, f.ModTime, fi.Size(), fi.Mode().Perm(), testTime)
		}
		for _, tree := range []string{d.Work, d.Input} {
			cp := filepath.Join(tree, f.Path)
			if got := sha256sum(t, cp); got != f.SHA256 {
				t.Errorf("%s: contents differ from the project", cp)
			}
			ci, err := os.Stat(cp)
			must(t, err)
			wantMode := fi.Mode().Perm()
			if tree == d.Input {
				wantMode &^= 0o222
			}
			if ci.Mode().Perm() != wantMode || !ci.ModTime().Equal(testTime) {
				t.Errorf("%s: mode %v mtime %v, want %v %v", cp, ci.Mode().Perm(), ci.ModTime(), wantMode, testTime)
			}
		}
	}
	if diff := cmp.Diff([]string{"a.txt", "src/empty", "src/sub/y.txt", "src/x.go"}, paths); diff != "" {
		t.Errorf("manifest files (-want +got):\n%s", diff)
	}
	if m.TotalBytes != total {
		t.Errorf("TotalBytes = %d, want %d", m.TotalBytes, total)
	}

	// input/ is read-only. The test runs as root in CI, and root ignores
	// permission bits, so it checks the bits rather than trying a write.
	for _, c := range []struct {
		path string
		mode fs.FileMode
	}{
		{d.Input, 0o555}, {filepath.Join(d.Input, "src"), 0o555}, {filepath.Join(d.Input, "src/sub"), 0o550},
		{d.Work, 0o755}, {filepath.Join(d.Work, "src"), 0o755}, {filepath.Join(d.Work, "src/sub"), 0o750},
	} {
		fi, err := os.Stat(c.path)
		must(t, err)
		if fi.Mode().Perm() != c.mode {
			t.Errorf("%s: mode %v, want %v", c.path, fi.Mode().Perm(), c.mode)
		}
	}
	if os.Geteuid() != 0 {
		if err := os.WriteFile(filepath.Join(d.Input, "a.txt"), []byte("x"), 0o644); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("writing input/a.txt: %v, want a permission error", err)
		}
	}
	if diff := cmp.Diff([]string{"GIT_CEILING_DIRECTORIES=" + d.Root}, p.Env()); diff != "" {
		t.Errorf("Env (-want +got):\n%s", diff)
	}

	// Load round-trips the manifest.
	l, err := Load(ws, "run-1", "custom:coder/1")
	must(t, err)
	if diff := cmp.Diff(p.Manifest(), l.Manifest()); diff != "" {
		t.Errorf("Load manifest (-want +got):\n%s", diff)
	}

	// Preparing again is refused; after Destroy it works.
	_, err = Prepare(context.Background(), ws, "run-1", "custom:coder/1", Selection{"other.txt"}, nil)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Prepare: %v, want fs.ErrExist", err)
	}
	if got := listTree(t, d.Work); !slices.Equal(got, wantTree) {
		t.Errorf("the refused Prepare changed work/: %v", got)
	}
	must(t, Destroy(context.Background(), ws, "run-1", "custom:coder/1"))
	if _, err := os.Lstat(d.Root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Destroy: %v", err)
	}
	if _, err := os.Lstat(filepath.Dir(d.Root)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Destroy left the empty run directory: %v", err)
	}
	must(t, Destroy(context.Background(), ws, "run-1", "custom:coder/1")) // idempotent
	if _, err := Load(ws, "run-1", "custom:coder/1"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load after Destroy: %v, want fs.ErrNotExist", err)
	}
	p, err = Prepare(context.Background(), ws, "run-1", "custom:coder/1", Selection{"other.txt"}, nil)
	must(t, err)
	if diff := cmp.Diff([]string{"other.txt"}, listTree(t, p.Dirs().Work)); diff != "" {
		t.Errorf("work/ after re-Prepare (-want +got):\n%s", diff)
	}
}

func topLevel(t testing.TB, dir string) []string {
	des, err := os.ReadDir(dir)
	must(t, err)
	var names []string
	for _, de := range des {
		n := de.Name()
		if de.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	return names
}

func sha256sum(t testing.TB, name string) string {
	t.Helper()
	out, err := exec.Command("sha256sum", name).Output()
	if err != nil {
		t.Skipf("sha256sum: %v", err)
	}
	sum, _, _ := strings.Cut(string(out), " ")
	return sum
}

// TestDestroy checks that Destroy removes a tree a non-root user could not
// remove without first making directories writable, and leftovers of an
// interrupted Prepare.
func TestDestroy(t *testing.T) {
	ws := newPaths(t, false)
	writeTree(t, ws.ProjectRoot, "a/b/c.txt")
	p, err := Prepare(context.Background(), ws, "r", "a", Selection{"."}, nil)
	must(t, err)
	// A worker made a directory in work/ unreadable; a crash left a
	// temporary directory.
	locked := filepath.Join(p.Dirs().Work, "locked")
	must(t, os.MkdirAll(filepath.Join(locked, "x"), 0o755))
	must(t, os.Chmod(locked, 0))
	leftover := p.Dirs().Root + tmpInfix + "123"
	must(t, os.MkdirAll(filepath.Join(leftover, "input"), 0o755))
	must(t, os.Chmod(filepath.Join(leftover, "input"), 0o555))
	must(t, removeTreeForced(p.Dirs().Root, ws, "r", "a"))
	if got := listTree(t, ws.SandboxesDir()); len(got) != 0 {
		t.Errorf("Destroy left %v", got)
	}
}

func removeTreeForced(root string, ws workspace.Paths, run, agent string) error {
	return Destroy(context.Background(), ws, run, agent)
}

func TestPrepareCanceled(t *testing.T) {
	ws := newPaths(t, false)
	writeTree(t, ws.ProjectRoot, "a", "b", "c")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Prepare(ctx, ws, "r", "a", Selection{"."}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Prepare: %v, want context.Canceled", err)
	}
	assertNothingLeft(t, ws)
}

// TestPrepareCopyFailure fails the copy midway (a destination that cannot
// be created) and checks that nothing is left behind.
func TestPrepareCopyFailure(t *testing.T) {
	ws := newPaths(t, false)
	writeTree(t, ws.ProjectRoot, "a.txt", "b.txt")
	// A file where the sandboxes' run directory must go makes the
	// temporary directory impossible: a clean error, nothing created.
	must(t, os.MkdirAll(ws.SandboxesDir(), 0o700))
	must(t, os.WriteFile(filepath.Join(ws.SandboxesDir(), "r"), nil, 0o600))
	if _, err := Prepare(context.Background(), ws, "r", "a", Selection{"."}, nil); err == nil {
		t.Fatal("Prepare succeeded without a place to build the sandbox")
	}
	must(t, os.Remove(filepath.Join(ws.SandboxesDir(), "r")))
	assertNothingLeft(t, ws)
}

func TestPrepareSelects(t *testing.T) {
	tree := []string{
		"README.md", "go.mod", ".env",
		"src/main.go", "src/main_test.go", "src/util/u.go", "src/util/u.txt",
		"docs/a.md", "docs/deep/b.md",
		".git/HEAD", ".git/objects/x",
		"node_modules/p/index.js", "web/node_modules/q/i.js", "web/app.js",
		"dist/out.js", "web/dist/bundle.js", ".GIT/config",
		".paddock/state.json",
		"links/to-readme -> ../README.md", "links/to-docs -> ../docs", "links/chain -> to-readme",
		"links/self -> .", "links/via -> to-docs/deep/b.md",
	}
	tests := []struct {
		name string
		sel  Selection
		opts *PrepareOptions
		want []string // files and links in work/
	}{
		{"file", Selection{"go.mod"}, nil, []string{"go.mod"}},
		{"dot-slash and trailing slash", Selection{"./docs/", "docs//a.md"}, nil, []string{"docs/a.md", "docs/deep/b.md"}},
		{"whole project skips blocked dirs", Selection{"."}, nil, nil}, // filled below
		{"glob in dir", Selection{"src/*.go"}, nil, []string{"src/main.go", "src/main_test.go"}},
		{"double star", Selection{"**/*.go"}, nil, []string{"src/main.go", "src/main_test.go", "src/util/u.go"}},
		{"double star middle", Selection{"src/**/u.*"}, nil, []string{"src/util/u.go", "src/util/u.txt"}},
		{"trailing double star", Selection{"docs/**"}, nil, []string{"docs/a.md", "docs/deep/b.md"}},
		{"glob matching a directory expands it", Selection{"d*"}, nil, []string{"docs/a.md", "docs/deep/b.md"}},
		{"star matches dot files", Selection{"*.md", ".e*"}, nil, []string{".env", "README.md"}},
		{"glob skips blocked", Selection{"**/*.js"}, nil, []string{"web/app.js"}},
		{"overlap", Selection{"src", "src/main.go", "src/**"}, nil, []string{"src/main.go", "src/main_test.go", "src/util/u.go", "src/util/u.txt"}},
		{"allowed .git", Selection{".git/HEAD"}, &PrepareOptions{Allow: []string{".git"}}, []string{".git/HEAD"}},
		{"allowed node_modules in a glob", Selection{"**/*.js"}, &PrepareOptions{Allow: []string{"node_modules/", "dist"}},
			[]string{"dist/out.js", "node_modules/p/index.js", "web/app.js", "web/dist/bundle.js", "web/node_modules/q/i.js"}},
		{"links inside", Selection{"README.md", "docs", "links/to-readme", "links/to-docs", "links/chain", "links/via"}, &PrepareOptions{Symlinks: CopySymlinksInside},
			[]string{"README.md", "docs/a.md", "docs/deep/b.md", "links/chain -> to-readme", "links/to-docs -> ../docs", "links/to-readme -> ../README.md", "links/via -> to-docs/deep/b.md"}},
		{"link to its own directory", Selection{"links/self", "go.mod"}, &PrepareOptions{Symlinks: CopySymlinksInside}, []string{"go.mod", "links/self -> ."}},
		{"empty selection", nil, nil, nil},
	}
	tests[2].want = []string{".env", "README.md", "docs/a.md", "docs/deep/b.md", "go.mod", "src/main.go", "src/main_test.go", "src/util/u.go", "src/util/u.txt", "web/app.js"}
	ws := newPaths(t, true)
	writeTree(t, ws.ProjectRoot, tree...)
	// Links are refused by default; move them aside for "whole project".
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "whole project skips blocked dirs" {
				must(t, os.Rename(filepath.Join(ws.ProjectRoot, "links"), filepath.Join(ws.StateRoot, "links")))
				defer os.Rename(filepath.Join(ws.StateRoot, "links"), filepath.Join(ws.ProjectRoot, "links"))
			}
			run := strings.ReplaceAll(tt.name, " ", "-")
			p, err := Prepare(context.Background(), ws, run, "w", tt.sel, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range listTree(t, p.Dirs().Work) {
				if !strings.HasSuffix(e, "/") {
					got = append(got, e)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("work/ (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(listTree(t, p.Dirs().Work), listTree(t, p.Dirs().Input)); diff != "" {
				t.Errorf("input/ differs from work/ (-work +input):\n%s", diff)
			}
			var inManifest []string
			for _, f := range p.Manifest().Files {
				inManifest = append(inManifest, f.Path)
			}
			for _, l := range p.Manifest().Symlinks {
				inManifest = append(inManifest, l.Path+" -> "+l.Link)
			}
			slices.Sort(inManifest)
			if diff := cmp.Diff(tt.want, inManifest); diff != "" {
				t.Errorf("manifest (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPrepareRefuses(t *testing.T) {
	outside := t.TempDir()
	writeTree(t, outside, "secret.txt")
	copyInside := &PrepareOptions{Symlinks: CopySymlinksInside}
	tests := []struct {
		name  string
		tree  []string
		setup func(t *testing.T, project string)
		sel   Selection
		opts  *PrepareOptions
		want  error // matched with errors.Is; nil means only a *SelectionError
	}{
		{name: "dot dot", sel: Selection{".."}, want: ErrPathEscape},
		{name: "dot dot inside", tree: []string{"a/x"}, sel: Selection{"a/../../x"}, want: ErrPathEscape},
		{name: "dot dot that stays inside", tree: []string{"a/x", "x"}, sel: Selection{"a/../x"}, want: ErrPathEscape},
		{name: "absolute", sel: Selection{"/etc/passwd"}, want: ErrPathEscape},
		{name: "absolute to the project", setup: func(t *testing.T, p string) { writeTree(t, p, "a") }, sel: nil, want: nil},
		{name: "NUL", tree: []string{"a"}, sel: Selection{"a\x00/../../etc/passwd"}},
		{name: "empty", sel: Selection{""}},
		{name: "backslash", tree: []string{"a"}, sel: Selection{`a\..\..\x`}},
		{name: "bad glob", tree: []string{"a"}, sel: Selection{"[a"}, want: path.ErrBadPattern},
		{name: "missing", sel: Selection{"nope.txt"}, want: fs.ErrNotExist},
		{name: "glob matching nothing", tree: []string{"a.txt"}, sel: Selection{"*.go"}, want: fs.ErrNotExist},
		{name: "file as a directory", tree: []string{"a"}, sel: Selection{"a/b"}},
		{name: "symlink to /etc", tree: []string{"etc -> /etc"}, sel: Selection{"etc"}, want: ErrPathEscape},
		{name: "symlink to /etc, copy inside", tree: []string{"etc -> /etc"}, sel: Selection{"etc"}, opts: copyInside, want: ErrPathEscape},
		{name: "symlink through a parent to /etc", tree: []string{"etc -> /etc"}, sel: Selection{"etc/passwd"}, want: ErrPathEscape},
		{name: "symlink up and out", tree: []string{"d/up -> ../../x"}, sel: Selection{"d"}, want: ErrPathEscape},
		{name: "symlink chain leaving", tree: []string{"a -> b", "b -> c/../../outside", "c/"}, sel: Selection{"a"}, want: ErrPathEscape},
		{name: "symlink chain leaving, copy inside", tree: []string{"a -> b", "b -> ../outside"}, sel: Selection{"a", "b"}, opts: copyInside, want: ErrPathEscape},
		{name: "symlink through a linked dir's parent", tree: []string{"d/l -> .", "x"}, sel: Selection{"d", "x", "y"}, setup: func(t *testing.T, p string) {
			must(t, os.Symlink("l/../../../etc", filepath.Join(p, "y")))
		}, opts: copyInside, want: ErrPathEscape},
		{name: "symlink refused by default", tree: []string{"a", "l -> a"}, sel: Selection{"a", "l"}, want: ErrUnsafeFile},
		{name: "symlink refused in directory expansion", tree: []string{"d/a", "d/l -> a"}, sel: Selection{"d"}, want: ErrUnsafeFile},
		{name: "symlink to a file not selected", tree: []string{"a", "l -> a"}, sel: Selection{"l"}, opts: copyInside, want: ErrUnsafeFile},
		{name: "dangling symlink", tree: []string{"l -> nothing"}, sel: Selection{"l"}, opts: copyInside, want: ErrUnsafeFile},
		{name: "symlink loop", tree: []string{"a -> b", "b -> a"}, sel: Selection{"a", "b"}, opts: copyInside, want: ErrUnsafeFile},
		{name: "absolute symlink into the project", tree: []string{"a"}, setup: func(t *testing.T, p string) {
			must(t, os.Symlink(filepath.Join(p, "a"), filepath.Join(p, "l")))
		}, sel: Selection{"a", "l"}, opts: copyInside, want: ErrPathEscape},
		{name: "symlinked parent inside the project", tree: []string{"real/a", "ln -> real"}, sel: Selection{"ln/a"}, opts: copyInside, want: ErrUnsafeFile},
		{name: "hard link", tree: []string{"a"}, setup: func(t *testing.T, p string) {
			must(t, os.Link(filepath.Join(p, "a"), filepath.Join(p, "b")))
		}, sel: Selection{"b"}, want: ErrUnsafeFile},
		{name: "hard link to a file outside", setup: func(t *testing.T, p string) {
			must(t, os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(p, "s")))
		}, sel: Selection{"."}, want: ErrUnsafeFile},
		{name: "FIFO", setup: func(t *testing.T, p string) {
			must(t, syscall.Mkfifo(filepath.Join(p, "fifo"), 0o644))
		}, sel: Selection{"fifo"}, want: ErrUnsafeFile},
		{name: "FIFO in a directory", tree: []string{"d/a"}, setup: func(t *testing.T, p string) {
			must(t, syscall.Mkfifo(filepath.Join(p, "d/fifo"), 0o644))
		}, sel: Selection{"d"}, want: ErrUnsafeFile},
		{name: "device", setup: func(t *testing.T, p string) {
			if err := syscall.Mknod(filepath.Join(p, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Skipf("mknod: %v (needs root)", err)
			}
		}, sel: Selection{"null"}, want: ErrUnsafeFile},
		{name: ".git", tree: []string{".git/config"}, sel: Selection{".git/config"}, want: ErrBlocked},
		{name: ".git directory", tree: []string{".git/config"}, sel: Selection{".git"}, want: ErrBlocked},
		{name: ".GIT", tree: []string{".GIT/config"}, sel: Selection{".GIT/config"}, want: ErrBlocked},
		{name: "node_modules", tree: []string{"node_modules/x.js"}, sel: Selection{"node_modules/x.js"}, want: ErrBlocked},
		{name: "nested node_modules", tree: []string{"web/node_modules/x.js"}, sel: Selection{"web/node_modules/*.js"}, want: ErrBlocked},
		{name: "dist", tree: []string{"dist/a.js"}, sel: Selection{"dist/"}, want: ErrBlocked},
		{name: "dist allowed but not .git", tree: []string{".git/HEAD"}, sel: Selection{".git/HEAD"}, opts: &PrepareOptions{Allow: []string{"dist"}}, want: ErrBlocked},
		{name: "state directory", tree: []string{".paddock/x"}, sel: Selection{".paddock/x"}, opts: &PrepareOptions{Allow: []string{".git", "node_modules", "dist"}}, want: ErrBlocked},
		{name: "unknown Allow", tree: []string{"a"}, sel: Selection{"a"}, opts: &PrepareOptions{Allow: []string{"src"}}, want: nil},
		{name: "MaxFiles", tree: []string{"a", "b", "c"}, sel: Selection{"."}, opts: &PrepareOptions{MaxFiles: 2}, want: ErrLimit},
		{name: "MaxBytes", tree: []string{"aaaa", "bbbb", "cccc"}, sel: Selection{"."}, opts: &PrepareOptions{MaxBytes: 10}, want: ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := newPaths(t, true)
			writeTree(t, ws.ProjectRoot, tt.tree...)
			if tt.setup != nil {
				tt.setup(t, ws.ProjectRoot)
			}
			sel := tt.sel
			if tt.name == "absolute to the project" {
				sel = Selection{filepath.Join(ws.ProjectRoot, "a")}
				tt.want = ErrPathEscape
			}
			_, err := Prepare(context.Background(), ws, "r", "a", sel, tt.opts)
			if err == nil {
				t.Fatal("Prepare succeeded")
			}
			t.Log(err)
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Prepare: %v; want errors.Is %v", err, tt.want)
			}
			var se *SelectionError
			var le *LimitError
			if !errors.As(err, &se) && !errors.As(err, &le) && tt.name != "unknown Allow" {
				t.Errorf("Prepare: %v (%T), want a *SelectionError or *LimitError", err, err)
			}
			assertNothingLeft(t, ws)
		})
	}
}
