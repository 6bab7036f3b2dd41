package proposal

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

func FuzzCheckSymlink(f *testing.F) {
	for _, s := range policySeeds {
		f.Add("dir/link", s)
	}
	f.Add("a/b/c", "../../x")
	f.Add("a/b/c", "../../../x")
	f.Fuzz(func(t *testing.T, name, target string) {
		if (&Policy{}).CheckSymlink(name, target) != nil {
			return
		}
		r := path.Join(path.Dir(name), target)
		if path.IsAbs(target) || r == ".." || strings.HasPrefix(r, "../") {
			t.Fatalf("accepted link %q -> %q (resolves to %q)", name, target, r)
		}
	})
}

// FuzzApplyPatch feeds arbitrary patches to ApplyPatch over an in-memory
// project: it must never panic, and a refused patch leaves the project as
// it was; an accepted one touches only paths the policy accepts.
func FuzzApplyPatch(f *testing.F) {
	for _, c := range maliciousPatches {
		f.Add([]byte(c.patch))
	}
	f.Add(crashPatch(f))
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
			return
		}
		for p := range after {
			if _, ok := before[p]; ok {
				continue
			}
			rel := strings.TrimPrefix(p, "/project/")
			if err := (&Policy{}).CheckPath(rel); err != nil {
				t.Fatalf("accepted patch created %s: %v", p, err)
			}
		}
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
