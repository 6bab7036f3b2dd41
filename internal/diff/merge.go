package diff

// Conflict is a region that [Merge3] could not merge: both sides changed
// the same or touching base lines, differently. (As in git, two nearby
// conflicts are reported as one, with the lines between them, and the two
// sides of such a joined conflict can happen to be equal.)
type Conflict struct {
	// BaseStart and BaseEnd are the base lines the conflict covers,
	// 0-based and half-open (equal when both sides inserted lines at the
	// same place).
	BaseStart, BaseEnd int
	// Base, Ours and Theirs are the conflicting lines of each version.
	Base, Ours, Theirs []byte
}

// Merge3 merges the changes from base to ours and from base to theirs,
// line by line, like `git merge-file` (at its default, zealous level):
// changes to separate base lines merge; changes to the same or adjacent
// base lines conflict, unless both sides made the same change; within a
// conflict, lines both sides agree on are merged, and conflicts at most
// three lines apart (or separated only by lines without a letter or digit)
// are joined. It returns the merged content (never nil, even when empty)
// and no conflicts when the merge is clean, and otherwise a nil merged
// content and the conflicts, in order (it never writes conflict markers).
// It merges any bytes as lines: callers check [IsBinary] first, as
// `git merge-file` refuses binary files.
func Merge3(base, ours, theirs []byte) (merged []byte, conflicts []Conflict) {
	bl, ol, tl := splitLines(base), splitLines(ours), splitLines(theirs)
	x1 := diffLines(bl, ol, false).changes()
	x2 := diffLines(bl, tl, false).changes()
	if len(x1) == 0 {
		return append([]byte{}, theirs...), nil
	}
	if len(x2) == 0 {
		return append([]byte{}, ours...), nil
	}
	ms := mergeRegions(x1, x2, len(bl), len(ol), len(tl), func(i1, i2, n int) bool {
		for k := range n {
			if string(ol[i1+k]) != string(tl[i2+k]) {
				return false
			}
		}
		return true
	})
	ms = refine(ms, ol, tl)
	ms = joinConflicts(ms, ol)

	for _, m := range ms {
		if m.mode == conflictMode {
			bs, be := baseRange(x1, m)
			conflicts = append(conflicts, Conflict{
				BaseStart: bs, BaseEnd: be,
				Base: join(bl[bs:be]), Ours: join(ol[m.i1 : m.i1+m.chg1]), Theirs: join(tl[m.i2 : m.i2+m.chg2]),
			})
		}
	}
	if len(conflicts) > 0 {
		return nil, conflicts
	}
	// Ours, with the regions only theirs changed taken from theirs.
	merged = make([]byte, 0, max(len(ours), len(theirs)))
	i := 0
	for _, m := range ms {
		if m.mode != theirsMode {
			continue
		}
		merged = appendLines(merged, ol[i:m.i1])
		merged = appendLines(merged, tl[m.i2:m.i2+m.chg2])
		i = m.i1 + m.chg1
	}
	return appendLines(merged, ol[i:]), nil
}

const (
	conflictMode = iota
	oursMode
	theirsMode
	sameMode // both sides made the same change
)

// region is a merge region: base lines [i0, i0+chg0) became ours
// [i1, i1+chg1) and theirs [i2, i2+chg2).
type region struct {
	mode                         int
	i0, chg0, i1, chg1, i2, chg2 int
	piece                        bool // cut out of a larger conflict by refine
}

// mergeRegions walks the changes base→ours (x1) and base→theirs (x2)
// together, as git's xdl_merge does: a change that ends before the other
// side's next one starts is that side's alone; overlapping or touching
// changes conflict unless they are the same; regions that overlap or touch
// in ours or theirs are joined.
func mergeRegions(x1, x2 []change, n0, n1, n2 int, same func(i1, i2, n int) bool) []region {
	var ms []region
	add := func(mode, i0, chg0, i1, chg1, i2, chg2 int) {
		if k := len(ms) - 1; k >= 0 && (i1 <= ms[k].i1+ms[k].chg1 || i2 <= ms[k].i2+ms[k].chg2) {
			m := &ms[k]
			if mode != m.mode {
				m.mode = conflictMode
			}
			m.chg0 = i0 + chg0 - m.i0
			m.chg1 = i1 + chg1 - m.i1
			m.chg2 = i2 + chg2 - m.i2
			return
		}
		ms = append(ms, region{mode: mode, i0: i0, chg0: chg0, i1: i1, chg1: chg1, i2: i2, chg2: chg2})
	}
	for len(x1) > 0 && len(x2) > 0 {
		a, b := x1[0], x2[0]
		if a.i1+a.n1 < b.i1 {
			add(oursMode, a.i1, a.n1, a.i2, a.n2, b.i2-b.i1+a.i1, a.n1)
			x1 = x1[1:]
			continue
		}
		if b.i1+b.n1 < a.i1 {
			add(theirsMode, b.i1, b.n1, a.i2-a.i1+b.i1, b.n1, b.i2, b.n2)
			x2 = x2[1:]
			continue
		}
		if a.i1 != b.i1 || a.n1 != b.n1 || a.n2 != b.n2 || !same(a.i2, b.i2, a.n2) {
			off := a.i1 - b.i1
			ffo := off + a.n1 - b.n1
			i0, i1, i2 := a.i1, a.i2, b.i2
			if off > 0 {
				i0 -= off
				i1 -= off
			} else {
				i2 += off
			}
			chg0 := a.i1 + a.n1 - i0
			chg1 := a.i2 + a.n2 - i1
			chg2 := b.i2 + b.n2 - i2
			if ffo < 0 {
				chg0 -= ffo
				chg1 -= ffo
			} else {
				chg2 += ffo
			}
			add(conflictMode, i0, chg0, i1, chg1, i2, chg2)
		}
		e1, e2 := a.i1+a.n1, b.i1+b.n1
		if e1 >= e2 {
			x2 = x2[1:]
		}
		if e2 >= e1 {
			x1 = x1[1:]
		}
	}
	for _, a := range x1 {
		add(oursMode, a.i1, a.n1, a.i2, a.n2, a.i1+n2-n0, a.n1)
	}
	for _, b := range x2 {
		add(theirsMode, b.i1, b.n1, b.i1+n1-n0, b.n1, b.i2, b.n2)
	}
	return ms
}

