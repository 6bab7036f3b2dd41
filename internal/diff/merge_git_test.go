package diff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// triple is a merge input.
type triple struct {
	name               string
	base, ours, theirs []byte
}

// editLines returns lines with up to n random runs inserted, deleted or
// replaced, new lines drawn from line.
func editLines(r *rand.Rand, lines []string, n int, line func() string) []string {
	out := append([]string{}, lines...)
	for range r.IntN(n + 1) {
		at := r.IntN(len(out) + 1)
		del := min(r.IntN(3), len(out)-at)
		var ins []string
		for range r.IntN(3) {
			ins = append(ins, line())
		}
		out = append(out[:at], append(ins, out[at+del:]...)...)
	}
	return out
}

func mergeTriples(seed uint64, n int) []triple {
	r := rand.New(rand.NewPCG(seed, 2))
	vocab := []string{"", "}", "{", "\treturn nil", "a", "b", "x := 1", "// note"}
	line := func() string {
		if r.IntN(2) == 0 {
			return fmt.Sprintf("line %d", r.IntN(100000))
		}
		return vocab[r.IntN(len(vocab))]
	}
	join := func(ls []string) []byte {
		if len(ls) == 0 {
			return nil
		}
		s := strings.Join(ls, "\n")
		if r.IntN(6) != 0 {
			s += "\n"
		}
		return []byte(s)
	}
	ts := []triple{
		{"only ours changed", []byte("a\nb\nc\n"), []byte("a\nB\nc\n"), []byte("a\nb\nc\n")},
		{"only theirs changed", []byte("a\nb\nc\n"), []byte("a\nb\nc\n"), []byte("a\nb\nC\n")},
		{"separate changes", []byte("1\n2\n3\n4\n5\n6\n"), []byte("one\n2\n3\n4\n5\n6\n"), []byte("1\n2\n3\n4\n5\nsix\n")},
		{"same change", []byte("a\nb\nc\n"), []byte("a\nX\nc\n"), []byte("a\nX\nc\n")},
		{"conflict", []byte("a\nb\nc\n"), []byte("a\nX\nc\n"), []byte("a\nY\nc\n")},
		{"adjacent changes conflict", []byte("a\nb\nc\nd\n"), []byte("a\nB\nc\nd\n"), []byte("a\nb\nC\nd\n")},
		{"insertions at one place", []byte("a\nb\n"), []byte("a\nx\nb\n"), []byte("a\ny\nb\n")},
		{"empty base", nil, []byte("a\n"), []byte("b\n")},
		{"no final newline", []byte("a\nb"), []byte("A\nb"), []byte("a\nB")},
		{"crlf", []byte("1\r\n2\r\n3\r\n4\r\n5\r\n"), []byte("one\r\n2\r\n3\r\n4\r\n5\r\n"), []byte("1\r\n2\r\n3\r\n4\r\nfive\r\n")},
		{"overlap with common part", []byte("a\nb\nc\nd\ne\n"), []byte("a\nX\nc\nY\ne\n"), []byte("a\nZ\nc\nY\ne\n")},
	}
	for i := range n {
		var base []string
		for range r.IntN(40) {
			base = append(base, line())
		}
		ts = append(ts, triple{fmt.Sprintf("generated %d", i), join(base),
			join(editLines(r, base, 1+i%6, line)), join(editLines(r, base, 1+i%5, line))})
	}
	return ts
}

// TestMerge3MatchesGit compares Merge3 with `git merge-file -p`: a clean
// merge must give git's bytes; otherwise the number of conflicts must be
// git's (its exit code) for nearly all triples.
func TestMerge3MatchesGit(t *testing.T) {
	dir := t.TempDir()
	ts := mergeTriples(5, 400)
	var clean, conflicted, sameCount int
	for _, tr := range ts {
		for name, data := range map[string][]byte{"base": tr.base, "ours": tr.ours, "theirs": tr.theirs} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, e, code := git(t, dir, nil, "merge-file", "-p", "ours", "base", "theirs")
		if code < 0 || code > 100 {
			t.Fatalf("%s: git merge-file: exit %d: %s", tr.name, code, e)
		}
		merged, conflicts := Merge3(tr.base, tr.ours, tr.theirs)
		if code == 0 {
			clean++
		} else {
			conflicted++
		}
		if len(conflicts) == code {
			sameCount++
		} else {
			t.Logf("%s: %d conflicts, git %d\nbase %q\nours %q\ntheirs %q", tr.name, len(conflicts), code, tr.base, tr.ours, tr.theirs)
		}
		if len(conflicts) == 0 && code == 0 && !bytes.Equal(merged, out) {
			t.Errorf("%s: merged %q, git %q", tr.name, merged, out)
		}
		if len(conflicts) > 0 && merged != nil {
			t.Errorf("%s: conflicts and merged content %q", tr.name, merged)
		}
		for _, c := range conflicts {
			if c.BaseStart < 0 || c.BaseEnd < c.BaseStart || c.BaseEnd > bytes.Count(tr.base, []byte("\n"))+1 ||
				!bytes.Equal(c.Base, join(splitLines(tr.base)[c.BaseStart:c.BaseEnd])) ||
				!bytes.Contains(tr.ours, c.Ours) || !bytes.Contains(tr.theirs, c.Theirs) {
				t.Errorf("%s: bad conflict %+v", tr.name, c)
			}
		}
		if strings.HasPrefix(tr.name, "generated") {
			continue
		}
		if (code == 0) != (len(conflicts) == 0) {
			t.Errorf("%s: %d conflicts, git %d", tr.name, len(conflicts), code)
		}
	}
	t.Logf("%d triples: %d clean and %d conflicted for git; conflict count equal to git's for %d (%.1f%%)",
		len(ts), clean, conflicted, sameCount, 100*float64(sameCount)/float64(len(ts)))
	if clean < len(ts)/5 || conflicted < len(ts)/5 {
		t.Errorf("the triples do not mix clean merges and conflicts")
	}
	if sameCount < len(ts)*95/100 {
		t.Errorf("conflict count equal to git's for only %d of %d triples", sameCount, len(ts))
	}
}
