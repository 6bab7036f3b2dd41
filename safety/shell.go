package safety

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// ShellOptions configure a [ShellAnalyzer]. The zero value uses the defaults.
type ShellOptions struct {
	// Tools maps the names of shell tools to the JSON field of their input
	// that holds the command line. Nil means [DefaultShellTools].
	Tools map[string]string
	// Home is the user's home directory, so that absolute paths under it
	// are recognized like ~/… paths. Empty means os.UserHomeDir.
	Home string
	// MaxDepth bounds the nesting of bash -c and eval strings that are
	// analyzed; deeper nesting is Unknown. Zero means 8.
	MaxDepth int
}

// DefaultShellTools are the shell tools a [ShellAnalyzer] knows by default,
// mapped to the input field holding the command.
var DefaultShellTools = map[string]string{
	"bash":              "command",
	"shell":             "command",
	"execute_bash":      "command",
	"run_shell_command": "command",
}

// ShellAnalyzer judges shell commands by rules over a real parse
// (mvdan.cc/sh/v3/syntax, bash dialect). It splits compound commands into
// segments and judges every one, recursing into bash -c strings and eval
// and looking through wrappers (env, sudo, timeout, xargs, find -exec, …).
// A second, independent tokenizer cross-checks the segmentation: when the
// two disagree, the verdict is at least Unknown.
//
// A ShellAnalyzer is safe for concurrent use.
type ShellAnalyzer struct {
	tools    map[string]string
	home     string
	maxDepth int
}

// NewShellAnalyzer returns a shell analyzer.
func NewShellAnalyzer(opts *ShellOptions) *ShellAnalyzer {
	var o ShellOptions
	if opts != nil {
		o = *opts
	}
	if o.Tools == nil {
		o.Tools = DefaultShellTools
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 8
	}
	return &ShellAnalyzer{tools: o.Tools, home: strings.TrimRight(o.Home, "/"), maxDepth: o.MaxDepth}
}

// ShellCommand returns the command line of call if call.Tool is one of the
// analyzer's shell tools.
func (a *ShellAnalyzer) ShellCommand(call Call) (cmd string, ok bool, err error) {
	field, ok := a.tools[call.Tool]
	if !ok {
		return "", false, nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return "", true, fmt.Errorf("safety: %s input is not a JSON object: %v", call.Tool, err)
	}
	raw, found := args[field]
	if !found {
		return "", true, fmt.Errorf("safety: %s input has no %q field", call.Tool, field)
	}
	for k := range args {
		// encoding/json matches struct fields case-insensitively: a tool
		// decoding into a struct could run "Command" where we read "command".
		if k != field && strings.EqualFold(k, field) {
			return "", true, fmt.Errorf("safety: %s input is ambiguous: both %q and %q", call.Tool, field, k)
		}
	}
	if err := json.Unmarshal(raw, &cmd); err != nil {
		return "", true, fmt.Errorf("safety: %s input field %q is not a string", call.Tool, field)
	}
	return cmd, true, nil
}

// Analyze judges a call of one of the analyzer's shell tools. A call of
// another tool, or one whose input has no command string, is Unknown.
func (a *ShellAnalyzer) Analyze(ctx context.Context, call Call) (Verdict, error) {
	cmd, ok, err := a.ShellCommand(call)
	if !ok {
		return unknownVerdict("shell", "%q is not a shell tool", call.Tool), nil
	}
	if err != nil {
		return unknownVerdict("shell", "%v", err), nil
	}
	return a.AnalyzeCommand(cmd, call.Cwd), nil
}

var parserPool = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// AnalyzeCommand judges one shell command line run in cwd.
func (a *ShellAnalyzer) AnalyzeCommand(command, cwd string) Verdict {
	w := &walker{a: a, cwd: cwd, funcs: map[string]bool{}}
	w.v.Analyzer = "shell"
	if bad := badRunes(command); bad != "" {
		w.global(Unknown, CatUnknown, bad)
	}
	names, ok := w.analyze(command, 0, 0)
	if ok {
		if toks, tok := tokenNames(command); tok && !slices.Equal(names, toks) {
			w.global(Unknown, CatUnknown, fmt.Sprintf("the command splits differently under a second tokenizer (%q vs %q)", names, toks))
		}
	}
	w.combine()
	w.v.finish()
	return w.v
}

