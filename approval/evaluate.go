package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/paddockdev/paddock/safety"
)

// Call is one tool call of a model response.
type Call struct {
	// ID is the model's id for the call (tool_use id).
	ID string `json:"id"`
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Input is the call's JSON input.
	Input json.RawMessage `json:"input"`
	// Cwd is the directory the call runs in.
	Cwd string `json:"cwd,omitempty"`
}

// Options configure an [Evaluator]. Nil means the defaults.
type Options struct {
	// Tools says which tools are shell, file and network tools; the zero
	// value means DefaultToolKinds.
	Tools ToolKinds
	// ReadOnlyTools are tools that are allowed without a rule when nothing
	// else says otherwise (a file tool reading a credential path is still
	// asked). Nil means read_file, list_files, grep, glob.
	ReadOnlyTools []string
	// Root is the directory relative path globs are matched against; empty
	// means each call's cwd.
	Root string
	// Home is the user's home directory for the analyzers; empty means
	// os.UserHomeDir.
	Home string
	// Analyzers are consulted besides the shell rules analyzer (e.g. a
	// safety.LLMClassifier); their verdicts can only make a decision
	// stricter.
	Analyzers []safety.Analyzer
}

// Evaluator decides tool calls from rules and analyzers.
//
// An Evaluator is safe for concurrent use; rules may be added while
// others evaluate.
type Evaluator struct {
	kinds    ToolKinds
	readOnly map[string]bool
	root     string
	home     string
	shell    *safety.ShellAnalyzer
	extra    []safety.Analyzer

	mu    sync.RWMutex
	index ruleIndex

	cacheMu sync.Mutex
	cache   map[[3]string]safety.Verdict // shell verdicts by (tool, input, cwd)
}

// cacheSize bounds the shell verdict cache; it is cleared when full.
const cacheSize = 4096

// analyzeShell returns the shell analyzer's verdict, from the cache when
// the same command in the same directory was analyzed before (the analysis
// is a pure function of both). The returned verdict must not be modified.
func (e *Evaluator) analyzeShell(ctx context.Context, call Call) safety.Verdict {
	key := [3]string{call.Tool, string(call.Input), call.Cwd}
	e.cacheMu.Lock()
	v, ok := e.cache[key]
	e.cacheMu.Unlock()
	if ok {
		return v
	}
	v, _ = e.shell.Analyze(ctx, safety.Call{Tool: call.Tool, Args: call.Input, Cwd: call.Cwd})
	e.cacheMu.Lock()
	if len(e.cache) >= cacheSize {
		clear(e.cache)
	}
	e.cache[key] = v
	e.cacheMu.Unlock()
	return v
}

// ruleIndex finds candidate rules fast: by tool, and for command rules by
// command name.
type ruleIndex struct {
	n        int
	byTool   map[string]*toolRules
	globTool []*Rule // rules whose tool is a glob
}

type toolRules struct {
	plain   []*Rule              // tool, path and domain rules
	byCmd   map[string]*cmdRules // command rules by literal command name
	anyCmds []*Rule              // command rules whose name is a glob
}

// cmdRules are the command rules of one command name.
type cmdRules struct {
	bySub map[string][]*Rule // by literal second word
	other []*Rule            // one word, or a glob second word
}

// NewEvaluator returns an evaluator without rules.
func NewEvaluator(opts *Options) *Evaluator {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Tools.Shell == nil && o.Tools.File == nil && o.Tools.Network == nil {
		o.Tools = DefaultToolKinds
	}
	if o.ReadOnlyTools == nil {
		o.ReadOnlyTools = []string{"read_file", "list_files", "grep", "glob"}
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	e := &Evaluator{kinds: o.Tools, readOnly: map[string]bool{}, root: o.Root, home: o.Home, extra: o.Analyzers,
		shell: safety.NewShellAnalyzer(&safety.ShellOptions{Tools: o.Tools.Shell, Home: o.Home})}
	for _, t := range o.ReadOnlyTools {
		e.readOnly[t] = true
	}
	e.index.byTool = map[string]*toolRules{}
	e.cache = map[[3]string]safety.Verdict{}
	return e
}

// Add adds rules to a layer.
func (e *Evaluator) Add(layer Layer, rules ...Rule) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range rules {
		r := r
		r.Layer = layer
		e.index.add(&r)
	}
}

