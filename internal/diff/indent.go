package diff

// git's indent heuristic (on by default in `git diff` since 2.14): when a
// group of changed lines can slide over equal lines, it is put where its
// two ends split the file most naturally, judged by the indentation and
// blank lines around each end. The weights are git's.
const (
	maxIndent = 200
	maxBlanks = 20

	startOfFilePenalty              = 1
	endOfFilePenalty                = 21
	totalBlankWeight                = -30
	postBlankWeight                 = 6
	relativeIndentPenalty           = -4
	relativeIndentWithBlankPenalty  = 10
	relativeOutdentPenalty          = 24
	relativeOutdentWithBlankPenalty = 17
	relativeDedentPenalty           = 23
	relativeDedentWithBlankPenalty  = 17

	indentWeight     = 60
	maxIndentSliding = 100
)

// indentOf returns the indentation of line (a tab advances to the next
// multiple of 8, capped at maxIndent), or -1 when it is all white space.
func indentOf(line []byte) int {
	n := 0
	for _, c := range line {
		if !isSpace(c) {
			return n
		}
		switch c {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		}
		if n >= maxIndent {
			return maxIndent
		}
	}
	return -1
}

// splitMeasure describes the place just before line split.
type splitMeasure struct {
	endOfFile  bool
	indent     int // of the line after the split, -1 when blank
	preBlank   int // blank lines just above the split
	preIndent  int // of the nearest non-blank line above, -1 if none
	postBlank  int // blank lines after the line after the split
	postIndent int // of the nearest non-blank line after that, -1 if none
}

func measureSplit(lines [][]byte, split int) splitMeasure {
	var m splitMeasure
	if split >= len(lines) {
		m.endOfFile, m.indent = true, -1
	} else {
		m.indent = indentOf(lines[split])
	}
	m.preIndent = -1
	for i := split - 1; i >= 0; i-- {
		if m.preIndent = indentOf(lines[i]); m.preIndent != -1 {
			break
		}
		if m.preBlank++; m.preBlank == maxBlanks {
			m.preIndent = 0
			break
		}
	}
	m.postIndent = -1
	for i := split + 1; i < len(lines); i++ {
		if m.postIndent = indentOf(lines[i]); m.postIndent != -1 {
			break
		}
		if m.postBlank++; m.postBlank == maxBlanks {
			m.postIndent = 0
			break
		}
	}
	return m
}

// splitScore sums the measures of a group's two ends; lower is better.
type splitScore struct{ effectiveIndent, penalty int }

func (s *splitScore) add(m splitMeasure) {
	if m.preIndent == -1 && m.preBlank == 0 {
		s.penalty += startOfFilePenalty
	}
	if m.endOfFile {
		s.penalty += endOfFilePenalty
	}
	postBlank := 0
	if m.indent == -1 {
		postBlank = 1 + m.postBlank
	}
	totalBlank := m.preBlank + postBlank
	s.penalty += totalBlankWeight*totalBlank + postBlankWeight*postBlank
	indent := m.indent
	if indent == -1 {
		indent = m.postIndent
	}
	anyBlanks := totalBlank != 0
	s.effectiveIndent += indent
	switch {
	case indent == -1 || m.preIndent == -1 || indent == m.preIndent:
	case indent > m.preIndent:
		s.penalty += pick(anyBlanks, relativeIndentWithBlankPenalty, relativeIndentPenalty)
	case m.postIndent != -1 && m.postIndent > indent:
		s.penalty += pick(anyBlanks, relativeOutdentWithBlankPenalty, relativeOutdentPenalty)
	default:
		s.penalty += pick(anyBlanks, relativeDedentWithBlankPenalty, relativeDedentPenalty)
	}
}

func pick(c bool, a, b int) int {
	if c {
		return a
	}
	return b
}

// cmp is negative when s is better than t, zero when as good.
func (s splitScore) cmp(t splitScore) int {
	c := 0
	if s.effectiveIndent > t.effectiveIndent {
		c = 1
	} else if s.effectiveIndent < t.effectiveIndent {
		c = -1
	}
	return indentWeight*c + s.penalty - t.penalty
}

// bestShift returns where the group of size lines that can end anywhere
// from earliestEnd to end should end, by the indent heuristic.
func bestShift(lines [][]byte, earliestEnd, end, size int) int {
	shift := max(earliestEnd, end-size-1, end-maxIndentSliding)
	best := -1
	var bestScore splitScore
	for ; shift <= end; shift++ {
		var s splitScore
		s.add(measureSplit(lines, shift))
		s.add(measureSplit(lines, shift-size))
		if best == -1 || s.cmp(bestScore) <= 0 {
			best, bestScore = shift, s
		}
	}
	return best
}
