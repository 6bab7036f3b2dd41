package diff

import (
	"bytes"
)

// minCostLimit is the least number of edit steps the middle-snake search
// takes before it settles for a good split instead of the best one (git's
// XDL_MAX_COST_MIN); larger inputs get the square root of their length.
const minCostLimit = 256

// script is the result of a line diff: which lines of each side are
// changed (deleted from a, inserted in b). Unchanged lines pair up in order.
type script struct {
	a, b       [][]byte
	delA, insB []bool
}

// diffLines computes a shortest (or, for very different inputs, short) edit
// script from a to b and slides its change groups as git does, with its
// indent heuristic when indent is set.
func diffLines(a, b [][]byte, indent bool) *script {
	s := &script{a: a, b: b, delA: make([]bool, len(a)), insB: make([]bool, len(b))}

	// The common prefix and suffix, found by comparing bytes.
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	switch {
	case len(ma) == 0:
		mark(s.insB[pre : len(b)-suf])
	case len(mb) == 0:
		mark(s.delA[pre : len(a)-suf])
	default:
		s.middle(pre, ma, mb)
	}
	compact(s.a, s.delA, s.insB, indent)
	compact(s.b, s.insB, s.delA, indent)
	return s
}

func mark(flags []bool) {
	for i := range flags {
		flags[i] = true
	}
}

// middle diffs the lines ma and mb, which start at line pre of both sides.
// Lines are numbered by content. As git does, a line found on one side
// only is a change, and so is one found many times on the other side (at
// least the square root of its own side's length, in powers of two) that
// sits among such lines; the other lines are handed to the Myers search.
func (s *script) middle(pre int, ma, mb [][]byte) {
	ids := newInterner(len(s.a))
	var countA []int32 // occurrences of each id in all of a
	idOf := func(l []byte) int32 {
		id := ids.id(l, true)
		if int(id) == len(countA) {
			countA = append(countA, 0)
		}
		countA[id]++
		return id
	}
	idsA := make([]int32, len(ma))
	for i, l := range ma {
		idsA[i] = idOf(l)
	}
	// The common prefix and suffix count too: a line of b's middle that
	// a has only there still has a match, for git.
	for _, l := range s.a[:pre] {
		idOf(l)
	}
	for _, l := range s.a[pre+len(ma):] {
		idOf(l)
	}
	countB := make([]int32, len(countA)) // occurrences in all of b
	for _, l := range s.a[:pre] {
		countB[ids.id(l, false)]++
	}
	for _, l := range s.a[pre+len(ma):] {
		countB[ids.id(l, false)]++
	}
	idsB := make([]int32, len(mb))
	for i, l := range mb {
		id := ids.id(l, false)
		if id >= 0 {
			countB[id]++
		}
		idsB[i] = id
	}
	// Keep only the lines that could match; remember where they were.
	var m myers
	disA := classify(idsA, countB, len(s.a))
	runsA := newRuns(disA)
	for i, id := range idsA {
		if disA[i] == matches || (disA[i] == manyMatches && !runsA.amongChanges(i)) {
			m.ha = append(m.ha, id)
			m.ra = append(m.ra, pre+i)
		} else {
			s.delA[pre+i] = true
		}
	}
	disB := classify(idsB, countA, len(s.b))
	runsB := newRuns(disB)
	for i, id := range idsB {
		if disB[i] == matches || (disB[i] == manyMatches && !runsB.amongChanges(i)) {
			m.hb = append(m.hb, id)
			m.rb = append(m.rb, pre+i)
		} else {
			s.insB[pre+i] = true
		}
	}
	m.limit = max(minCostLimit, bogoSqrt(len(m.ha)+len(m.hb)+3))
	m.delA, m.insB = s.delA, s.insB
	m.compare(0, len(m.ha), 0, len(m.hb), false)
}

// How a line's matches on the other side are classified.
const (
	noMatch     = 0
	matches     = 1
	manyMatches = 2
)

// classify tells for each line (ids; -1 for none) whether it has no match
// in the other side (counts), some, or many: at least bogoSqrt(n), n
// being the length of its own side, and at most 1024.
func classify(ids []int32, counts []int32, n int) []byte {
	lim := int32(min(bogoSqrt(n), 1024))
	dis := make([]byte, len(ids))
	for i, id := range ids {
		switch {
		case id < 0 || counts[id] == 0:
			dis[i] = noMatch
		case counts[id] >= lim:
			dis[i] = manyMatches
		default:
			dis[i] = matches
		}
	}
	return dis
}

