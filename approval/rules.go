package approval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
)

// Effect is what a rule or a decision says about a call.
type Effect string

// The effects, by strength: Deny beats Ask beats Allow.
const (
	Allow Effect = "allow"
	Ask   Effect = "ask"
	Deny  Effect = "deny"
)

func (e Effect) strength() int {
	switch e {
	case Allow:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return 0
}

func stronger(a, b Effect) Effect {
	if b.strength() > a.strength() {
		return b
	}
	return a
}

// Layer is where a rule comes from. Layers are consulted host, project,
// user, session; between matching rules the strongest effect wins whatever
// the layer (Deny beats Ask beats Allow), so no layer can loosen what
// another forbids.
type Layer string

// The layers.
const (
	LayerHost    Layer = "host"
	LayerProject Layer = "project"
	LayerUser    Layer = "user"
	LayerSession Layer = "session"
)

var layerOrder = []Layer{LayerHost, LayerProject, LayerUser, LayerSession}

// Kind is the kind of a rule's matcher.
type Kind string

// The matcher kinds.
const (
	// MatchTool matches every call of the tool.
	MatchTool Kind = "tool"
	// MatchCommand matches shell command segments by argv prefix.
	MatchCommand Kind = "command"
	// MatchPath matches file tool calls by path glob.
	MatchPath Kind = "path"
	// MatchDomain matches network tool calls by host name.
	MatchDomain Kind = "domain"
)

// Rule is one allow/ask/deny rule.
type Rule struct {
	Effect Effect `json:"effect"`
	// Tool is a tool name or a glob over tool names ("*", "mcp__*").
	Tool string `json:"tool"`
	Kind Kind   `json:"kind"`
	// Words is the argv prefix of a command rule: each element lists the
	// alternatives for that word ("*" matches any static word).
	Words [][]string `json:"words,omitempty"`
	// Flags are the canonical flags a command rule requires, in any order.
	Flags []string `json:"flags,omitempty"`
	// Patterns are the path globs or domain patterns.
	Patterns []string `json:"patterns,omitempty"`
	// Layer and Source say where the rule came from (Source is
	// "name:line" for rules loaded from a file).
	Layer  Layer  `json:"layer,omitempty"`
	Source string `json:"source,omitempty"`
	// Text is the rule in the file format.
	Text string `json:"text"`

	glob []bool // per word of Words: whether an alternative is a glob
}

// String returns the rule in the file format.
func (r *Rule) String() string { return r.Text }

// ToolKinds says which tools take which kind of matcher, and the input
// field that holds the command, path or URL.
type ToolKinds struct {
	Shell   map[string]string // tool → command field
	File    map[string]string // tool → path field
	Network map[string]string // tool → URL field
}

// DefaultToolKinds are the tools the evaluator knows by default.
var DefaultToolKinds = ToolKinds{
	Shell:   map[string]string{"bash": "command", "shell": "command", "execute_bash": "command", "run_shell_command": "command"},
	File:    map[string]string{"read_file": "path", "write_file": "path", "edit_file": "path", "list_files": "path", "delete_file": "path"},
	Network: map[string]string{"fetch": "url", "http_request": "url", "web_fetch": "url"},
}

// ParseError is a rule file error, naming the line.
type ParseError struct {
	Name string // file name given to ParseRules
	Line int
	Text string // the line
	Err  error
}

// Error implements error.
func (e *ParseError) Error() string {
	return fmt.Sprintf("approval: %s:%d: %v (line %q)", e.Name, e.Line, e.Err, e.Text)
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// Example is an "example" line of a rule file: a call and the effect the
// file's rules must give it.
type Example struct {
	Want   Effect
	Tool   string
	Input  string // command line, path or URL
	Line   int
	Source string
}

// ParseRules parses a rule file; see the package documentation for the
// format. name is used in errors and in each rule's Source. Example lines
// are returned, not checked: [Evaluator.Load] checks them.
func ParseRules(name string, data []byte, layer Layer, kinds ToolKinds) ([]Rule, []Example, error) {
	var rules []Rule
	var examples []Example
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fail := func(format string, args ...any) error {
			return &ParseError{Name: name, Line: n, Text: line, Err: fmt.Errorf(format, args...)}
		}
		if rest, ok := strings.CutPrefix(line, "example "); ok {
			eff, body, _ := strings.Cut(strings.TrimSpace(rest), " ")
			tool, input, ok := strings.Cut(body, ":")
			if !validEffect(Effect(eff)) || !ok || strings.TrimSpace(tool) == "" {
				return nil, nil, fail("want \"example <allow|ask|deny> <tool>: <command, path or URL>\"")
			}
			examples = append(examples, Example{Want: Effect(eff), Tool: strings.TrimSpace(tool), Input: strings.TrimSpace(input), Line: n, Source: name})
			continue
		}
		r, err := ParseRule(line, kinds)
		if err != nil {
			return nil, nil, fail("%v", err)
		}
		r.Layer, r.Source = layer, fmt.Sprintf("%s:%d", name, n)
		rules = append(rules, r)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("approval: read %s: %w", name, err)
	}
	return rules, examples, nil
}

func validEffect(e Effect) bool { return e == Allow || e == Ask || e == Deny }

// ParseRule parses one rule line: "<allow|ask|deny> <tool>[: <pattern>]".
func ParseRule(line string, kinds ToolKinds) (Rule, error) {
	line = strings.TrimSpace(line)
	eff, rest, _ := strings.Cut(line, " ")
	if !validEffect(Effect(eff)) {
		return Rule{}, fmt.Errorf("a rule starts with allow, ask or deny, not %q", eff)
	}
	tool, pattern, hasPattern := strings.Cut(strings.TrimSpace(rest), ":")
	tool, pattern = strings.TrimSpace(tool), strings.TrimSpace(pattern)
	if tool == "" || strings.ContainsAny(tool, " \t") {
		return Rule{}, fmt.Errorf("want \"%s <tool>[: <pattern>]\" with one tool name", eff)
	}
	if _, err := path.Match(tool, ""); err != nil {
		return Rule{}, fmt.Errorf("bad tool glob %q: %v", tool, err)
	}
	r := Rule{Effect: Effect(eff), Tool: tool, Kind: MatchTool, Text: line}
	if !hasPattern {
		return r, nil
	}
	if pattern == "" {
		return Rule{}, fmt.Errorf("empty pattern after %q: drop the ':' to match every call of the tool", tool+":")
	}
	fields := strings.Fields(pattern)
	switch fields[0] {
	case "path":
		if len(fields) < 2 {
			return Rule{}, fmt.Errorf("\"path\" needs at least one glob")
		}
		for _, g := range fields[1:] {
			if _, err := path.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
				return Rule{}, fmt.Errorf("bad path glob %q: %v", g, err)
			}
		}
		r.Kind, r.Patterns = MatchPath, fields[1:]
		if _, known := kinds.File[tool]; !known && !strings.ContainsAny(tool, "*?[") {
			return Rule{}, fmt.Errorf("%q is not a file tool; path rules apply to %s", tool, keys(kinds.File))
		}
		return r, nil
	case "domain":
		if len(fields) < 2 {
			return Rule{}, fmt.Errorf("\"domain\" needs at least one domain")
		}
		for _, d := range fields[1:] {
			if strings.ContainsAny(d, "/:@") || strings.Contains(strings.TrimPrefix(d, "*."), "*") {
				return Rule{}, fmt.Errorf("bad domain %q: want a host name like example.com or *.example.com", d)
			}
		}
		r.Kind, r.Patterns = MatchDomain, lower(fields[1:])
		if _, known := kinds.Network[tool]; !known && !strings.ContainsAny(tool, "*?[") {
			return Rule{}, fmt.Errorf("%q is not a network tool; domain rules apply to %s", tool, keys(kinds.Network))
		}
		return r, nil
	}
	if _, known := kinds.Shell[tool]; !known && !strings.ContainsAny(tool, "*?[") {
		return Rule{}, fmt.Errorf("%q is not a shell tool; command patterns apply to %s (file tools take \"path <glob>\", network tools \"domain <name>\")", tool, keys(kinds.Shell))
	}
	r.Kind = MatchCommand
	var name string
	for _, f := range fields {
		if strings.HasPrefix(f, "-") && len(f) > 1 {
			if len(r.Words) == 0 {
				return Rule{}, fmt.Errorf("the command pattern must start with a command name, not the flag %q", f)
			}
			r.Flags = append(r.Flags, canonFlags(name, f)...)
			continue
		}
		alts := strings.Split(f, "|")
		for _, a := range alts {
			if a == "" {
				return Rule{}, fmt.Errorf("empty alternative in %q", f)
			}
			if _, err := path.Match(a, ""); err != nil {
				return Rule{}, fmt.Errorf("bad word pattern %q: %v", a, err)
			}
		}
		if len(r.Words) == 0 {
			name = alts[0]
		}
		r.Words = append(r.Words, alts)
		r.glob = append(r.glob, strings.ContainsAny(f, "*?["))
	}
	return r, nil
}