// refine diffs the two sides of each conflict where both sides have lines:
// a conflict whose sides are equal is resolved, and one whose sides share
// lines becomes one conflict per difference.
func refine(ms []region, ol, tl [][]byte) []region {
	out := make([]region, 0, len(ms))
	for _, m := range ms {
		if m.mode != conflictMode || m.chg1 == 0 || m.chg2 == 0 {
			out = append(out, m)
			continue
		}
		cs := diffLines(ol[m.i1:m.i1+m.chg1], tl[m.i2:m.i2+m.chg2], false).changes()
		if len(cs) == 0 {
			m.mode = sameMode
			out = append(out, m)
			continue
		}
		for _, c := range cs {
			out = append(out, region{mode: conflictMode, i0: m.i0, chg0: m.chg0,
				i1: m.i1 + c.i1, chg1: c.n1, i2: m.i2 + c.i2, chg2: c.n2, piece: true})
		}
	}
	return out
}

// joinConflicts joins neighbouring conflicts that are at most three lines
// of ours apart, or apart only by lines with no ASCII letter or digit.
func joinConflicts(ms []region, ol [][]byte) []region {
	out := ms[:0]
	for _, m := range ms {
		if k := len(out) - 1; k >= 0 && out[k].mode == conflictMode && m.mode == conflictMode {
			p := &out[k]
			begin, end := p.i1+p.chg1, m.i1
			if end-begin <= 3 || !hasAlnum(ol[begin:end]) {
				p.chg1 = m.i1 + m.chg1 - p.i1
				p.chg2 = m.i2 + m.chg2 - p.i2
				if p.i0 != m.i0 || p.chg0 != m.chg0 {
					// Pieces of different conflicts: the base range spans both.
					p.chg0 = m.i0 + m.chg0 - p.i0
				}
				p.piece = p.piece || m.piece
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

func hasAlnum(lines [][]byte) bool {
	for _, l := range lines {
		for _, c := range l {
			if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
				return true
			}
		}
	}
	return false
}

// baseRange returns the base lines of the conflict m: git's own base range
// for a conflict as found, and for one of the pieces that refining cut it
// into, the base lines that the piece's lines of ours replace (through the
// changes base→ours x1), within the whole conflict's.
func baseRange(x1 []change, m region) (int, int) {
	if !m.piece {
		return m.i0, m.i0 + m.chg0
	}
	lo, hi := m.i0, m.i0+m.chg0
	s := min(max(toBase(x1, m.i1, false), lo), hi)
	e := min(max(toBase(x1, m.i1+m.chg1, true), s), hi)
	return s, e
}

// toBase maps a line boundary p of ours to base: outside a change by the
// offset of the changes before it; inside one to the change's start when
// p starts a range, and to its end when p ends one (a deletion right at
// the end is taken in).
func toBase(x1 []change, p int, end bool) int {
	off := 0
	for _, c := range x1 {
		if end {
			if p < c.i2 || (p == c.i2 && c.n2 > 0) {
				break
			}
			if p <= c.i2+c.n2 {
				return c.i1 + c.n1
			}
		} else {
			if p <= c.i2 {
				break
			}
			if p < c.i2+c.n2 {
				return c.i1
			}
		}
		off = c.i1 + c.n1 - (c.i2 + c.n2)
	}
	return p + off
}

func join(lines [][]byte) []byte {
	return appendLines(nil, lines)
}

func appendLines(dst []byte, lines [][]byte) []byte {
	for _, l := range lines {
		dst = append(dst, l...)
	}
	return dst
}