// bogoSqrt is git's rough square root: the power of two 2^k with
// 4^(k-1) <= n < 4^k.
func bogoSqrt(n int) int {
	i := 1
	for ; n > 0; n >>= 2 {
		i <<= 1
	}
	return i
}

// runs answers, for the lines classified by dis, whether a line with many
// matches sits among changes (see [runs.amongChanges]) in constant time.
type runs struct {
	none, many []int32 // counts of such lines in dis[:j]
	start, end []int32 // the run of lines that are not plain matches just before i starts at start[i]; the one just after ends at end[i]
}

func newRuns(dis []byte) *runs {
	n := len(dis)
	r := &runs{none: make([]int32, n+1), many: make([]int32, n+1), start: make([]int32, n), end: make([]int32, n)}
	for j, d := range dis {
		r.none[j+1], r.many[j+1] = r.none[j], r.many[j]
		switch d {
		case noMatch:
			r.none[j+1]++
		case manyMatches:
			r.many[j+1]++
		}
	}
	for i := range n {
		if i == 0 || dis[i-1] == matches {
			r.start[i] = int32(i)
		} else {
			r.start[i] = r.start[i-1]
		}
	}
	for i := n - 1; i >= 0; i-- {
		if i == n-1 || dis[i+1] == matches {
			r.end[i] = int32(i)
		} else {
			r.end[i] = r.end[i+1]
		}
	}
	return r
}

// amongChanges reports whether the line i, which has many matches, sits
// in a run of lines without a match or with many, both before and after
// it (within 100 lines), where fewer than a quarter have many: such a line
// is taken as changed, as git does, rather than matched far away.
func (r *runs) amongChanges(i int) bool {
	const window, kpdis = 100, 4
	lo := max(int(r.start[i]), i-window)
	none0, many0 := r.none[i]-r.none[lo], 1+r.many[i]-r.many[lo]
	if none0 == 0 {
		return false
	}
	hi := min(int(r.end[i]), i+window) + 1
	none1, many1 := r.none[hi]-r.none[i+1], 1+r.many[hi]-r.many[i+1]
	if none1 == 0 {
		return false
	}
	none, many := none0+none1, many0+many1
	return many*kpdis < many+none
}

// myers is the linear-space Myers search over the lines that could match,
// numbered by content (ha, hb) and mapped back to their lines (ra, rb).
type myers struct {
	ha, hb     []int32
	ra, rb     []int
	delA, insB []bool
	limit      int
	vf, vb     []int
}

// The search's heuristics, git's: past heurMinCost steps, a diagonal that
// has got far (by kHeur times the steps, less its distance from the
// middle diagonal) and ends a run of at least snakeCount equal lines is
// taken as the split.
const (
	heurMinCost = 256
	snakeCount  = 20
	kHeur       = 4
)

// compare marks the changes between ha[a0:a1] and hb[b0:b1]. With
// needMin, the search finds a shortest script whatever it costs.
func (m *myers) compare(a0, a1, b0, b1 int, needMin bool) {
	for {
		for a0 < a1 && b0 < b1 && m.ha[a0] == m.hb[b0] {
			a0, b0 = a0+1, b0+1
		}
		for a0 < a1 && b0 < b1 && m.ha[a1-1] == m.hb[b1-1] {
			a1, b1 = a1-1, b1-1
		}
		if a0 == a1 {
			for _, j := range m.rb[b0:b1] {
				m.insB[j] = true
			}
			return
		}
		if b0 == b1 {
			for _, i := range m.ra[a0:a1] {
				m.delA[i] = true
			}
			return
		}
		x, y, minLo, minHi := m.split(a0, a1, b0, b1, needMin)
		if (x == a0 && y == b0) || (x == a1 && y == b1) {
			// No progress (cannot happen): take all as changed.
			for _, i := range m.ra[a0:a1] {
				m.delA[i] = true
			}
			for _, j := range m.rb[b0:b1] {
				m.insB[j] = true
			}
			return
		}
		// Recurse on the smaller half, loop on the other.
		if x-a0+y-b0 < a1-x+b1-y {
			m.compare(a0, x, b0, y, minLo)
			a0, b0, needMin = x, y, minHi
		} else {
			m.compare(x, a1, y, b1, minHi)
			a1, b1, needMin = x, y, minLo
		}
	}
}

