package safety

import "slices"

// This file is the second, independent tokenizer that cross-checks the
// parser's segmentation. It is deliberately small and conservative: it
// knows separators, quotes, escapes, substitutions and redirections, and
// gives up (ok == false) on anything else: reserved words, here-documents,
// arithmetic, arrays, ANSI-C strings. It shares no code with the
// parser-based analysis.

type tokSeg struct {
	off  int
	name string
}

type tokenizer struct {
	s    string
	i    int
	segs []tokSeg
	bad  bool
	buf  []byte
}

// tokenNames returns the command names of the simple commands of s in
// source order, with Dynamic for names that expand; ok is false when s
// uses a form the tokenizer does not know.
func tokenNames(s string) (names []string, ok bool) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return nil, false // control characters: judged elsewhere
		}
	}
	t := &tokenizer{s: s}
	t.list(0)
	if t.bad || t.i < len(s) {
		return nil, false
	}
	slices.SortStableFunc(t.segs, func(a, b tokSeg) int { return a.off - b.off })
	names = make([]string, len(t.segs))
	for i, sg := range t.segs {
		names[i] = sg.name
	}
	return names, true
}

var tokReserved = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true, "case": true,
	"esac": true, "while": true, "until": true, "for": true, "in": true, "function": true, "select": true,
	"time": true, "coproc": true, "!": true, "[[": true, "]]": true, "declare": true, "local": true,
	"export": true, "readonly": true, "typeset": true, "nameref": true, "let": true,
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// isMeta reports the bytes that end an unquoted word.
func isMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
		return true
	}
	return false
}