// walker holds the state of one analysis.
type walker struct {
	a     *ShellAnalyzer
	cwd   string
	v     Verdict
	funcs map[string]bool
	// stdin is the static here-document or here-string of the statement
	// being judged, if any.
	stdin *string
	// What the command as a whole does, for findings that combine segments.
	download, decode, execHidden, credRead, network bool
	credReason                                      string
}

func (w *walker) global(r Risk, c Category, reason string) {
	w.v.Findings = append(w.v.Findings, Finding{Risk: r, Category: c, Reason: reason})
}

// combine adds the findings that come from segments together.
func (w *walker) combine() {
	if w.execHidden && (w.download || w.decode) {
		what := "downloaded"
		if !w.download {
			what = "decoded"
		}
		w.global(Critical, CatMaliciousCommand, "runs "+what+" content as code (e.g. curl | sh, base64 -d | sh)")
	}
	if w.credRead && w.network {
		w.global(Critical, CatExfiltration, "reads credentials ("+w.credReason+") and uses the network in the same command")
	}
}

// analyze parses src and judges its statements. It returns the names of
// the simple commands in source order (for the tokenizer cross-check) and
// whether the parse succeeded.
func (w *walker) analyze(src string, depth, base int) ([]string, bool) {
	if depth > w.a.maxDepth {
		w.global(Unknown, CatUnknown, "commands nested too deeply to analyze")
		return nil, false
	}
	p := parserPool.Get().(*syntax.Parser)
	f, err := p.Parse(strings.NewReader(src), "")
	parserPool.Put(p)
	if err != nil {
		w.global(Unknown, CatUnknown, "the command does not parse: "+err.Error())
		return nil, false
	}
	type named struct {
		off  uint
		name string
	}
	var names []named
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			w.stmt(src, n, depth, base)
			if c, ok := n.Cmd.(*syntax.CallExpr); ok && len(c.Args) > 0 {
				names = append(names, named{c.Args[0].Pos().Offset(), rawName(c.Args[0])})
			}
		case *syntax.FuncDecl:
			w.funcDecl(src, n, base)
		case *syntax.DeclClause:
			w.declClause(src, n, base)
		}
		return true
	})
	slices.SortStableFunc(names, func(a, b named) int { return int(a.off) - int(b.off) })
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n.name
	}
	return out, true
}

func nodeText(src string, n syntax.Node) string {
	s, e := int(n.Pos().Offset()), int(n.End().Offset())
	if s < 0 || e > len(src) || s > e {
		return ""
	}
	return src[s:e]
}

// stmt judges one statement: its redirections and, if it is a simple
// command, the command.
func (w *walker) stmt(src string, st *syntax.Stmt, depth, base int) {
	call, _ := st.Cmd.(*syntax.CallExpr)
	if call == nil && len(st.Redirs) == 0 {
		return
	}
	seg := &Segment{Text: nodeText(src, st), Offset: base + int(st.Pos().Offset()), Depth: depth, Risk: Low}
	at := len(w.v.Segments) // segments found inside (sudo's command, bash -c) go after this one
	w.stdin = nil
	defer func() { w.stdin = nil }()
	for _, r := range st.Redirs {
		w.redirect(seg, r)
	}
	if call != nil {
		for _, as := range call.Assigns {
			if as.Name != nil {
				w.envAssign(seg, as.Name.Value)
			}
		}
		if len(call.Args) > 0 {
			argv := make([]arg, len(call.Args))
			for i, word := range call.Args {
				argv[i] = w.word(word)
			}
			w.command(seg, argv, depth, src)
		} else if len(call.Assigns) > 0 && seg.Argv == nil {
			seg.Argv = []string{}
		}
	}
	w.add(seg)
	if at < len(w.v.Segments)-1 {
		last := w.v.Segments[len(w.v.Segments)-1]
		copy(w.v.Segments[at+1:], w.v.Segments[at:len(w.v.Segments)-1])
		w.v.Segments[at] = last
	}
}

