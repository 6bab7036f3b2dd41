package diff

import (
	"bytes"
	"fmt"
	"strconv"
)

// applyHunks applies the hunks that Unified wrote (patch) to a, checking
// every context and deleted line and every header count, and returns the
// result. It is the git-free oracle of the fuzz tests.
func applyHunks(a, patch []byte) ([]byte, error) {
	src := splitLines(a)
	var out []byte
	pos := 0 // next line of src to copy
	lines := splitLines(patch)
	for k := 0; k < len(lines); {
		h := lines[k]
		k++
		var s1, c1, s2, c2 int
		if err := parseHeader(h, &s1, &c1, &s2, &c2); err != nil {
			return nil, err
		}
		start := s1 - 1
		if c1 == 0 {
			start = s1
		}
		if start < pos || start > len(src) {
			return nil, fmt.Errorf("hunk %q starts at line %d, before %d or past %d", h, start, pos, len(src))
		}
		out = appendLines(out, src[pos:start])
		pos = start
		// The hunk's lines, a "\ No newline" marker cutting the newline of
		// the line before it.
		var ops [][]byte
		for k < len(lines) && len(lines[k]) > 0 && lines[k][0] != '@' {
			l := lines[k]
			k++
			if string(l) == noNewline {
				if len(ops) == 0 {
					return nil, fmt.Errorf("hunk %q: marker before any line", h)
				}
				o := ops[len(ops)-1]
				ops[len(ops)-1] = o[:len(o)-1]
				continue
			}
			if !hasNewline(l) || (l[0] != ' ' && l[0] != '-' && l[0] != '+') {
				return nil, fmt.Errorf("hunk %q: bad line %q", h, l)
			}
			ops = append(ops, l)
		}
		n1, n2 := 0, 0
		for _, o := range ops {
			body := o[1:]
			if o[0] != '+' {
				if pos >= len(src) || string(src[pos]) != string(body) {
					return nil, fmt.Errorf("hunk %q: line %d does not match %q", h, pos, o)
				}
				pos++
				n1++
			}
			if o[0] != '-' {
				n2++
				out = append(out, body...)
			}
		}
		if n1 != c1 || n2 != c2 {
			return nil, fmt.Errorf("hunk %q has %d old and %d new lines", h, n1, n2)
		}
	}
	return appendLines(out, src[pos:]), nil
}

func parseHeader(h []byte, s1, c1, s2, c2 *int) error {
	if !bytes.HasPrefix(h, []byte("@@ -")) {
		return fmt.Errorf("not a hunk header: %q", h)
	}
	f := bytes.Fields(h)
	if len(f) < 4 || string(f[3]) != "@@" || f[2][0] != '+' {
		return fmt.Errorf("bad hunk header %q", h)
	}
	rng := func(s []byte, start, count *int) error {
		a, b, ok := bytes.Cut(s, []byte(","))
		var err error
		if *start, err = strconv.Atoi(string(a)); err != nil {
			return fmt.Errorf("bad hunk header %q", h)
		}
		*count = 1
		if ok {
			if *count, err = strconv.Atoi(string(b)); err != nil || *count == 1 {
				return fmt.Errorf("bad hunk header %q (count)", h)
			}
		}
		return nil
	}
	if err := rng(f[1][1:], s1, c1); err != nil {
		return err
	}
	return rng(f[2][1:], s2, c2)
}