// list reads commands until the end of input or an unmatched ')' when
// inside a substitution or subshell (close == ')').
func (t *tokenizer) list(close byte) {
	// A nested list must not write into the buffer of the word it is in.
	outer := t.buf
	t.buf = nil
	defer func() { t.buf = outer }()
	start := true // at the start of a simple command
	for !t.bad && t.i < len(t.s) {
		c := t.s[t.i]
		switch {
		case isBlank(c):
			t.i++
		case c == '\\' && t.i+1 < len(t.s) && t.s[t.i+1] == '\n':
			t.i += 2
		case c == '\n' || c == ';':
			if c == ';' && t.i+1 < len(t.s) && (t.s[t.i+1] == ';' || t.s[t.i+1] == '&') {
				t.bad = true
				return
			}
			t.i++
			start = true
		case c == '&':
			if t.i+1 < len(t.s) && t.s[t.i+1] == '>' {
				t.redirect()
				continue
			}
			if t.i+1 < len(t.s) && t.s[t.i+1] == '&' {
				t.i++
			}
			t.i++
			start = true
		case c == '|':
			if t.i+1 < len(t.s) && (t.s[t.i+1] == '|' || t.s[t.i+1] == '&') {
				t.i++
			}
			t.i++
			start = true
		case c == '(':
			if !start || t.i+1 < len(t.s) && t.s[t.i+1] == '(' {
				t.bad = true
				return
			}
			t.i++
			t.list(')')
			if t.bad || t.i >= len(t.s) || t.s[t.i] != ')' {
				t.bad = true
				return
			}
			t.i++
			start = false
		case c == ')':
			if close != ')' {
				t.bad = true
			}
			return
		case (c == '<' || c == '>') && !(t.i+1 < len(t.s) && t.s[t.i+1] == '('):
			t.redirect()
		case c == '#' && (t.i == 0 || isMeta(t.s[t.i-1])):
			for t.i < len(t.s) && t.s[t.i] != '\n' {
				t.i++
			}
		case c == '{' && start && (t.i+1 >= len(t.s) || isBlank(t.s[t.i+1]) || t.s[t.i+1] == '\n'):
			t.i++
		case c == '}' && start && (t.i+1 >= len(t.s) || isMeta(t.s[t.i+1])):
			t.i++
			start = false
		default:
			if isDigitByte(c) && t.fdRedirect() {
				continue
			}
			off := t.i
			text, dyn, assign := t.word(start)
			if t.bad {
				return
			}
			if start {
				if assign {
					continue
				}
				if !dyn && tokReserved[text] {
					t.bad = true
					return
				}
				name := text
				if dyn {
					name = Dynamic
				}
				t.segs = append(t.segs, tokSeg{off, name})
				start = false
			}
			// A '#' after a word is literal, and words after the name are
			// arguments.
		}
	}
	if close == ')' {
		t.bad = true // unterminated
	}
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// fdRedirect handles "2>file", "2>&1"; it reports false (consuming
// nothing) when the digits do not start a redirection.
func (t *tokenizer) fdRedirect() bool {
	j := t.i
	for j < len(t.s) && isDigitByte(t.s[j]) {
		j++
	}
	if j < len(t.s) && (t.s[j] == '<' || t.s[j] == '>') {
		t.i = j
		t.redirect()
		return true
	}
	return false
}

// redirect consumes a redirection operator and its target word.
func (t *tokenizer) redirect() {
	s := t.s
	if t.i < len(s) && s[t.i] == '&' {
		t.i++
	}
	if t.i+1 < len(s) && s[t.i] == '<' && s[t.i+1] == '<' {
		t.bad = true // here-documents and here-strings
		return
	}
	if t.i+1 < len(s) && (s[t.i+1] == '(') {
		// <( or >(: a process substitution in argument position.
		t.i += 2
		t.list(')')
		if t.bad || t.i >= len(s) || s[t.i] != ')' {
			t.bad = true
			return
		}
		t.i++
		return
	}
	t.i++ // < or >
	for t.i < len(s) && (s[t.i] == '>' || s[t.i] == '&' || s[t.i] == '|') {
		t.i++
	}
	for t.i < len(s) && isBlank(s[t.i]) {
		t.i++
	}
	if t.i >= len(s) || isMeta(s[t.i]) {
		t.bad = true
		return
	}
	t.word(false)
}

// word reads one word and returns its unquoted text (only when need is
// set: the text of arguments is never used), whether any part of it
// expands, and whether it is an assignment NAME=….
func (t *tokenizer) word(need bool) (text string, dyn, assign bool) {
	b := t.buf[:0] // reused: only the names become strings
	defer func() { t.buf = b[:0] }()
	quoted := false
	s := t.s
	for t.i < len(s) && !t.bad {
		c := s[t.i]
		switch {
		case isMeta(c):
			if (c == '<' || c == '>') && t.i+1 < len(s) && s[t.i+1] == '(' && len(b) == 0 && !quoted && !dyn {
				t.redirect() // process substitution: part of the word
				dyn = true
				continue
			}
			if !need {
				return "", dyn, assign
			}
			return string(b), dyn, assign
		case c == '\\':
			if t.i+1 >= len(s) {
				t.bad = true
				return
			}
			if s[t.i+1] != '\n' {
				b = append(b, s[t.i+1])
			}
			t.i += 2
		case c == '\'':
			j := t.i + 1
			for j < len(s) && s[j] != '\'' {
				j++
			}
			if j >= len(s) {
				t.bad = true
				return
			}
			b = append(b, s[t.i+1:j]...)
			t.i = j + 1
			quoted = true
		case c == '"':
			t.i++
			for {
				if t.i >= len(s) {
					t.bad = true
					return
				}
				d := s[t.i]
				if d == '"' {
					t.i++
					break
				}
				switch d {
				case '\\':
					if t.i+1 < len(s) && (s[t.i+1] == '$' || s[t.i+1] == '`' || s[t.i+1] == '"' || s[t.i+1] == '\\' || s[t.i+1] == '\n') {
						if s[t.i+1] != '\n' {
							b = append(b, s[t.i+1])
						}
						t.i += 2
					} else {
						b = append(b, d)
						t.i++
					}
				case '$':
					if lit, d := t.dollar(); d {
						dyn = true
					} else {
						b = append(b, lit...)
					}
				case '`':
					t.backtick()
					dyn = true
				default:
					b = append(b, d)
					t.i++
				}
				if t.bad {
					return
				}
			}
			quoted = true
		case c == '$':
			if t.i+1 < len(s) && s[t.i+1] == '\'' {
				t.bad = true // ANSI-C quoting
				return
			}
			if t.i+1 < len(s) && s[t.i+1] == '"' {
				t.i++ // $"…" is "…" for our purpose
				continue
			}
			if lit, d := t.dollar(); d {
				dyn = true
			} else {
				b = append(b, lit...)
			}
		case c == '`':
			t.backtick()
			dyn = true
		case c == '=' && !quoted && !dyn && !assign && isName(b):
			assign = true
			b = append(b, c)
			t.i++
			if t.i < len(s) && s[t.i] == '(' {
				t.bad = true // array assignment
				return
			}
		default:
			b = append(b, c)
			t.i++
		}
	}
	if !need {
		return "", dyn, assign
	}
	return string(b), dyn, assign
}

func isName(b []byte) bool {
	if len(b) == 0 || isDigitByte(b[0]) {
		return false
	}
	for _, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigitByte(c)) {
			return false
		}
	}
	return true
}