func (w *walker) add(seg *Segment) {
	seg.Risk = Low
	for _, f := range seg.Findings {
		seg.Risk = seg.Risk.Max(f.Risk)
	}
	w.v.Segments = append(w.v.Segments, *seg)
}

func (w *walker) redirect(seg *Segment, r *syntax.Redirect) {
	if r.Word == nil {
		return
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		// Keep a static here-document or here-string: a shell reading its
		// input runs it (see shell).
		body := r.Word
		if r.Op != syntax.WordHdoc {
			body = r.Hdoc
		}
		if body != nil {
			if t := w.word(body); !t.dyn {
				w.stdin = &t.s
			}
		} else {
			empty := ""
			w.stdin = &empty
		}
		return
	case syntax.DplIn, syntax.DplOut:
		t := w.word(r.Word)
		if !t.dyn && (t.s == "-" || isDigits(t.s)) {
			return
		}
		if t.dyn {
			seg.find(Unknown, CatUnknown, "redirects to a path only known at run time")
			return
		}
		if r.Op == syntax.DplOut {
			w.redirectWrite(seg, t.s)
		}
		return
	}
	t := w.word(r.Word)
	if t.dyn {
		seg.find(Unknown, CatUnknown, "redirects to a path only known at run time")
		return
	}
	switch r.Op {
	case syntax.RdrIn:
		w.read(seg, t.s)
	case syntax.RdrInOut:
		w.read(seg, t.s)
		w.redirectWrite(seg, t.s)
	default:
		w.redirectWrite(seg, t.s)
	}
}

func (w *walker) redirectWrite(seg *Segment, p string) {
	switch w.normPath(p) {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
	default:
		seg.Redirects = append(seg.Redirects, p)
	}
	w.write(seg, p)
}

func (seg *Segment) find(r Risk, c Category, reason string) {
	for _, f := range seg.Findings {
		if f.Reason == reason {
			return
		}
	}
	seg.Findings = append(seg.Findings, Finding{Risk: r, Category: c, Reason: reason})
}

// funcDecl flags functions that call themselves: the fork bomb :(){ :|:& };:
func (w *walker) funcDecl(src string, fd *syntax.FuncDecl, base int) {
	if fd.Name == nil || fd.Body == nil {
		return
	}
	name := fd.Name.Value
	w.funcs[name] = true
	recursive := false
	syntax.Walk(fd.Body, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 && rawName(c.Args[0]) == name {
			recursive = true
		}
		return !recursive
	})
	if recursive {
		seg := &Segment{Text: nodeText(src, fd), Offset: base + int(fd.Pos().Offset()), Argv: []string{name + "()"}}
		seg.find(Critical, CatResource, fmt.Sprintf("function %q calls itself (fork bomb)", name))
		w.add(seg)
	}
}

func (w *walker) declClause(src string, d *syntax.DeclClause, base int) {
	seg := &Segment{Text: nodeText(src, d), Offset: base + int(d.Pos().Offset()), Argv: []string{d.Variant.Value}}
	for _, as := range d.Args {
		if as.Name != nil {
			w.envAssign(seg, as.Name.Value)
		}
	}
	w.add(seg)
}

// hijackVars are variables that change what later commands run or load.
var hijackVars = map[string]bool{
	"PATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
	"DYLD_INSERT_LIBRARIES": true, "DYLD_LIBRARY_PATH": true, "BASH_ENV": true, "ENV": true,
	"PROMPT_COMMAND": true, "PS4": true, "IFS": true, "SHELLOPTS": true, "BASHOPTS": true,
	"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_EXEC_PATH": true, "GIT_EDITOR": true,
	"GIT_PAGER": true, "GIT_ASKPASS": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_PARAMETERS": true,
	"GIT_CONFIG_COUNT": true, "EDITOR": true, "VISUAL": true, "PAGER": true, "PYTHONPATH": true,
	"PYTHONSTARTUP": true, "NODE_OPTIONS": true, "PERL5OPT": true, "RUBYOPT": true, "HISTFILE": true,
	"HOME": true, "SUDO_ASKPASS": true,
}