func (ix *ruleIndex) add(r *Rule) {
	ix.n++
	if strings.ContainsAny(r.Tool, "*?[") {
		ix.globTool = append(ix.globTool, r)
		return
	}
	tr := ix.byTool[r.Tool]
	if tr == nil {
		tr = &toolRules{byCmd: map[string]*cmdRules{}}
		ix.byTool[r.Tool] = tr
	}
	if r.Kind != MatchCommand {
		tr.plain = append(tr.plain, r)
		return
	}
	for _, name := range r.Words[0] {
		if strings.ContainsAny(name, "*?[") {
			tr.anyCmds = append(tr.anyCmds, r)
			return
		}
	}
	for _, name := range r.Words[0] {
		cr := tr.byCmd[name]
		if cr == nil {
			cr = &cmdRules{bySub: map[string][]*Rule{}}
			tr.byCmd[name] = cr
		}
		if len(r.Words) < 2 || slices.ContainsFunc(r.Words[1], func(w string) bool { return strings.ContainsAny(w, "*?[") }) {
			cr.other = append(cr.other, r)
			continue
		}
		for _, sub := range r.Words[1] {
			cr.bySub[sub] = append(cr.bySub[sub], r)
		}
	}
}

// Len returns the number of rules.
func (e *Evaluator) Len() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.index.n
}

// Load parses a rule file into a layer and checks its examples against the
// file's own rules. A bad line or a failing example is a *ParseError
// naming the line; then no rule of the file is added.
func (e *Evaluator) Load(layer Layer, name string, data []byte) error {
	rules, examples, err := ParseRules(name, data, layer, e.kinds)
	if err != nil {
		return err
	}
	check := NewEvaluator(&Options{Tools: e.kinds, ReadOnlyTools: []string{}, Root: e.root, Home: e.home})
	check.Add(layer, rules...)
	for _, ex := range examples {
		call, err := e.exampleCall(ex)
		if err == nil {
			var got Effect
			got, err = check.rulesOnly(call)
			if err == nil && got != ex.Want {
				err = fmt.Errorf("example expects %s but the rules give %s", ex.Want, got)
			}
		}
		if err != nil {
			return &ParseError{Name: name, Line: ex.Line, Text: "example " + string(ex.Want) + " " + ex.Tool + ": " + ex.Input, Err: err}
		}
	}
	e.Add(layer, rules...)
	return nil
}

func (e *Evaluator) exampleCall(ex Example) (Call, error) {
	fieldName := ""
	if f, ok := e.kinds.Shell[ex.Tool]; ok {
		fieldName = f
	} else if f, ok := e.kinds.File[ex.Tool]; ok {
		fieldName = f
	} else if f, ok := e.kinds.Network[ex.Tool]; ok {
		fieldName = f
	}
	input := json.RawMessage(`{}`)
	if fieldName != "" {
		b, err := json.Marshal(map[string]string{fieldName: ex.Input})
		if err != nil {
			return Call{}, err
		}
		input = b
	} else if ex.Input != "" {
		if !json.Valid([]byte(ex.Input)) {
			return Call{}, fmt.Errorf("the input of an example for %q must be its JSON input", ex.Tool)
		}
		input = json.RawMessage(ex.Input)
	}
	cwd := e.root
	if cwd == "" {
		cwd = "/"
	}
	return Call{Tool: ex.Tool, Input: input, Cwd: cwd}, nil
}

// rulesOnly evaluates call against the rules alone: an unmatched call or
// segment is Ask.
func (e *Evaluator) rulesOnly(call Call) (Effect, error) {
	d, err := e.decide(context.Background(), call, nil, true)
	return d.Effect, err
}

// Decision is the evaluation of one call.
type Decision struct {
	Effect Effect `json:"effect"`
	// Rule is the rule that decided, if a rule did.
	Rule *Rule `json:"rule,omitempty"`
	// Reason explains the decision in words fit for a user or a model.
	Reason string `json:"reason"`
	// Segments are the per-segment decisions of a shell command.
	Segments []SegmentDecision `json:"segments,omitempty"`
	// Verdicts are the analyzers' verdicts.
	Verdicts []safety.Verdict `json:"verdicts,omitempty"`
	// Risk is the most severe risk of the verdicts (empty if no analyzer
	// ran).
	Risk safety.Risk `json:"risk,omitempty"`
}

