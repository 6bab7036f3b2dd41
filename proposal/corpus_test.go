package proposal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/workspace"
)

// newFile is a patch that creates name with one line.
func newFile(name, mode string) string {
	return fmt.Sprintf("diff --git a/%s b/%s\nnew file mode %s\nindex 0000000..e69de29\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+pwned\n", name, name, mode, name)
}

func newLink(name, target string) string {
	return fmt.Sprintf("diff --git a/%s b/%s\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+%s\n\\ No newline at end of file\n", name, name, name, target)
}

// maliciousPatches is the corpus: every patch must be refused, with the
// project (its .git included) and its parent directory unchanged.
var maliciousPatches = []struct {
	name  string
	patch string
	want  error
}{
	{"dotdot new file", newFile("../evil.txt", "100644"), ErrPathPolicy},
	{"nested dotdot", newFile("sub/../../evil.txt", "100644"), ErrPathPolicy},
	{"dot element", newFile("./a.txt", "100644"), ErrPathPolicy},
	{"absolute path, inconsistent header", "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ /tmp/evil.txt\n@@ -0,0 +1 @@\n+pwned\n", ErrPatch},
	{"absolute path, plain unified diff", "--- /dev/null\n+++ /tmp/evil.txt\n@@ -0,0 +1 @@\n+pwned\n", ErrPathPolicy},
	{"absolute path in rename", "diff --git a/a.txt b/x\nsimilarity index 100%\nrename from a.txt\nrename to /tmp/evil.txt\n", ErrPathPolicy},
	{"absolute via b//", newFile("/tmp/evil.txt", "100644"), ErrPatch},
	{"git hook", newFile(".git/hooks/pre-commit", "100755"), ErrPathPolicy},
	{"GIT upper case", newFile(".GIT/config", "100644"), ErrPathPolicy},
	{"Git mixed case", newFile(".Git/hooks/post-checkout", "100755"), ErrPathPolicy},
	{"git trailing dot", newFile(".git./config", "100644"), ErrPathPolicy},
	{"git trailing space", newFile(".git /config", "100644"), ErrPathPolicy},
	{"NTFS short name", newFile("git~1/config", "100644"), ErrPathPolicy},
	{"HFS ignorable", newFile(".g\u200cit/config", "100644"), ErrPathPolicy},
	{"HFS BOM", newFile("\ufeff.git/config", "100644"), ErrPathPolicy},
	{"NTFS stream", newFile(".git::$INDEX_ALLOCATION/config", "100644"), ErrPathPolicy},
	{"nested .git", newFile("sub/.git/config", "100644"), ErrPathPolicy},
	{"internal dir", newFile(".paddock/state.json", "100644"), ErrPathPolicy},
	{"backslash", newFile(`..\evil.txt`, "100644"), ErrPathPolicy},
	{"drive letter", newFile("C:/evil.txt", "100644"), ErrPathPolicy},
	{"double slash", newFile("sub//x.txt", "100644"), ErrPatch},
	{"rename through existing symlink", "diff --git a/a.txt b/evillink/a.txt\nsimilarity index 100%\nrename from a.txt\nrename to evillink/a.txt\n", ErrPathPolicy},
	{"symlink chain out", newLink("sub/l2", "../..") + newLink("l1", "sub/l2"), ErrPathPolicy},
	// x/up -> ".." is "." by itself, and esc's target is "x/secret.txt" as
	// a string; the kernel follows x/up first and lands above the project.
	{"symlink chain through a link the patch adds", newLink("y/up", "..") + newLink("esc", "y/up/../outside.txt"), ErrPathPolicy},
	{"symlink chain through a link the project has", newLink("esc", "x/up/../outside.txt"), ErrPathPolicy},
	{"symlink chain through the project's absolute link", newLink("esc", "evillink/outside.txt"), ErrPathPolicy},
	{"symlink dotdot after a missing name", newLink("esc", "missing/../a.txt"), ErrPathPolicy},
	{"control character", "diff --git \"a/x\\ny\" \"b/x\\ny\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/x\\ny\"\n@@ -0,0 +1 @@\n+pwned\n", ErrPathPolicy},
	{"NUL in quoted name", "diff --git \"a/x\\000y\" \"b/x\\000y\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/x\\000y\"\n@@ -0,0 +1 @@\n+pwned\n", nil},
	{"long path", newFile(strings.Repeat("d/", 2100)+"x", "100644"), ErrPathPolicy},
	{"long element", newFile(strings.Repeat("x", 300), "100644"), ErrPathPolicy},
	{"symlink out", newLink("out", "../../etc"), ErrPathPolicy},
	{"symlink absolute", newLink("out", "/etc/passwd"), ErrPathPolicy},
	{"symlink into .git", newLink("hooks", ".git/hooks"), ErrPathPolicy},
	{"symlink then write through", newLink("lnk", "sub") + newFile("lnk/x.txt", "100644"), ErrPathPolicy},
	{"write through existing symlink", newFile("evillink/x.txt", "100644"), ErrPathPolicy},
	{"setuid", newFile("suid", "104755"), ErrPathPolicy},
	{"setgid mode change", "diff --git a/a.txt b/a.txt\nold mode 100644\nnew mode 102755\n", ErrPathPolicy},
	{"world writable mode", newFile("w", "100777"), ErrPathPolicy},
	{"directory mode", newFile("d", "040000"), ErrPathPolicy},
	{"submodule", "diff --git a/m b/m\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/m\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n", ErrPathPolicy},
	{"rename out of tree", "diff --git a/a.txt b/../a.txt\nsimilarity index 100%\nrename from a.txt\nrename to ../a.txt\n", ErrPathPolicy},
	{"rename into .git", "diff --git a/a.txt b/.git/config\nsimilarity index 100%\nrename from a.txt\nrename to .git/config\n", ErrPathPolicy},
	{"delete git index", "diff --git a/.git/index b/.git/index\ndeleted file mode 100644\n--- a/.git/index\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", ErrPathPolicy},
	{"copy from git config", "diff --git a/.git/config b/x\nsimilarity index 100%\ncopy from .git/config\ncopy to x\n", nil},
	{"file and dir", newFile("fd", "100644") + newFile("fd/x", "100644"), ErrPathPolicy},
	{"same path twice", newFile("twice", "100644") + newFile("twice", "100644"), ErrPathPolicy},
	{"huge hunk count", "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,999999999 @@\n-a\n+b\n", ErrPatch},
	{"huge literal", "diff --git a/x.bin b/x.bin\nnew file mode 100644\nindex 0000000..1234567\nGIT binary patch\nliteral 99999999999\nzcmV?d00001\n\n", ErrPatch},
	{"binary without data", "diff --git a/x.bin b/x.bin\nnew file mode 100644\nindex 0000000..1234567\nBinary files /dev/null and b/x.bin differ\n", ErrPatch},
	{"malformed header", "diff --git a/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", nil},
	{"garbage", "this is not a patch\n", ErrPatch},
	{"hunk mismatch", "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-not the content\n+b\n", ErrDrift},
	{"delete with other content", "diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-other\n", ErrDrift},
	{"modify existing link as file", "diff --git a/evillink b/evillink\n--- a/evillink\n+++ b/evillink\n@@ -1 +1 @@\n-x\n+y\n", ErrDrift},
	{"overwrite existing file as new", newFile("a.txt", "100644"), ErrDrift},
	{"one bad file among good", newFile("good.txt", "100644") + newFile("../bad.txt", "100644"), ErrPathPolicy},
}

