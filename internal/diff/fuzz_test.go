package diff

import (
	"bytes"
	"testing"
)

// FuzzUnified diffs any two inputs and applies the hunks back to a with
// the strict applier of apply_test.go: the result must be b, the stats
// must count the hunks' lines, and equal inputs must give no output.
func FuzzUnified(f *testing.F) {
	for _, p := range handPairs() {
		if len(p.a)+len(p.b) < 10000 {
			f.Add(p.a, p.b, uint8(3))
		}
	}
	for _, p := range genPairs(9, 30) {
		f.Add(p.a, p.b, uint8(len(p.a)%5))
	}
	f.Fuzz(func(t *testing.T, a, b []byte, context uint8) {
		var buf bytes.Buffer
		st, err := Unified(&buf, a, b, int(context%8))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(a, b) {
			if buf.Len() != 0 || st != (Stats{}) {
				t.Fatalf("equal inputs gave %q, %+v", buf.Bytes(), st)
			}
			return
		}
		got, err := applyHunks(a, buf.Bytes())
		if err != nil {
			t.Fatalf("%v\npatch:\n%s", err, buf.Bytes())
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("applying gave %q, want %q\npatch:\n%s", got, b, buf.Bytes())
		}
		var added, deleted int
		for _, l := range splitLines(buf.Bytes()) {
			switch l[0] {
			case '+':
				added++
			case '-':
				deleted++
			}
		}
		if st != (Stats{Added: added, Deleted: deleted}) {
			t.Fatalf("stats %+v, the hunks have %d added and %d deleted lines", st, added, deleted)
		}
	})
}

// FuzzMerge3 merges any three inputs: it must not panic; a clean merge
// must hold every run of lines that ours or theirs inserted, and equal
// theirs when ours is the base (and the other way round); conflicts must
// hold lines of ours and theirs and their base lines must be base's
// (their sides may be equal: as in git, conflicts joined across the lines
// between them are not checked again).
func FuzzMerge3(f *testing.F) {
	for _, tr := range mergeTriples(11, 40) {
		f.Add(tr.base, tr.ours, tr.theirs)
	}
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte) {
		merged, conflicts := Merge3(base, ours, theirs)
		if len(conflicts) > 0 {
			if merged != nil {
				t.Fatalf("conflicts and merged content %q", merged)
			}
			bl := splitLines(base)
			for _, c := range conflicts {
				if c.BaseStart < 0 || c.BaseEnd < c.BaseStart || c.BaseEnd > len(bl) {
					t.Fatalf("conflict base lines [%d, %d) out of [0, %d)", c.BaseStart, c.BaseEnd, len(bl))
				}
				if !bytes.Equal(c.Base, join(bl[c.BaseStart:c.BaseEnd])) ||
					!bytes.Contains(ours, c.Ours) || !bytes.Contains(theirs, c.Theirs) {
					t.Fatalf("bad conflict %+v", c)
				}
			}
			return
		}
		switch {
		case bytes.Equal(base, ours) && !bytes.Equal(merged, theirs):
			t.Fatalf("ours is base but merged %q is not theirs %q", merged, theirs)
		case bytes.Equal(base, theirs) && !bytes.Equal(merged, ours):
			t.Fatalf("theirs is base but merged %q is not ours %q", merged, ours)
		}
		bl := splitLines(base)
		for _, side := range [][]byte{ours, theirs} {
			s := diffLines(bl, splitLines(side), false)
			for _, c := range s.changes() {
				if ins := join(s.b[c.i2 : c.i2+c.n2]); !bytes.Contains(merged, ins) {
					t.Fatalf("merged %q lacks the inserted %q", merged, ins)
				}
			}
		}
	})
}

func TestMerge3CleanIsNonNil(t *testing.T) {
	for _, c := range [][3]string{{"", "", ""}, {"a\n", "", "a\n"}, {"a\n", "a\n", ""}, {"a\nb\nc\n", "b\nc\n", "a\nb\n"}} {
		merged, conflicts := Merge3([]byte(c[0]), []byte(c[1]), []byte(c[2]))
		if merged == nil || len(conflicts) != 0 {
			t.Errorf("Merge3(%q) = %q, %v: want a clean, non-nil merge", c, merged, conflicts)
		}
	}
}