// split finds a point (x, y), strictly inside the box and off its corners,
// through which a shortest edit script of ha[a0:a1] and hb[b0:b1] passes
// (the end of the middle snake that met the other search, visiting the
// diagonals in git's order). Unless needMin is set, it settles, as git
// does, for a diagonal that got far along a long run of equal lines once
// the search has cost more than heurMinCost steps, and for the point the
// furthest-reaching path got to once it has cost more than m.limit. It
// reports whether each half must then be searched exactly. Both sequences
// are non-empty and differ in their first and last element.
func (m *myers) split(a0, a1, b0, b1 int, needMin bool) (x, y int, minLo, minHi bool) {
	n, mm := a1-a0, b1-b0
	ha, hb := m.ha[a0:a1], m.hb[b0:b1]
	maxD := (n+mm+1)/2 + 1
	if !needMin && maxD > m.limit+1 {
		maxD = m.limit + 1
	}
	// The arrays are reset lazily, a diagonal on either side per step, so
	// that a search costs its steps, not the size of its box.
	size := 2*maxD + 4
	if cap(m.vf) < size {
		m.vf, m.vb = make([]int, size), make([]int, size)
	}
	vf, vb := m.vf[:size], m.vb[:size]
	off := maxD + 1
	vf[off-1], vf[off], vf[off+1] = -1, -1, 0
	vb[off-1], vb[off], vb[off+1] = -1, -1, 0
	radius := 1 // vf and vb hold this call's values on diagonals -radius..radius
	delta := n - mm
	odd := delta&1 != 0
	// Diagonals that ran off the grid narrow the range from either end.
	fLo, fHi, bLo, bHi := 0, 0, 0, 0
	bestF, bestFx, bestFy := -1, 0, 0
	bestB, bestBx, bestBy := -1, 0, 0
	for d := 0; d < maxD; d++ {
		if d > 0 {
			radius = d + 1
			vf[off-radius], vf[off+radius], vb[off-radius], vb[off+radius] = -1, -1, -1, -1
		}
		gotSnake := false
		for k := d - fHi; k >= -d+fLo; k -= 2 {
			ko := off + k
			var x int
			if k == -d || (k != d && vf[ko-1] < vf[ko+1]) {
				x = vf[ko+1]
			} else {
				x = vf[ko-1] + 1
			}
			y := x - k
			x0 := x
			for x < n && y < mm && ha[x] == hb[y] {
				x, y = x+1, y+1
			}
			gotSnake = gotSnake || x-x0 > snakeCount
			vf[ko] = x
			switch {
			case x > n:
				fHi += 2
			case y > mm:
				fLo += 2
			default:
				if x+y > bestF && x+y < n+mm {
					bestF, bestFx, bestFy = x+y, x, y
				}
				if odd {
					if kb := delta - k; kb >= -radius && kb <= radius && vb[off+kb] != -1 && x >= n-vb[off+kb] && x+y < n+mm {
						return a0 + x, b0 + y, true, true
					}
				}
			}
		}
		// (The backward diagonals are numbered from the end: ascending
		// here is descending in git's numbering.)
		for k := -d + bLo; k <= d-bHi; k += 2 {
			ko := off + k
			var x int
			if k == -d || (k != d && vb[ko-1] < vb[ko+1]) {
				x = vb[ko+1]
			} else {
				x = vb[ko-1] + 1
			}
			y := x - k
			x0 := x
			for x < n && y < mm && ha[n-x-1] == hb[mm-y-1] {
				x, y = x+1, y+1
			}
			gotSnake = gotSnake || x-x0 > snakeCount
			vb[ko] = x
			switch {
			case x > n:
				bHi += 2
			case y > mm:
				bLo += 2
			default:
				if x+y > bestB && x+y < n+mm {
					bestB, bestBx, bestBy = x+y, n-x, mm-y
				}
				if !odd {
					if kf := delta - k; kf >= -radius && kf <= radius && vf[off+kf] != -1 && vf[off+kf] >= n-x && x+y < n+mm {
						return a0 + n - x, b0 + mm - y, true, true
					}
				}
			}
		}
		if needMin || !gotSnake || d <= heurMinCost {
			continue
		}
		// A far diagonal ending a long run of equal lines, forward…
		best := 0
		for k := d - fHi; k >= -d+fLo; k -= 2 {
			x := vf[off+k]
			y := x - k
			if v := x + y - abs(k); v > kHeur*d && v > best && snakeCount <= x && x < n && snakeCount <= y && y < mm && runBefore(ha, hb, x, y) {
				best, bestFx, bestFy = v, x, y
			}
		}
		if best > 0 {
			return a0 + bestFx, b0 + bestFy, true, false
		}
		// …or backward.
		for k := -d + bLo; k <= d-bHi; k += 2 {
			x := vb[off+k]
			y := x - k
			if v := x + y - abs(k); v > kHeur*d && v > best && snakeCount <= x && x < n && snakeCount <= y && y < mm && runAfter(ha, hb, n-x, mm-y) {
				best, bestBx, bestBy = v, n-x, mm-y
			}
		}
		if best > 0 {
			return a0 + bestBx, b0 + bestBy, false, true
		}
	}
	// Too costly: split where the furthest path got to, preferring the
	// backward one as git does.
	if bestF > bestB && bestF > 0 {
		return a0 + bestFx, b0 + bestFy, true, false
	}
	if bestB > 0 {
		return a0 + bestBx, b0 + bestBy, false, true
	}
	// Cannot happen for inputs that differ at both ends; split evenly.
	return a0 + n/2, b0 + mm/2, false, false
}