func TestMaliciousPatches(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "project")
	os.MkdirAll(project, 0o755)
	writeTree(t, project, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n", "evillink": "->" + root, "x/up": "->.."})
	os.WriteFile(filepath.Join(root, "outside.txt"), []byte("outside\n"), 0o644)
	runGit(t, project, nil, "init", "-q")
	runGit(t, project, nil, "add", "-A")
	runGit(t, project, nil, "commit", "-qm", "base")
	ws := workspace.Paths{ProjectRoot: project, StateRoot: t.TempDir(), WorkspaceID: "ws"}
	before := treeHash(t, root)
	for _, c := range maliciousPatches {
		t.Run(c.name, func(t *testing.T) {
			_, err := ApplyPatch(context.Background(), ws, []byte(c.patch), nil)
			if err == nil {
				t.Fatalf("accepted:\n%s", c.patch)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %v, want one wrapping %v", err, c.want)
			}
			if got := treeHash(t, root); got != before {
				t.Fatal("the project or its parent changed")
			}
		})
	}
	if n := len(maliciousPatches); n < 30 {
		t.Errorf("corpus has %d attacks, want at least 30", n)
	}
}

// TestMaliciousProposal checks that Apply of a well-formed proposal, with
// a correct id and hashes, still runs the path policy.
func TestMaliciousProposal(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"})
	f.edit(t, map[string]string{"a.txt": "b\n"})
	ctx := context.Background()
	p, err := Create(ctx, f.sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := f.sb.Dirs().Proposal
	patch := newFile(".git/hooks/pre-commit", "100755")
	p.ChangedFiles = []FileChange{{Path: ".git/hooks/pre-commit", Status: Added, NewMode: "100755", After: sha256Hex([]byte("pwned\n"))}}
	p.PatchSHA256 = sha256Hex([]byte(patch))
	p.ID, _ = p.computeID()
	js, _ := p.Marshal()
	os.WriteFile(filepath.Join(dir, PatchFile), []byte(patch), 0o644)
	os.WriteFile(filepath.Join(dir, JSONFile), js, 0o644)
	before := treeHash(t, f.ws.ProjectRoot)
	if _, err := Apply(ctx, f.ws, dir, nil); !errors.Is(err, ErrPathPolicy) {
		t.Fatalf("err = %v", err)
	}
	if treeHash(t, f.ws.ProjectRoot) != before {
		t.Fatal("project changed")
	}
}