// SegmentDecision is the decision on one segment of a shell command.
type SegmentDecision struct {
	Text   string      `json:"text"`
	Argv   []string    `json:"argv"`
	Effect Effect      `json:"effect"`
	Rule   *Rule       `json:"rule,omitempty"`
	Risk   safety.Risk `json:"risk"`
	Reason string      `json:"reason"`
}

// Evaluate decides call from the rules of every layer and the analyzers:
//
//   - Every segment of a shell command is decided on its own: by the
//     strongest matching rule, else by its risk (low → allow, critical →
//     deny, anything else → ask). A critical segment is denied even when a
//     rule allows it. The command's decision is the strongest of its
//     segments' and of the findings about the command as a whole (a pipe
//     into a shell, a parse error, …), so a compound command is allowed
//     only when every segment is.
//   - File and network tools are decided by path and domain rules; a
//     read-only tool without a rule is allowed unless it reads a credential
//     file.
//   - Other tools are decided by tool rules, else asked.
//
// Extra analyzers can only make the decision stricter. Evaluate returns an
// error only when ctx is done.
func (e *Evaluator) Evaluate(ctx context.Context, call Call) (Decision, error) {
	return e.decide(ctx, call, nil, false)
}

// EvaluateWith is Evaluate with extra session-layer rules (remembered
// approvals saved as rules).
func (e *Evaluator) EvaluateWith(ctx context.Context, call Call, extra []Rule) (Decision, error) {
	return e.decide(ctx, call, extra, false)
}

// candidates returns the rules that may match a call of tool (running
// the command cmd, for shell tools), as a few slices that are not copied.
func (e *Evaluator) candidates(tool string, pos []string, extra []Rule) [][]*Rule {
	out := make([][]*Rule, 0, 5)
	if tr := e.index.byTool[tool]; tr != nil {
		out = append(out, tr.plain)
		if len(pos) > 0 {
			if cr := tr.byCmd[path.Base(pos[0])]; cr != nil {
				out = append(out, cr.other)
				if len(pos) > 1 {
					out = append(out, cr.bySub[pos[1]])
				}
			}
			out = append(out, tr.anyCmds)
		}
	}
	var more []*Rule
	for _, r := range e.index.globTool {
		if m, _ := path.Match(r.Tool, tool); m {
			more = append(more, r)
		}
	}
	for i := range extra {
		if m, _ := path.Match(extra[i].Tool, tool); m || extra[i].Tool == tool {
			more = append(more, &extra[i])
		}
	}
	return append(out, more)
}

// strongest returns the strongest matching rule among rs for which match
// is true, preferring earlier layers between equals.
func strongest(rss [][]*Rule, match func(*Rule) bool) *Rule {
	var best *Rule
	for _, rs := range rss {
		for _, r := range rs {
			if best != nil && r.Effect.strength() < best.Effect.strength() {
				continue // cannot win: skip the match
			}
			if !match(r) {
				continue
			}
			if best == nil || r.Effect.strength() > best.Effect.strength() ||
				r.Effect == best.Effect && layerRank(r.Layer) < layerRank(best.Layer) {
				best = r
			}
		}
	}
	return best
}

func layerRank(l Layer) int {
	for i, x := range layerOrder {
		if x == l {
			return i
		}
	}
	return len(layerOrder)
}

func effectOfRisk(r safety.Risk) Effect {
	switch r {
	case safety.Low:
		return Allow
	case safety.Critical:
		return Deny
	}
	return Ask
}

func (e *Evaluator) decide(ctx context.Context, call Call, extra []Rule, rulesOnly bool) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	var d Decision
	switch {
	case e.kinds.Shell[call.Tool] != "":
		e.decideShell(ctx, call, extra, rulesOnly, &d)
	case e.kinds.File[call.Tool] != "":
		e.decideFile(call, extra, rulesOnly, &d)
	case e.kinds.Network[call.Tool] != "":
		e.decideNetwork(call, extra, rulesOnly, &d)
	default:
		r := strongest(e.candidates(call.Tool, nil, extra), func(r *Rule) bool { return r.Kind == MatchTool })
		switch {
		case r != nil:
			d.Effect, d.Rule, d.Reason = r.Effect, r, fmt.Sprintf("rule %q", r.Text)
		case e.readOnly[call.Tool] && !rulesOnly:
			d.Effect, d.Reason = Allow, call.Tool+" is a read-only tool"
		default:
			d.Effect, d.Reason = Ask, "no rule covers "+call.Tool
		}
	}
	if !rulesOnly && len(e.extra) > 0 && d.Effect != Deny {
		e.runExtra(ctx, call, &d)
	}
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	return d, nil
}