func lower(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}

func keys(m map[string]string) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}

// flagAliases maps, per command, flag spellings to one canonical form.
var flagAliases = map[string]map[string]string{
	"rm":    {"-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d", "--verbose": "-v"},
	"cp":    {"-R": "-r", "--recursive": "-r", "--force": "-f", "--archive": "-a"},
	"mv":    {"--force": "-f"},
	"chmod": {"--recursive": "-R"},
	"chown": {"--recursive": "-R"},
	"chgrp": {"--recursive": "-R"},
	"git":   {"--force": "-f", "--delete": "-d", "--all": "-a"},
	"grep":  {"--recursive": "-r", "-R": "-r"},
	"ln":    {"--symbolic": "-s", "--force": "-f"},
	"npm":   {"--global": "-g"},
	"find":  {},
}

// canonFlags splits a flag word into canonical flags: "-rf" → "-r", "-f";
// "--force" → rm's "-f"; "--color=auto" → "--color".
func canonFlags(cmd, f string) []string {
	al := flagAliases[path.Base(cmd)]
	if strings.HasPrefix(f, "--") {
		if i := strings.IndexByte(f, '='); i >= 0 {
			f = f[:i]
		}
		if c, ok := al[f]; ok {
			return []string{c}
		}
		return []string{f}
	}
	if cmd == "find" || len(f) == 2 {
		if c, ok := al[f]; ok {
			return []string{c}
		}
		return []string{f}
	}
	out := make([]string, 0, len(f)-1)
	for i := 1; i < len(f); i++ {
		s := "-" + f[i:i+1]
		if c, ok := al[s]; ok {
			s = c
		}
		out = append(out, s)
	}
	return out
}

