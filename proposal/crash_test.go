package proposal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/internal/crashfs"
	"github.com/paddockdev/paddock/internal/vfs"
	"github.com/paddockdev/paddock/workspace"
)

// The crash matrix: ApplyPatch runs on a fault-injecting file system that
// crashes at every mutating operation; every possible disk image must
// recover (Recover, or the next Apply) to the project before or after the
// patch, never a mix, and an acknowledged Apply must survive.

var crashWS = workspace.Paths{ProjectRoot: "/project", StateRoot: "/state", WorkspaceID: "ws"}

var crashBase = map[string]string{
	"a.txt":     "one\ntwo\nthree\n",
	"sub/b.txt": "b\n",
	"d.txt":     strings.Repeat("d line\n", 10),
	"f.sh":      "#!/bin/sh\n",
	"keep.txt":  "keep\n",
}

// crashPatch modifies, adds in new directories, deletes (emptying sub/),
// renames and changes a mode.
func crashPatch(t testing.TB) []byte {
	var b bytes.Buffer
	for _, d := range []*fileDiff{
		{oldPath: "a.txt", newPath: "a.txt", oldMode: modeFile, newMode: modeFile, old: []byte(crashBase["a.txt"]), new: []byte("one\n2\nthree\n")},
		{newPath: "new/dir/c.txt", newMode: modeFile, new: []byte("c\n")},
		{oldPath: "sub/b.txt", oldMode: modeFile, old: []byte("b\n")},
		{oldPath: "d.txt", newPath: "e.txt", oldMode: modeFile, newMode: modeFile, old: []byte(crashBase["d.txt"]), new: []byte(crashBase["d.txt"]), score: 100},
		{oldPath: "f.sh", newPath: "f.sh", oldMode: modeFile, newMode: modeExec, old: []byte(crashBase["f.sh"]), new: []byte(crashBase["f.sh"])},
	} {
		if _, _, err := writeFileDiff(&b, d, 3); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func newCrashFS(t testing.TB) *crashfs.FS {
	fsys := crashfs.New()
	for name, data := range crashBase {
		if err := fsys.WriteFile("/project/"+name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.WriteFile("/state/workspaces/ws/.keep", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return fsys
}

// snapshot lists every directory, file, mode and content below dir.
func snapshot(t testing.TB, fsys vfs.FS, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(string)
	walk = func(d string) {
		ents, err := fsys.ReadDir(d)
		if err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		for _, e := range ents {
			p := path.Join(d, e.Name())
			if e.IsDir() {
				out[p] = "dir"
				walk(p)
				continue
			}
			fi, err := fsys.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := vfs.ReadFile(fsys, p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = fmt.Sprintf("%v %q", fi.Mode().Perm(), b)
		}
	}
	walk(dir)
	return out
}

func crashApply(fsys vfs.FS, patch []byte, durable bool) error {
	_, err := ApplyPatch(context.Background(), crashWS, patch, &ApplyOptions{fs: fsys, Durable: durable})
	return err
}

func TestApplyCrashMatrix(t *testing.T) {
	patch := crashPatch(t)
	jpath := journalPath(crashWS)
	clean := newCrashFS(t)
	before := snapshot(t, clean, "/project")
	if err := crashApply(clean, patch, true); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, clean, "/project")
	if after["/project/f.sh"] != "-rwxr-xr-x \"#!/bin/sh\\n\"" || after["/project/sub"] != "" || after["/project/new/dir/c.txt"] == "" {
		t.Fatalf("after the patch: %v", after)
	}
	n := clean.Ops()
	sawBefore, sawAfter := false, false
	for k := range n {
		fsys := newCrashFS(t)
		fsys.CrashAt(k)
		err := crashApply(fsys, patch, true)
		if !fsys.Crashed() {
			t.Fatalf("crash %d did not fire", k)
		}
		for _, img := range fsys.Images() {
			f2 := img.FS()
			if _, err := recoverJournal(f2, jpath, "/project"); err != nil {
				t.Fatalf("crash at %d, image %s: recover: %v", k, img.Name, err)
			}
			got := snapshot(t, f2, "/project")
			switch {
			case cmp.Equal(got, before):
				sawBefore = true
				if err == nil {
					t.Fatalf("crash at %d, image %s: Apply succeeded but the project is as before", k, img.Name)
				}
			case cmp.Equal(got, after):
				sawAfter = true
			default:
				t.Fatalf("crash at %d, image %s: half-applied project (-before +got):\n%s", k, img.Name, cmp.Diff(before, got))
			}
			if _, err := f2.Stat(jpath); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("crash at %d, image %s: journal left after recovery: %v", k, img.Name, err)
			}
			// Recovering twice is recovering once.
			if again, err := recoverJournal(f2, jpath, "/project"); again != "" || err != nil {
				t.Fatalf("second recovery: %v %v", again, err)
			}
			// The next Apply works from the recovered state.
			if cmp.Equal(got, before) {
				if err := crashApply(f2, patch, true); err != nil {
					t.Fatalf("crash at %d, image %s: Apply after recovery: %v", k, img.Name, err)
				}
				if got := snapshot(t, f2, "/project"); !cmp.Equal(got, after) {
					t.Fatalf("Apply after recovery (-want +got):\n%s", cmp.Diff(after, got))
				}
			}
		}
	}
	if !sawBefore || !sawAfter {
		t.Errorf("crash points never left the project before (%v) or after (%v)", sawBefore, sawAfter)
	}
}

// faultFS fails its n-th mutating call once, with errFault, and otherwise
// passes calls through.
type faultFS struct {
	vfs.FS
	n, calls int
}

var errFault = errors.New("injected fault")

func (f *faultFS) fail() bool {
	f.calls++
	return f.calls-1 == f.n
}

func (f *faultFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if flag&(0x40|0x200) != 0 && f.fail() { // O_CREATE | O_TRUNC on Linux
		return nil, errFault
	}
	return f.FS.OpenFile(name, flag, perm)
}
func (f *faultFS) Rename(a, b string) error {
	if f.fail() {
		return errFault
	}
	return f.FS.Rename(a, b)
}
func (f *faultFS) Remove(name string) error {
	if f.fail() {
		return errFault
	}
	return f.FS.Remove(name)
}
func (f *faultFS) MkdirAll(name string, perm fs.FileMode) error {
	if f.fail() {
		return errFault
	}
	return f.FS.MkdirAll(name, perm)
}
func (f *faultFS) SyncDir(name string) error {
	if f.fail() {
		return errFault
	}
	return f.FS.SyncDir(name)
}

// TestApplyFaults fails every file system call of Apply in turn, in the
// running process: a failed Apply must leave the project as it was (rolled
// back at once, no journal left); an Apply that failed only while cleaning
// up after its commit reports success, and Recover finishes it.
func TestApplyFaults(t *testing.T) {
	patch := crashPatch(t)
	jpath := journalPath(crashWS)
	probe := &faultFS{FS: newCrashFS(t), n: -1}
	before := snapshot(t, probe, "/project")
	if err := crashApply(probe, patch, true); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, probe, "/project")
	for k := range probe.calls {
		for _, durable := range []bool{true, false} {
			fsys := &faultFS{FS: newCrashFS(t), n: k}
			err := crashApply(fsys, patch, durable)
			got := snapshot(t, fsys, "/project")
			if err != nil {
				if !errors.Is(err, errFault) {
					t.Fatalf("fault %d: error %v does not wrap the fault", k, err)
				}
				if !cmp.Equal(got, before) {
					t.Fatalf("fault %d (durable %v): failed Apply changed the project (-before +got):\n%s", k, durable, cmp.Diff(before, got))
				}
				if _, serr := fsys.Stat(jpath); !errors.Is(serr, fs.ErrNotExist) {
					t.Fatalf("fault %d: journal left after a rolled-back Apply", k)
				}
				continue
			}
			if _, err := recoverJournal(fsys, jpath, "/project"); err != nil {
				t.Fatal(err)
			}
			if got := snapshot(t, fsys, "/project"); !cmp.Equal(got, after) {
				t.Fatalf("fault %d: (-after +got):\n%s", k, cmp.Diff(after, got))
			}
		}
	}
}