func (w *walker) envAssign(seg *Segment, name string) {
	if hijackVars[name] || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		seg.find(High, CatCodeExecution, fmt.Sprintf("sets %s, which changes what later commands run or load", name))
	}
}

// arg is one word of a command: its value with quotes removed, or dyn
// when it is only known at run time.
type arg struct {
	s   string
	dyn bool
}

// String returns the word, or Dynamic.
func (a arg) String() string {
	if a.dyn {
		return Dynamic
	}
	return a.s
}

// word evaluates a word as far as it is static. $HOME and ${HOME} at the
// start of a word become "~".
func (w *walker) word(word *syntax.Word) arg {
	if len(word.Parts) == 1 {
		switch p := word.Parts[0].(type) {
		case *syntax.Lit:
			return arg{s: unescapeLit(p.Value)}
		case *syntax.SglQuoted:
			if !p.Dollar {
				return arg{s: p.Value}
			}
		}
	}
	var b strings.Builder
	dyn := false
	for i, part := range word.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				s, ok := ansiC(p.Value)
				if !ok {
					dyn = true
				}
				b.WriteString(s)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					b.WriteString(unescapeDQ(q.Value))
				case *syntax.ParamExp:
					if i == 0 && b.Len() == 0 && isHome(q) {
						b.WriteString("~")
					} else {
						dyn = true
					}
				default:
					dyn = true
				}
			}
		case *syntax.ParamExp:
			if i == 0 && isHome(p) {
				b.WriteString("~")
			} else {
				dyn = true
			}
		case *syntax.ExtGlob:
			b.WriteString(p.Op.String())
			if p.Pattern != nil {
				b.WriteString(p.Pattern.Value)
			}
			b.WriteString(")")
		default:
			dyn = true
		}
	}
	return arg{s: b.String(), dyn: dyn}
}

func isHome(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Param.Value == "HOME" && !p.Excl && !p.Length && p.Index == nil &&
		p.Slice == nil && p.Repl == nil && p.Exp == nil && p.Names == 0
}

// rawName is the name of a command word for the segmentation cross-check:
// its static value, or Dynamic if any part expands.
func rawName(word *syntax.Word) string {
	if len(word.Parts) == 1 {
		if l, ok := word.Parts[0].(*syntax.Lit); ok {
			return unescapeLit(l.Value)
		}
	}
	var b strings.Builder
	for _, part := range word.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return Dynamic
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return Dynamic
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return Dynamic
				}
				b.WriteString(unescapeDQ(l.Value))
			}
		default:
			return Dynamic
		}
	}
	return b.String()
}

// unescapeLit removes the backslashes of an unquoted literal.
func unescapeLit(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unescapeDQ removes the backslashes that escape inside double quotes.
func unescapeDQ(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the common escapes of $'…'; ok is false for forms it does
// not know.
func ansiC(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"', '?':
			b.WriteByte(s[i])
		case 'x':
			v, n := 0, 0
			for n < 2 && i+1 < len(s) && isHex(s[i+1]) {
				i++
				v = v*16 + hexVal(s[i])
				n++
			}
			if n == 0 {
				return b.String(), false
			}
			b.WriteByte(byte(v))
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := 0, 0
			for n < 3 && i < len(s) && s[i] >= '0' && s[i] <= '7' {
				v = v*8 + int(s[i]-'0')
				i++
				n++
			}
			i--
			b.WriteByte(byte(v))
		default:
			return b.String(), false
		}
	}
	return b.String(), true
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func hexVal(c byte) int {
	switch {
	case c >= 'a':
		return int(c-'a') + 10
	case c >= 'A':
		return int(c-'A') + 10
	}
	return int(c - '0')
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// badRunes reports characters that make a command look different from what
// runs: bidirectional controls, zero-width characters, control characters.
func badRunes(s string) string {
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			return "the command is not valid UTF-8"
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F:
			return "the command contains bidirectional control characters"
		case r >= 0x200B && r <= 0x200D, r == 0xFEFF, r == 0x2060:
			return "the command contains zero-width characters"
		case r < 0x20 && r != '\t' && r != '\n', r == 0x7F:
			return "the command contains control characters"
		}
	}
	return ""
}