func (e *Evaluator) runExtra(ctx context.Context, call Call, d *Decision) {
	sc := safety.Call{Tool: call.Tool, Args: call.Input, Cwd: call.Cwd}
	for _, a := range e.extra {
		v, err := a.Analyze(ctx, sc)
		if err != nil {
			v = safety.Verdict{Analyzer: fmt.Sprintf("%T", a), Risk: safety.Unknown, Category: safety.CatUnknown, Reasons: []string{"analyzer failed: " + err.Error()}}
		}
		if v.Risk.Severity() == 0 {
			v.Risk = safety.Unknown
		}
		d.Verdicts = append(d.Verdicts, v)
		d.Risk = d.Risk.Max(v.Risk)
		if eff := effectOfRisk(v.Risk); eff.strength() > d.Effect.strength() {
			d.Effect, d.Rule = eff, nil
			d.Reason = v.Analyzer + " judged the call " + string(v.Risk)
			if len(v.Reasons) > 0 {
				d.Reason += ": " + v.Reasons[0]
			}
		}
	}
}

func (e *Evaluator) decideShell(ctx context.Context, call Call, extra []Rule, rulesOnly bool, d *Decision) {
	v := e.analyzeShell(ctx, call)
	if !rulesOnly {
		d.Verdicts = append(d.Verdicts, v)
		d.Risk = v.Risk
	}
	d.Effect = Allow
	var decider *SegmentDecision
	for _, s := range v.Segments {
		if s.Argv == nil || len(s.Argv) == 0 {
			if !rulesOnly && s.Risk != safety.Low {
				sd := SegmentDecision{Text: s.Text, Effect: effectOfRisk(s.Risk), Risk: s.Risk, Reason: firstReason(s.Findings)}
				d.Segments = append(d.Segments, sd)
			}
			continue
		}
		pos, flags := splitArgv(s.Argv)
		r := strongest(e.candidates(call.Tool, pos, extra), func(r *Rule) bool {
			return r.Kind == MatchTool || r.Kind == MatchCommand && r.matchCommand(pos, flags)
		})
		sd := SegmentDecision{Text: s.Text, Argv: s.Argv, Risk: s.Risk}
		switch {
		case r != nil:
			sd.Effect, sd.Rule, sd.Reason = r.Effect, r, "rule "+strconv.Quote(r.Text)
			switch {
			case rulesOnly:
			case s.Risk == safety.Critical && r.Effect != Deny:
				sd.Effect, sd.Reason = Deny, "critical: "+firstReason(s.Findings)+fmt.Sprintf(" (rule %q cannot allow it)", r.Text)
			case r.Effect == Allow && len(s.Redirects) > 0:
				// A rule allows a command, not where its output is written.
				sd.Effect = Ask
				sd.Reason = fmt.Sprintf("rule %q does not cover the redirection to %s", r.Text, strings.Join(s.Redirects, ", "))
			}
		case rulesOnly:
			sd.Effect, sd.Reason = Ask, "no rule covers it"
		default:
			sd.Effect, sd.Reason = effectOfRisk(s.Risk), string(s.Risk)+" risk"
			if reason := firstReason(s.Findings); reason != "" {
				sd.Reason += ": " + reason
			}
		}
		d.Segments = append(d.Segments, sd)
	}
	for i := range d.Segments {
		if decider == nil || d.Segments[i].Effect.strength() > decider.Effect.strength() {
			decider = &d.Segments[i]
		}
	}
	if decider != nil {
		d.Effect, d.Rule, d.Reason = decider.Effect, decider.Rule, decider.Reason
		if len(d.Segments) > 1 {
			d.Reason = "segment " + strconv.Quote(decider.Text) + ": " + decider.Reason
		}
	} else {
		d.Effect, d.Reason = Ask, "the command has no segment to judge"
	}
	if rulesOnly {
		return
	}
	for _, f := range v.Findings {
		if eff := effectOfRisk(f.Risk); eff.strength() > d.Effect.strength() {
			d.Effect, d.Rule, d.Reason = eff, nil, string(f.Risk)+": "+f.Reason
		}
	}
}

