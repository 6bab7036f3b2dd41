package proposal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/workspace"
)

// TestApplyPatchSymlinkChain is the reproduction of the review: x/up -> ".."
// is "." by itself and esc -> x/up/../secret.txt is "x/secret.txt" as a
// string, but the kernel resolves esc above the project. Both the patch
// that adds both links and the one that adds esc to a project that has
// x/up must be refused, and nothing may be written.
func TestApplyPatchSymlinkChain(t *testing.T) {
	for _, tc := range []struct {
		name     string
		existing map[string]string
		patch    string
	}{
		{"both links in the patch", nil, newLink("x/up", "..") + newLink("esc", "x/up/../secret.txt")},
		{"first link in the project", map[string]string{"x/up": "->.."}, newLink("esc", "x/up/../secret.txt")},
		{"a link to a link that leaves", map[string]string{"x/up": "->.."}, newLink("d/p", "../x/up/..") + newLink("esc", "d/p/secret.txt")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			project := filepath.Join(root, "project")
			writeTree(t, project, map[string]string{"a.txt": "a\n"})
			writeTree(t, project, tc.existing)
			if err := os.WriteFile(filepath.Join(root, "secret.txt"), []byte("secret\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			ws := workspace.Paths{ProjectRoot: project, StateRoot: t.TempDir(), WorkspaceID: "ws"}
			before := treeHash(t, root)
			_, err := ApplyPatch(context.Background(), ws, []byte(tc.patch), nil)
			if err == nil {
				data, _ := os.ReadFile(filepath.Join(project, "esc"))
				t.Fatalf("accepted; project/esc reads %q", data)
			}
			if !errors.Is(err, ErrPathPolicy) {
				t.Errorf("error %v, want one wrapping ErrPathPolicy", err)
			}
			if treeHash(t, root) != before {
				t.Fatal("the project or its parent changed")
			}
		})
	}
}

// TestApplyPatchSymlinkThroughLinkInside checks that links through other
// links are still accepted when they stay inside.
func TestApplyPatchSymlinkThroughLinkInside(t *testing.T) {
	project := filepath.Join(t.TempDir(), "project")
	writeTree(t, project, map[string]string{"sub/b.txt": "b\n", "docs": "->sub"})
	ws := workspace.Paths{ProjectRoot: project, StateRoot: t.TempDir(), WorkspaceID: "ws"}
	patch := newLink("readme", "docs/b.txt") + newLink("y/s", "../sub") + newLink("z", "y/s/../docs/b.txt")
	if _, err := ApplyPatch(context.Background(), ws, []byte(patch), nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"readme", "z"} {
		if data, err := os.ReadFile(filepath.Join(project, name)); err != nil || string(data) != "b\n" {
			t.Errorf("%s reads %q, %v", name, data, err)
		}
	}
}

// TestCreateExcludesLinksApplyRefuses checks that Create reports as
// Excluded every link Apply would refuse: targets in .git or .paddock,
// backslashes, drive letters, and chains that leave through other links.
func TestCreateExcludesLinksApplyRefuses(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"})
	f.edit(t, map[string]string{
		"hooks":    "->.git/hooks",
		"state":    "->.paddock",
		"back":     `->..\..\x`,
		"drive":    "->C:x",
		"x/up":     "->..",
		"esc":      "->x/up/../outside",
		"fine":     "->a.txt",
		"viaup":    "->x/up/a.txt",
		"sub/dots": "->../a.txt",
	})
	p, err := Create(context.Background(), f.sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	var excluded, changed []string
	for _, e := range p.Excluded {
		excluded = append(excluded, e.Path)
	}
	for _, c := range p.ChangedFiles {
		changed = append(changed, c.Path)
	}
	if diff := cmp.Diff([]string{"back", "drive", "esc", "hooks", "state"}, excluded); diff != "" {
		t.Errorf("excluded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fine", "sub/dots", "viaup", "x/up"}, changed); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}
	// What Create proposes, Apply accepts.
	if _, err := Apply(context.Background(), f.ws, f.sb.Dirs().Proposal, nil); err != nil {
		t.Fatalf("Apply refused what Create proposed: %v", err)
	}
}

// TestCreateFileSwappedForLink swaps a work/ file for a symbolic link
// after the walk, as a worker still running could: the outside content
// must never reach the patch.
func TestCreateFileSwappedForLink(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, target string }{
		{"outside", secret},
		{"inside", "other.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, map[string]string{"a.txt": "a\n", "other.txt": "PRIVATE KEY\n"})
			f.edit(t, map[string]string{"a.txt": "changed\n", "new.txt": "new\n"})
			testHookAfterWalk = func(work string) {
				for _, n := range []string{"a.txt", "new.txt"} {
					p := filepath.Join(work, n)
					if err := os.Remove(p); err != nil {
						t.Error(err)
					}
					if err := os.Symlink(tc.target, p); err != nil {
						t.Error(err)
					}
				}
			}
			defer func() { testHookAfterWalk = nil }()
			_, err := Create(context.Background(), f.sb, nil)
			if err == nil {
				patch, _ := os.ReadFile(filepath.Join(f.sb.Dirs().Proposal, PatchFile))
				t.Fatalf("Create succeeded with a swapped file; patch:\n%s", patch)
			}
			if patch, _ := os.ReadFile(filepath.Join(f.sb.Dirs().Proposal, PatchFile)); strings.Contains(string(patch), "PRIVATE") {
				t.Fatalf("the patch holds the swapped-in content:\n%s", patch)
			}
			if !strings.Contains(err.Error(), "a.txt") && !strings.Contains(err.Error(), "new.txt") {
				t.Errorf("error %v names neither swapped file", err)
			}
		})
	}
}

// TestApplyPatchLinkTurnsProjectLinkOut checks the project's own links: e
// -> m/../a.txt goes nowhere while m does not exist, and a patch adding m
// -> x/up (with x/up -> "..", so m is the project itself) would make e
// read above the project. The patch is refused, naming e.
func TestApplyPatchLinkTurnsProjectLinkOut(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	writeTree(t, project, map[string]string{"a.txt": "a\n", "x/up": "->..", "e": "->m/../a.txt", "out": "->/etc"})
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws := workspace.Paths{ProjectRoot: project, StateRoot: t.TempDir(), WorkspaceID: "ws"}
	before := treeHash(t, root)
	_, err := ApplyPatch(context.Background(), ws, []byte(newLink("m", "x/up")), nil)
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.Path != "e" {
		data, _ := os.ReadFile(filepath.Join(project, "e"))
		t.Fatalf("error %v, want a *PolicyError for e (e reads %q)", err, data)
	}
	if treeHash(t, root) != before {
		t.Fatal("the project or its parent changed")
	}
	// A link that leaves the project already (out -> /etc) is not the
	// patch's doing: a harmless link is still accepted beside it.
	if _, err := ApplyPatch(context.Background(), ws, []byte(newLink("m", "x")), nil); err != nil {
		t.Fatal(err)
	}
}
