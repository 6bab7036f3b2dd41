package proposal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var baseFiles = map[string]string{
	"README.md":          "# demo\n\nA small project.\n",
	"main.go":            "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
	"lib/util.go":        "package lib\n\n" + strings.Repeat("// line of a long file\n", 40) + "func A() int { return 1 }\n",
	"lib/old_name.go":    "package lib\n\n" + strings.Repeat("// renamed content line\n", 30),
	"lib/similar.go":     "package lib\n\n" + strings.Repeat("// similar content line\n", 30),
	"scripts/run.sh":     "#!/bin/sh\necho run\n",
	"scripts/tool.sh*":   "#!/bin/sh\necho tool\n",
	"crlf.txt":           "one\r\ntwo\r\nthree\r\n",
	"nonl.txt":           "no newline at end",
	"gone.txt":           "to be deleted\n",
	"empty-gone.txt":     "",
	"bin/data.bin":       "\x00\x01\x02binary\x00" + strings.Repeat("\xff\xfe", 100),
	"docs/ä dir/ü.md":    "umlaut\n",
	"docs/space name.md": "spaces\n",
	"link":               "->main.go",
	"link2":              "->README.md",
	"typechange":         "->README.md",
	"tab\tname.txt":      "tab\n",
	"quote\"name.txt":    "quote\n",
}

