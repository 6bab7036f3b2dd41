package diff

import (
	"bytes"
	"io"
	"strconv"
)

// DefaultContext is git's default number of context lines around a change.
const DefaultContext = 3

// Stats counts changed lines.
type Stats struct{ Added, Deleted int }

// noNewline is the marker git writes after a line that lacks its newline.
const noNewline = "\\ No newline at end of file\n"

// change is a run of deleted lines a[i1:i1+n1] replaced by b[i2:i2+n2].
type change struct{ i1, n1, i2, n2 int }

// changes lists the runs of the script in order.
func (s *script) changes() []change {
	var cs []change
	i, j := 0, 0
	for i < len(s.a) || j < len(s.b) {
		if (i < len(s.a) && s.delA[i]) || (j < len(s.b) && s.insB[j]) {
			c := change{i1: i, i2: j}
			for i < len(s.a) && s.delA[i] {
				i++
			}
			for j < len(s.b) && s.insB[j] {
				j++
			}
			c.n1, c.n2 = i-c.i1, j-c.i2
			cs = append(cs, c)
			continue
		}
		i, j = i+1, j+1
	}
	return cs
}

// Unified writes the hunks of a line diff from a to b in git's unified
// format, as `git diff` prints them after the file header: "@@ -l,s +l,s @@"
// headers (",1" left out; an empty side is "l,0", l being the line before it),
// followed, as git does by default, by the nearest earlier line that starts
// with a letter, '_' or '$' (git's default function context, at most 80
// bytes); then ' ', '-' and '+' lines, and "\ No newline at end of file"
// after a line that lacks its newline. Lines are byte-exact (CRLF kept,
// any bytes allowed). context is the number of context lines (git's
// default is [DefaultContext]; a negative one counts as 0); changes at most
// 2×context lines apart share a hunk, as in git. Unified writes nothing when a and b are equal, and
// returns the count of added and deleted lines with the first write error.
// It diffs any bytes as text: callers check [IsBinary] first.
func Unified(w io.Writer, a, b []byte, context int) (Stats, error) {
	if context < 0 {
		context = 0
	}
	var st Stats
	if bytes.Equal(a, b) {
		return st, nil
	}
	s := diffLines(splitLines(a), splitLines(b), true)
	cs := s.changes()
	for _, c := range cs {
		st.Deleted += c.n1
		st.Added += c.n2
	}
	bw := &outBuf{w: w}
	var fn funcLine
	for len(cs) > 0 {
		// A hunk takes the changes whose gaps are at most 2*context lines.
		k := 1
		for k < len(cs) && cs[k].i1-(cs[k-1].i1+cs[k-1].n1) <= 2*context {
			k++
		}
		s.writeHunk(bw, cs[:k], context, &fn)
		bw.flushIfFull()
		cs = cs[k:]
	}
	return st, bw.flush()
}

// writeHunk writes one hunk made of the changes cs.
func (s *script) writeHunk(w *outBuf, cs []change, context int, fn *funcLine) {
	first, last := cs[0], cs[len(cs)-1]
	pre := min(context, first.i1)
	s1, s2 := first.i1-pre, first.i2-pre
	post := min(context, len(s.a)-(last.i1+last.n1))
	e1, e2 := last.i1+last.n1+post, last.i2+last.n2+post
	hdr := w.buf
	hdr = append(hdr, "@@ -"...)
	hdr = appendRange(hdr, s1, e1-s1)
	hdr = append(hdr, " +"...)
	hdr = appendRange(hdr, s2, e2-s2)
	hdr = append(hdr, " @@"...)
	if f := fn.find(s.a, s1); len(f) > 0 {
		hdr = append(hdr, ' ')
		hdr = append(hdr, f...)
	}
	hdr = append(hdr, '\n')
	w.buf = hdr
	i := s1
	for _, c := range cs {
		for ; i < c.i1; i++ {
			writeLine(w, ' ', s.a[i])
		}
		for _, l := range s.a[c.i1 : c.i1+c.n1] {
			writeLine(w, '-', l)
		}
		for _, l := range s.b[c.i2 : c.i2+c.n2] {
			writeLine(w, '+', l)
		}
		i = c.i1 + c.n1
	}
	for ; i < e1; i++ {
		writeLine(w, ' ', s.a[i])
	}
}

// appendRange appends git's "start,count" for a side of a hunk header
// whose lines start at 0-based line start.
func appendRange(dst []byte, start, count int) []byte {
	if count == 0 {
		// An empty side is numbered by the line before it.
		return append(strconv.AppendInt(dst, int64(start), 10), ",0"...)
	}
	dst = strconv.AppendInt(dst, int64(start+1), 10)
	if count != 1 {
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(count), 10)
	}
	return dst
}

func writeLine(w *outBuf, op byte, line []byte) {
	w.buf = append(w.buf, op)
	w.buf = append(w.buf, line...)
	if !hasNewline(line) {
		w.buf = append(w.buf, "\n"+noNewline...)
	}
	w.flushIfFull()
}

// outBuf gathers output and writes it in pieces of at least 32 KiB, and
// the rest at the end, keeping the first error.
type outBuf struct {
	w   io.Writer
	buf []byte
	err error
}

func (o *outBuf) flushIfFull() {
	if len(o.buf) >= 32<<10 {
		o.flush()
	}
}

func (o *outBuf) flush() error {
	if len(o.buf) > 0 && o.err == nil {
		_, o.err = o.w.Write(o.buf)
	}
	o.buf = o.buf[:0]
	return o.err
}

// funcLine finds git's default function context: the last line before a
// hunk that starts with an ASCII letter, '_' or '$', cut to 80 bytes and
// stripped of trailing white space. It remembers how far back it looked,
// since hunks come in order.
type funcLine struct {
	searched int // lines [0, searched) have been looked at
	line     []byte
}

func (f *funcLine) find(a [][]byte, before int) []byte {
	for i := before - 1; i >= f.searched; i-- {
		if l := a[i]; len(l) > 0 && isFuncStart(l[0]) {
			if len(l) > 80 {
				l = l[:80]
			}
			for len(l) > 0 && isSpace(l[len(l)-1]) {
				l = l[:len(l)-1]
			}
			f.line = l
			break
		}
	}
	f.searched = max(f.searched, before)
	return f.line
}

func isFuncStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

// isSpace is git's isspace (space, tab, newline and carriage return; git's
// own ctype table leaves out vertical tab and form feed).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
