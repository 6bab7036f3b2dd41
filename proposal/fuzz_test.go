package proposal

import (
	"context"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/workspace"
)

var policySeeds = []string{
	"a.txt", "src/main.go", "../x", "/abs", ".git/config", ".GIT/x", ".git./x", "git~1/x",
	".g\u200cit/x", "a//b", "a/./b", "C:/x", `a\b`, "docs/ä dir/ü.md", "tab\tname", "x\ny", ".paddock/x",
}

func FuzzCheckPath(f *testing.F) {
	for _, s := range policySeeds {
		f.Add(s)
	}
	pol := &Policy{Internal: []string{".state"}}
	f.Fuzz(func(t *testing.T, name string) {
		if err := pol.CheckPath(name); err != nil {
			return
		}
		// An accepted path is relative, clean, and names nothing internal.
		if path.IsAbs(name) || path.Clean(name) != name || name == "." || strings.HasPrefix(name, "../") || name == ".." {
			t.Fatalf("accepted %q", name)
		}
		for _, e := range strings.Split(name, "/") {
			n := normElement(e)
			if n == ".git" || n == "git~1" || n == ".paddock" || n == ".state" || e == ".." || e == "." || e == "" {
				t.Fatalf("accepted %q (element %q)", name, e)
			}
		}
		// A link to an accepted path from the top stays inside.
		if err := pol.CheckSymlink("link", name); err != nil {
			t.Fatalf("link to accepted %q refused: %v", name, err)
		}
	})
}

// FuzzCheckSymlink checks CheckSymlink against the file system: the link
// is created in a real project nested a few directories deep in a temp
// directory, every directory its target names is created (so the kernel
// can walk it), and an accepted link must never resolve, by
// filepath.EvalSymlinks, outside the project, nor open through os.Root
// as something outside it.
func FuzzCheckSymlink(f *testing.F) {
	for _, s := range policySeeds {
		f.Add("dir/link", s)
	}
	f.Add("a/b/c", "../../x")
	f.Add("a/b/c", "../../../x")
	f.Add("a/link", "../a/../../x")
	f.Add("link", "d/e/../../f")
	f.Fuzz(func(t *testing.T, name, target string) {
		if (&Policy{}).CheckSymlink(name, target) != nil {
			return
		}
		tmp := t.TempDir()
		outer := filepath.Join(tmp, "o1", "o2", "o3")
		project := filepath.Join(outer, "project")
		hostName := filepath.Join(project, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(hostName), 0o755); err != nil {
			t.Skip("cannot create the link's directory:", err)
		}
		// Create the directories the target walks through, as long as
		// they are inside tmp.
		cur := filepath.Dir(hostName)
		for _, e := range strings.Split(target, "/") {
			switch e {
			case "", ".":
				continue
			case "..":
				cur = filepath.Dir(cur)
				continue
			}
			cur = filepath.Join(cur, e)
			if !strings.HasPrefix(cur, tmp+string(filepath.Separator)) || cur == hostName {
				break
			}
			os.MkdirAll(cur, 0o755) // best effort: the oracle only judges what resolves
		}
		if err := os.Symlink(target, hostName); err != nil {
			t.Skip("cannot create the link:", err)
		}
		real, err := filepath.EvalSymlinks(hostName)
		if err != nil {
			return // does not resolve: nothing outside is reachable
		}
		realProject, err := filepath.EvalSymlinks(project)
		if err != nil {
			t.Fatal(err)
		}
		if real != realProject && !strings.HasPrefix(real, realProject+string(filepath.Separator)) {
			t.Fatalf("accepted link %q -> %q resolves to %s, outside %s", name, target, real, realProject)
		}
		root, err := os.OpenRoot(project)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		if _, err := root.Stat(filepath.FromSlash(name)); err != nil {
			t.Fatalf("accepted link %q -> %q resolves to %s but os.Root refuses it: %v", name, target, real, err)
		}
	})
}

