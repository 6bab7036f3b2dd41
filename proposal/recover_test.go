package proposal

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/internal/vfs"
	"github.com/paddockdev/paddock/workspace"
)

// dieFS stops the process's work (a panic the test catches) at its n-th
// mutating call, on the real file system: what a killed process leaves.
type dieFS struct {
	osFS
	n, calls int
}

type died struct{}

func (f *dieFS) tick() {
	f.calls++
	if f.calls-1 == f.n {
		panic(died{})
	}
}

func (f *dieFS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if flag&os.O_CREATE != 0 {
		f.tick()
	}
	return f.osFS.OpenFile(name, flag, perm)
}
func (f *dieFS) Rename(a, b string) error { f.tick(); return f.osFS.Rename(a, b) }
func (f *dieFS) Remove(name string) error { f.tick(); return f.osFS.Remove(name) }
func (f *dieFS) MkdirAll(name string, perm fs.FileMode) error {
	f.tick()
	return f.osFS.MkdirAll(name, perm)
}
func (f *dieFS) SyncDir(name string) error { f.tick(); return f.osFS.SyncDir(name) }

// TestRecoverAfterKill kills ApplyPatch at every file system call on a real
// directory; Recover then leaves the project exactly before or after.
func TestRecoverAfterKill(t *testing.T) {
	patch := crashPatch(t)
	setup := func() workspace.Paths {
		root := t.TempDir()
		project := filepath.Join(root, "project")
		os.MkdirAll(project, 0o755)
		writeTree(t, project, crashBase)
		return workspace.Paths{ProjectRoot: project, StateRoot: filepath.Join(root, "state"), WorkspaceID: "ws"}
	}
	ws := setup()
	before := readTree(t, ws.ProjectRoot)
	probe := &dieFS{osFS: osFS{vfs.OS}, n: -1}
	if _, err := ApplyPatch(context.Background(), ws, patch, &ApplyOptions{fs: probe}); err != nil {
		t.Fatal(err)
	}
	after := readTree(t, ws.ProjectRoot)
	for k := range probe.calls {
		ws := setup()
		func() {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(died); !ok {
						panic(r)
					}
				}
			}()
			ApplyPatch(context.Background(), ws, patch, &ApplyOptions{fs: &dieFS{osFS: osFS{vfs.OS}, n: k}})
		}()
		if _, err := Recover(context.Background(), ws); err != nil {
			t.Fatalf("kill at %d: Recover: %v", k, err)
		}
		got := readTree(t, ws.ProjectRoot)
		if !cmp.Equal(got, before) && !cmp.Equal(got, after) {
			t.Fatalf("kill at %d: half-applied (-before +got):\n%s", k, cmp.Diff(before, got))
		}
		if again, err := Recover(context.Background(), ws); again || err != nil {
			t.Fatalf("kill at %d: second Recover: %v %v", k, again, err)
		}
		// Nothing of ours is left in the project.
		filepath.WalkDir(ws.ProjectRoot, func(p string, d fs.DirEntry, err error) error {
			if err == nil && len(d.Name()) > 9 && d.Name()[:9] == ".paddock-" {
				t.Errorf("kill at %d: left %s", k, p)
			}
			return nil
		})
		if cmp.Equal(got, before) {
			if _, err := os.Stat(filepath.Join(ws.ProjectRoot, "sub")); err != nil {
				t.Errorf("kill at %d: rolled back but sub/ is gone", k)
			}
		}
	}
}