// dollar consumes an expansion starting at '$' and reports whether it
// expands; a '$' that starts no expansion is the literal "$".
func (t *tokenizer) dollar() (lit string, dyn bool) {
	s := t.s
	t.i++
	if t.i >= len(s) {
		return "$", false
	}
	switch c := s[t.i]; {
	case c == '(':
		if t.i+1 < len(s) && s[t.i+1] == '(' {
			t.bad = true // arithmetic
			return "", true
		}
		t.i++
		t.list(')')
		if t.bad || t.i >= len(s) || s[t.i] != ')' {
			t.bad = true
			return "", true
		}
		t.i++
	case c == '{':
		j := t.i + 1
		for j < len(s) && s[j] != '}' {
			if s[j] == '$' || s[j] == '`' || s[j] == '\'' || s[j] == '"' || s[j] == '\\' || s[j] == '{' {
				t.bad = true // nested forms inside ${…}
				return "", true
			}
			j++
		}
		if j >= len(s) {
			t.bad = true
			return "", true
		}
		t.i = j + 1
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		for t.i < len(s) && (s[t.i] == '_' || s[t.i] >= 'a' && s[t.i] <= 'z' || s[t.i] >= 'A' && s[t.i] <= 'Z' || isDigitByte(s[t.i])) {
			t.i++
		}
	case isDigitByte(c) || c == '@' || c == '*' || c == '#' || c == '?' || c == '-' || c == '$' || c == '!':
		t.i++
	default:
		return "$", false // "$" followed by something else is literal
	}
	return "", true
}

// backtick consumes `…` and tokenizes its contents as a nested command.
func (t *tokenizer) backtick() {
	s := t.s
	j := t.i + 1
	var inner []byte
	var pos []int // offset in s of each byte of inner
	for j < len(s) && s[j] != '`' {
		if s[j] == '\\' && j+1 < len(s) && (s[j+1] == '`' || s[j+1] == '\\' || s[j+1] == '$') {
			j++
		}
		inner = append(inner, s[j])
		pos = append(pos, j)
		j++
	}
	if j >= len(s) {
		t.bad = true
		return
	}
	sub := &tokenizer{s: string(inner)}
	sub.list(0)
	if sub.bad || sub.i < len(sub.s) {
		t.bad = true
		return
	}
	for _, sg := range sub.segs {
		off := t.i + 1
		if sg.off < len(pos) {
			off = pos[sg.off]
		}
		t.segs = append(t.segs, tokSeg{off, sg.name})
	}
	t.i = j + 1
}
