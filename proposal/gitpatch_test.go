package proposal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/workspace"
)

// TestApplyGitPatches applies patches that real git diff produces to a copy
// of the base tree and checks that the result is git's, byte for byte.
func TestApplyGitPatches(t *testing.T) {
	repo := filepath.Join(t.TempDir(), "repo")
	os.MkdirAll(repo, 0o755)
	writeTree(t, repo, baseFiles)
	runGit(t, repo, nil, "init", "-q")
	runGit(t, repo, nil, "add", "-A")
	runGit(t, repo, nil, "commit", "-qm", "base")
	base := copyTree(t, repo)
	// The change, made in the work tree.
	for _, r := range []string{"lib/old_name.go", "lib/similar.go", "gone.txt", "empty-gone.txt"} {
		os.Remove(filepath.Join(repo, r))
	}
	writeTree(t, repo, map[string]string{
		"README.md":              "# demo\n\nA small project, edited.\n",
		"lib/util.go":            "package lib\n\n" + strings.Repeat("// line of a long file\n", 20) + "// inserted\n" + strings.Repeat("// line of a long file\n", 20) + "func A() int { return 2 }\n",
		"lib/new_name.go":        "package lib\n\n" + strings.Repeat("// renamed content line\n", 30),
		"lib/similar_renamed.go": "package lib\n\n" + strings.Repeat("// similar content line\n", 28) + "// changed\n",
		"scripts/run.sh*":        "#!/bin/sh\necho run\n",
		"scripts/tool.sh":        "#!/bin/sh\necho tool v2\n",
		"crlf.txt":               "one\r\ntwo, edited\r\nthree\r\n",
		"nonl.txt":               "no newline at end, still",
		"added.txt":              "new file\n",
		"added-empty.txt":        "",
		"added/deep/dir/x.txt":   "deep\n",
		"bin/data.bin":           "\x00\x01\x02binary\x00" + strings.Repeat("\xff\xfd", 100),
		"bin/new.bin":            "\x00new binary",
		"docs/ä dir/ü.md":        "umlaut, edited\n",
		"docs/ö-new.md":          "new non-ASCII\n",
		"docs/space name.md":     "spaces, edited\n",
		"link":                   "->lib/util.go",
		"newlink":                "->docs",
		"typechange":             "now a file\n",
		"tab\tname.txt":          "tab, edited\n",
	})
	runGit(t, repo, nil, "add", "-A")
	want := readTree(t, repo)
	for _, args := range [][]string{
		{"diff", "--cached", "--binary", "-M"},
		{"diff", "--cached", "--binary", "--no-renames"},
		{"diff", "--cached", "--binary", "-M", "-U1"},
		{"-c", "core.quotepath=false", "diff", "--cached", "--binary", "-M"},
		{"diff", "--cached", "--binary", "-M", "--src-prefix=a/", "--dst-prefix=b/", "--stat", "-p"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			patch := runGit(t, repo, nil, args...)
			project := copyTree(t, base)
			ws := workspace.Paths{ProjectRoot: project, StateRoot: t.TempDir(), WorkspaceID: "ws"}
			res, err := ApplyPatch(context.Background(), ws, patch, &ApplyOptions{Reverse: true})
			if err != nil {
				t.Fatalf("%v\npatch:\n%s", err, patch)
			}
			if diff := cmp.Diff(want, readTree(t, project)); diff != "" {
				t.Fatalf("ApplyPatch of git's patch differs from git's tree (-git +ours):\n%s", diff)
			}
			// Our reverse patch takes the project back, by real git.
			runGit(t, project, res.Reverse, "apply", "-")
			if diff := cmp.Diff(readTree(t, base), readTree(t, project)); diff != "" {
				t.Fatalf("git apply of our reverse patch (-base +got):\n%s", diff)
			}
		})
	}
}