// matchCommand reports whether the rule matches one segment's argv.
// Static words are matched in order against the argv's non-flag words;
// flags are matched as a set. A word only known at run time never
// matches an allow rule, and matches only "*" otherwise.
func (r *Rule) matchCommand(pos []string, flags []string) bool {
	if len(pos) < len(r.Words) {
		return false
	}
	for i, alts := range r.Words {
		w := pos[i]
		if i == 0 {
			w = path.Base(w)
		}
		glob := true
		if len(r.glob) == len(r.Words) {
			glob = r.glob[i]
		}
		ok := false
		for _, a := range alts {
			if w == dynamic {
				if a == "*" && r.Effect != Allow {
					ok = true
				}
				continue
			}
			if a == w {
				ok = true
				break
			}
			if glob && strings.ContainsAny(a, "*?[") {
				if m, _ := path.Match(a, w); m {
					ok = true
					break
				}
			}
		}
		if !ok {
			return false
		}
	}
	for _, f := range r.Flags {
		if !slices.Contains(flags, f) {
			return false
		}
	}
	return true
}

// dynamic is safety.Dynamic, repeated to keep the hot path free of imports.
const dynamic = "\x00dynamic"

// splitArgv splits an argv into non-flag words and canonical flags.
func splitArgv(argv []string) (pos []string, flags []string) {
	if len(argv) == 0 {
		return nil, nil
	}
	pos = make([]string, 1, len(argv))
	pos[0] = argv[0]
	for i, a := range argv[1:] {
		if a == "--" {
			pos = append(pos, argv[i+2:]...)
			break
		}
		if len(a) > 1 && a[0] == '-' && a != dynamic {
			flags = append(flags, canonFlags(argv[0], a)...)
			continue
		}
		pos = append(pos, a)
	}
	return pos, flags
}

// matchPath reports whether the rule's globs match the path rel (relative
// to the root, slash-separated) or abs.
func (r *Rule) matchPath(rel, abs string) bool {
	for _, g := range r.Patterns {
		target := rel
		if strings.HasPrefix(g, "/") {
			target = abs
		} else if rel == "" {
			continue // outside the root: only absolute globs match
		}
		if globMatch(g, target) {
			return true
		}
	}
	return false
}

// globMatch matches slash-separated globs where "**" matches any number
// of path elements (including none).
func globMatch(g, p string) bool {
	gs, ps := strings.Split(strings.Trim(g, "/"), "/"), strings.Split(strings.Trim(p, "/"), "/")
	return globParts(gs, ps)
}

func globParts(gs, ps []string) bool {
	for len(gs) > 0 {
		if gs[0] == "**" {
			for i := 0; i <= len(ps); i++ {
				if globParts(gs[1:], ps[i:]) {
					return true
				}
			}
			return false
		}
		if len(ps) == 0 {
			return false
		}
		if m, _ := path.Match(gs[0], ps[0]); !m {
			return false
		}
		gs, ps = gs[1:], ps[1:]
	}
	return len(ps) == 0
}

// matchDomain reports whether the rule matches host.
func (r *Rule) matchDomain(host string) bool {
	for _, d := range r.Patterns {
		if sub, ok := strings.CutPrefix(d, "*."); ok {
			if strings.HasSuffix(host, "."+sub) {
				return true
			}
		} else if host == d {
			return true
		}
	}
	return false
}

// hostOf returns the lower-case host of a URL, or "" if it has none.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
}

// field returns the string field of a JSON object input.
func field(input json.RawMessage, name string) (string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(input, &m); err != nil {
		return "", fmt.Errorf("input is not a JSON object: %v", err)
	}
	raw, ok := m[name]
	if !ok {
		return "", fmt.Errorf("input has no %q field", name)
	}
	for k := range m {
		// A tool decoding into a struct matches keys case-insensitively.
		if k != name && strings.EqualFold(k, name) {
			return "", fmt.Errorf("input is ambiguous: both %q and %q", name, k)
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("input field %q is not a string", name)
	}
	return s, nil
}