// oracle applies the proposal's patch to a copy of input/ with real git
// and checks that the result is work/, byte for byte and mode for mode.
func oracle(t *testing.T, f *fixture, skip ...string) []byte {
	t.Helper()
	patch, err := os.ReadFile(filepath.Join(f.sb.Dirs().Proposal, PatchFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := copyTree(t, f.sb.Dirs().Input)
	if _, err := tryGit(t, dir, patch, "apply", "--check", "-"); err != nil {
		t.Fatalf("git apply --check refuses our patch: %v\n%s", err, patch)
	}
	runGit(t, dir, patch, "apply", "-")
	want := readTree(t, f.work(), skip...)
	if diff := cmp.Diff(want, readTree(t, dir)); diff != "" {
		t.Fatalf("git apply of our patch does not give work/ (-want +got):\n%s\npatch:\n%s", diff, patch)
	}
	return patch
}

func TestCreateGitOracle(t *testing.T) {
	f := newFixture(t, baseFiles)
	f.edit(t, map[string]string{
		"README.md":              "# demo\n\nA small project, edited.\n",
		"main.go":                "package main\n\nfunc main() {\n\tprintln(\"hello, world\")\n}\n",
		"lib/util.go":            "package lib\n\n" + strings.Repeat("// line of a long file\n", 40) + "func A() int { return 2 }\n",
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
		"link2":                  "->README.md",
		"tab\tname.txt":          "tab, edited\n",
		"quote\"name.txt":        "quote, edited\n",
	}, "lib/old_name.go", "lib/similar.go", "gone.txt", "empty-gone.txt")
	now := time.Date(2026, 2, 19, 0, 0, 0, 0, time.UTC)
	p, err := Create(context.Background(), f.sb, &CreateOptions{Notes: "fix", TestLog: []byte("ok\n"), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	oracle(t, f)
	got := map[string]Status{}
	for _, c := range p.ChangedFiles {
		got[c.Path] = c.Status
		if c.Status == Renamed {
			got[c.OldPath+" ->"] = Renamed
		}
	}
	want := map[string]Status{
		"README.md": Modified, "main.go": Modified, "lib/util.go": Modified,
		"lib/new_name.go": Renamed, "lib/old_name.go ->": Renamed,
		"lib/similar_renamed.go": Renamed, "lib/similar.go ->": Renamed,
		"scripts/run.sh": Modified, "scripts/tool.sh": Modified, "crlf.txt": Modified, "nonl.txt": Modified,
		"added.txt": Added, "added-empty.txt": Added, "added/deep/dir/x.txt": Added,
		"bin/data.bin": Modified, "bin/new.bin": Added, "docs/ä dir/ü.md": Modified, "docs/ö-new.md": Added,
		"docs/space name.md": Modified, "link": Modified, "newlink": Added, "typechange": Modified,
		"gone.txt": Deleted, "empty-gone.txt": Deleted, "tab\tname.txt": Modified, "quote\"name.txt": Modified,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	// The files on disk agree with the returned proposal.
	loaded, err := Load(f.sb.Dirs().Proposal)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, loaded); diff != "" {
		t.Errorf("Load (-create +load):\n%s", diff)
	}
	if !strings.HasPrefix(p.ID, "sha256:") || p.Base.GitHead == "" || p.RunID != "run1" || p.AgentID != "worker" {
		t.Errorf("proposal header: %+v", p)
	}
	sum, _ := os.ReadFile(filepath.Join(f.sb.Dirs().Proposal, SummaryFile))
	for _, s := range []string{"lib/old_name.go", "renamed", "added.txt", "fix"} {
		if !strings.Contains(string(sum), s) {
			t.Errorf("summary.md lacks %q:\n%s", s, sum)
		}
	}
	if tl, _ := os.ReadFile(filepath.Join(f.sb.Dirs().Proposal, TestLogFile)); string(tl) != "ok\n" {
		t.Errorf("test.log = %q", tl)
	}
	evs, err := ReadEvents(f.sb.Dirs().Proposal)
	if err != nil || len(evs) != 1 || evs[0].Type != EventCreated || evs[0].ProposalID != p.ID {
		t.Errorf("events = %+v, %v", evs, err)
	}
}

// TestCreateMatchesGitDiff compares our headers with git's own for the
// same change, line by line outside the hunks.
func TestCreateHeadersMatchGit(t *testing.T) {
	f := newFixture(t, baseFiles)
	f.edit(t, map[string]string{
		"docs/space name.md": "spaces, edited\n",
		"docs/ä dir/ü.md":    "umlaut, edited\n",
		"scripts/run.sh*":    "#!/bin/sh\necho run\n",
		"tab\tname.txt":      "tab, edited\n",
		"lib/new_name.go":    "package lib\n\n" + strings.Repeat("// renamed content line\n", 30),
		"added-empty.txt":    "",
	}, "lib/old_name.go", "gone.txt")
	if _, err := Create(context.Background(), f.sb, nil); err != nil {
		t.Fatal(err)
	}
	ours := oracle(t, f)
	// git's own patch, from the project with work/ copied over it.
	project := f.ws.ProjectRoot
	for p, e := range readTree(t, f.work()) {
		name := p
		if e.Mode == "100755" {
			name += "*"
		}
		if e.Mode == "120000" {
			writeTree(t, project, map[string]string{name: "->" + e.Data})
		} else {
			writeTree(t, project, map[string]string{name: e.Data})
		}
	}
	os.Remove(filepath.Join(project, "lib/old_name.go"))
	os.Remove(filepath.Join(project, "gone.txt"))
	runGit(t, project, nil, "add", "-A")
	theirs := runGit(t, project, nil, "diff", "--cached", "--full-index", "--binary", "-M")
	headers := func(p []byte) []string {
		var out []string
		for _, l := range strings.SplitAfter(string(p), "\n") {
			if !strings.HasPrefix(l, "@@") && !strings.HasPrefix(l, " ") && !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---") {
				out = append(out, l)
			}
		}
		return out
	}
	if diff := cmp.Diff(headers(theirs), headers(ours)); diff != "" {
		t.Errorf("headers differ from git diff's (-git +ours):\n%s", diff)
	}
}

func TestCreateReadsOnlyChangedFiles(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	// Corrupt the baseline copy of b.txt: Create must not read it, since
	// work/b.txt is unchanged by size and time.
	in := filepath.Join(f.sb.Dirs().Input, "b.txt")
	os.Chmod(in, 0o644)
	fi, _ := os.Stat(in)
	if err := os.WriteFile(in, []byte("X\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(in, fi.ModTime(), fi.ModTime())
	f.edit(t, map[string]string{"a.txt": "a2\n"})
	if _, err := Create(context.Background(), f.sb, nil); err != nil {
		t.Fatalf("Create read an unchanged file: %v", err)
	}
	// Now touch work/b.txt: it is read, compared, and the tampered
	// baseline is detected.
	os.Chtimes(filepath.Join(f.work(), "b.txt"), time.Now(), time.Now())
	f.edit(t, map[string]string{"b.txt": "c\n"})
	if _, err := Create(context.Background(), f.sb, nil); err == nil || !strings.Contains(err.Error(), "input/ was modified") {
		t.Fatalf("Create with a tampered baseline: %v", err)
	}
}

func TestCreateExcluded(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n", "big.bin": "\x00small"})
	f.edit(t, map[string]string{
		"node_modules/x/index.js": "x\n",
		"sub/dist/out.js":         "out\n",
		"escape":                  "->../../outside",
		"abs":                     "->/etc/passwd",
		"big.bin":                 "\x00" + strings.Repeat("z", 200),
		"ok.txt":                  "ok\n",
	})
	p, err := Create(context.Background(), f.sb, &CreateOptions{MaxBinaryBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range p.Excluded {
		paths = append(paths, e.Path)
	}
	want := []string{"abs", "big.bin", "escape", "node_modules/", "sub/dist/"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("excluded (-want +got):\n%s", diff)
	}
	if len(p.ChangedFiles) != 1 || p.ChangedFiles[0].Path != "ok.txt" {
		t.Errorf("changed = %+v", p.ChangedFiles)
	}
	// Allowing dist proposes its files; .git cannot be allowed.
	p, err = Create(context.Background(), f.sb, &CreateOptions{MaxBinaryBytes: 100, Allow: []string{"DIST", ".git"}})
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for _, c := range p.ChangedFiles {
		changed = append(changed, c.Path)
	}
	if diff := cmp.Diff([]string{"ok.txt", "sub/dist/out.js"}, changed); diff != "" {
		t.Errorf("with Allow (-want +got):\n%s", diff)
	}
	sum, _ := os.ReadFile(filepath.Join(f.sb.Dirs().Proposal, SummaryFile))
	if !strings.Contains(string(sum), "Not included") || !strings.Contains(string(sum), "MaxBinaryBytes") {
		t.Errorf("summary does not report exclusions:\n%s", sum)
	}
}

func TestCreateNoChanges(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"})
	p, err := Create(context.Background(), f.sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ChangedFiles) != 0 || p.PatchSHA256 != sha256Hex(nil) {
		t.Errorf("empty proposal: %+v", p)
	}
}