// FuzzApplyPatch feeds arbitrary patches to ApplyPatch over an in-memory
// project: it must never panic, and a refused patch leaves the project as
// it was; an accepted one touches only paths the policy accepts. The same
// patch is then applied to a real project (with a link x/up -> "..", so
// chains through existing links are explored): a refused patch leaves it
// and its parent as they were, and after an accepted one every symbolic
// link in the project that resolves (filepath.EvalSymlinks) resolves
// inside it.
func FuzzApplyPatch(f *testing.F) {
	for _, c := range maliciousPatches {
		f.Add([]byte(c.patch))
	}
	f.Add(crashPatch(f))
	f.Add([]byte(newLink("l", "sub/b.txt") + newLink("m", "l")))
	f.Add([]byte(newLink("n/l", "../x/up/a.txt")))
	f.Add([]byte(newLink("y/up", "..") + newLink("esc", "y/up/..")))
	f.Add([]byte(newLink("esc", "x/up/../outside.txt")))
	f.Fuzz(func(t *testing.T, patch []byte) {
		if len(patch) > 1<<16 {
			return
		}
		fsys := newCrashFS(t)
		before := snapshot(t, fsys, "/project")
		_, err := ApplyPatch(context.Background(), crashWS, patch, &ApplyOptions{fs: fsys})
		after := snapshot(t, fsys, "/project")
		if err != nil {
			if !cmp.Equal(before, after) {
				t.Fatalf("refused patch changed the project: %v\n%s", err, cmp.Diff(before, after))
			}
		} else {
			for p := range after {
				if _, ok := before[p]; ok {
					continue
				}
				rel := strings.TrimPrefix(p, "/project/")
				if err := (&Policy{}).CheckPath(rel); err != nil {
					t.Fatalf("accepted patch created %s: %v", p, err)
				}
			}
		}

		tmp := t.TempDir()
		project := filepath.Join(tmp, "o1", "o2", "project")
		files := map[string]string{"x/up": "->.."}
		for name, data := range crashBase {
			files[name] = data
		}
		writeTree(t, project, files)
		if err := os.WriteFile(filepath.Join(tmp, "o1", "o2", "outside.txt"), []byte("outside\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		ws := workspace.Paths{ProjectRoot: project, StateRoot: filepath.Join(tmp, "state"), WorkspaceID: "ws"}
		hashBefore := treeHash(t, filepath.Join(tmp, "o1"))
		if _, err := ApplyPatch(context.Background(), ws, patch, nil); err != nil {
			if treeHash(t, filepath.Join(tmp, "o1")) != hashBefore {
				t.Fatalf("refused patch changed the project or its parent: %v", err)
			}
			return
		}
		realProject, err := filepath.EvalSymlinks(project)
		if err != nil {
			t.Fatal(err)
		}
		filepath.WalkDir(project, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil // dangling: reaches nothing
			}
			if real != realProject && !strings.HasPrefix(real, realProject+string(filepath.Separator)) {
				target, _ := os.Readlink(p)
				t.Fatalf("after an accepted patch, %s -> %q resolves to %s, outside the project\n%s", p, target, real, patch)
			}
			return nil
		})
	})
}

// FuzzParseHandoff checks that whatever Parse accepts, Format gives back
// text that Parse reads as the same Handoff.
func FuzzParseHandoff(f *testing.F) {
	f.Add(exampleHandoff.Format())
	f.Add("HANDOFF\nContext: x\nGoal: y\nChangedFiles:\n- a\n")
	f.Add("HANDOFF\nContext:\n  multi\n  line\nNext:\n- a\n- b\n")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHandoff(s)
		if err != nil {
			return
		}
		h2, err := ParseHandoff(h.Format())
		if err != nil {
			t.Fatalf("Parse(Format(h)): %v\n%s", err, h.Format())
		}
		if diff := cmp.Diff(h, h2); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s\n%s", diff, h.Format())
		}
	})
}