func firstReason(fs []safety.Finding) string {
	best := -1
	for i, f := range fs {
		if best < 0 || f.Risk.Severity() > fs[best].Risk.Severity() {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return fs[best].Reason
}

func (e *Evaluator) decideFile(call Call, extra []Rule, rulesOnly bool, d *Decision) {
	p, err := field(call.Input, e.kinds.File[call.Tool])
	if err != nil {
		d.Effect, d.Reason = Ask, call.Tool+": "+err.Error()
		return
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(call.Cwd, p)
	}
	abs = filepath.Clean(abs)
	root := e.root
	if root == "" {
		root = call.Cwd
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		rel = ""
	}
	rel, abs = filepath.ToSlash(rel), filepath.ToSlash(abs)
	r := strongest(e.candidates(call.Tool, nil, extra), func(r *Rule) bool {
		return r.Kind == MatchTool || r.Kind == MatchPath && r.matchPath(rel, abs)
	})
	switch {
	case r != nil:
		d.Effect, d.Rule, d.Reason = r.Effect, r, fmt.Sprintf("rule %q", r.Text)
	case rulesOnly:
		d.Effect, d.Reason = Ask, "no rule covers "+p
	default:
		if kind, cred := safety.CredentialPath(abs, e.home); cred {
			d.Effect, d.Risk, d.Reason = Ask, safety.High, "credential file: "+kind
		} else if e.readOnly[call.Tool] {
			d.Effect, d.Risk, d.Reason = Allow, safety.Low, call.Tool+" is a read-only tool"
		} else {
			d.Effect, d.Reason = Ask, "no rule covers "+call.Tool+" on "+p
		}
	}
}

func (e *Evaluator) decideNetwork(call Call, extra []Rule, rulesOnly bool, d *Decision) {
	raw, err := field(call.Input, e.kinds.Network[call.Tool])
	host := ""
	if err == nil {
		host = hostOf(raw)
	}
	if host == "" {
		d.Effect, d.Reason = Ask, call.Tool+": no host in the URL"
		return
	}
	r := strongest(e.candidates(call.Tool, nil, extra), func(r *Rule) bool {
		return r.Kind == MatchTool || r.Kind == MatchDomain && r.matchDomain(host)
	})
	if r != nil {
		d.Effect, d.Rule, d.Reason = r.Effect, r, fmt.Sprintf("rule %q", r.Text)
		return
	}
	d.Effect, d.Reason = Ask, "no rule covers "+host
}

// ProposeRule returns the allow rule that approving call "as a rule" would
// save, in the file format, or "" when there is no rule narrower than the
// tool itself that covers it (a compound shell command, for example).
func (e *Evaluator) ProposeRule(call Call) string {
	switch {
	case e.kinds.Shell[call.Tool] != "":
		v := e.analyzeShell(context.Background(), call)
		var segs []safety.Segment
		for _, s := range v.Segments {
			if len(s.Argv) > 0 {
				segs = append(segs, s)
			}
		}
		if len(segs) != 1 || len(v.Findings) > 0 {
			return ""
		}
		pos, _ := splitArgv(segs[0].Argv)
		if len(pos) > 2 {
			pos = pos[:2]
		}
		for _, w := range pos {
			if w == dynamic || strings.ContainsAny(w, " \t|*?[:#") || w == "" {
				return ""
			}
		}
		pos[0] = path.Base(pos[0])
		return "allow " + call.Tool + ": " + strings.Join(pos, " ")
	case e.kinds.File[call.Tool] != "":
		p, err := field(call.Input, e.kinds.File[call.Tool])
		if err != nil || strings.ContainsAny(p, " \t*?[") {
			return ""
		}
		if !filepath.IsAbs(p) {
			root := e.root
			if root == "" {
				root = call.Cwd
			}
			abs := filepath.Join(call.Cwd, p)
			rel, err := filepath.Rel(root, abs)
			if err != nil || strings.HasPrefix(rel, "..") {
				p = filepath.ToSlash(abs)
			} else {
				p = filepath.ToSlash(rel)
			}
		}
		return "allow " + call.Tool + ": path " + p
	case e.kinds.Network[call.Tool] != "":
		raw, err := field(call.Input, e.kinds.Network[call.Tool])
		if h := hostOf(raw); err == nil && h != "" {
			return "allow " + call.Tool + ": domain " + h
		}
		return ""
	}
	return "allow " + call.Tool
}