func abs(k int) int {
	if k < 0 {
		return -k
	}
	return k
}

// runBefore reports whether the snakeCount lines before (x, y) are equal.
func runBefore(ha, hb []int32, x, y int) bool {
	for j := 1; j <= snakeCount; j++ {
		if ha[x-j] != hb[y-j] {
			return false
		}
	}
	return true
}

// runAfter reports whether the snakeCount lines from (x, y) on are equal.
func runAfter(ha, hb []int32, x, y int) bool {
	for j := range snakeCount {
		if ha[x+j] != hb[y+j] {
			return false
		}
	}
	return true
}

// compact slides each group of changed lines in lines (flags chg) as git
// does: up and down over equal lines, merging with neighbouring groups,
// and finally to where it lines up with a change in the other side (flags
// other), or else to where git's indent heuristic puts it when indent is
// set, or else to the lowest position.
func compact(lines [][]byte, chg, other []bool, indent bool) {
	n, no := len(chg), len(other)
	eq := func(i, j int) bool { return bytes.Equal(lines[i], lines[j]) }
	var g, o group
	g.init(chg)
	o.init(other)
	for {
		if g.end != g.start {
			var size, earliestEnd int
			endMatch := -1
			for {
				size = g.end - g.start
				endMatch = -1
				for g.slideUp(chg, eq) {
					o.prev(other)
				}
				earliestEnd = g.end
				if o.end > o.start {
					endMatch = g.end
				}
				for g.slideDown(chg, n, eq) {
					o.next(other, no)
					if o.end > o.start {
						endMatch = g.end
					}
				}
				if size == g.end-g.start {
					break
				}
			}
			switch {
			case g.end == earliestEnd:
			case endMatch >= 0:
				for o.end == o.start && g.slideUp(chg, eq) {
					o.prev(other)
				}
			case indent:
				for best := bestShift(lines, earliestEnd, g.end, size); g.end > best && g.slideUp(chg, eq); {
					o.prev(other)
				}
			}
		}
		if !g.next(chg, n) {
			break
		}
		o.next(other, no)
	}
}

// group is a run [start, end) of changed lines, possibly empty, between
// two unchanged lines.
type group struct{ start, end int }

func (g *group) init(chg []bool) {
	g.start, g.end = 0, 0
	for g.end < len(chg) && chg[g.end] {
		g.end++
	}
}

func (g *group) next(chg []bool, n int) bool {
	if g.end == n {
		return false
	}
	g.start = g.end + 1
	g.end = g.start
	for g.end < n && chg[g.end] {
		g.end++
	}
	return true
}

func (g *group) prev(chg []bool) bool {
	if g.start == 0 {
		return false
	}
	g.end = g.start - 1
	g.start = g.end
	for g.start > 0 && chg[g.start-1] {
		g.start--
	}
	return true
}

func (g *group) slideDown(chg []bool, n int, eq func(i, j int) bool) bool {
	if g.end >= n || !eq(g.start, g.end) {
		return false
	}
	chg[g.start] = false
	chg[g.end] = true
	g.start++
	g.end++
	for g.end < n && chg[g.end] {
		g.end++
	}
	return true
}

func (g *group) slideUp(chg []bool, eq func(i, j int) bool) bool {
	if g.start == 0 || !eq(g.start-1, g.end-1) {
		return false
	}
	g.start--
	g.end--
	chg[g.start] = true
	chg[g.end] = false
	for g.start > 0 && chg[g.start-1] {
		g.start--
	}
	return true
}
