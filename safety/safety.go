package safety

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Risk is how dangerous a call is judged to be. Risks are ordered by
// severity with [Risk.Severity]: Low < Medium < Unknown < High < Critical.
// Unknown sits above Medium and below High: a call that could not be judged
// is never treated as safe, but a positive finding of danger outranks it.
type Risk string

// The risk levels.
const (
	// Low: read-only; safe to run without asking.
	Low Risk = "low"
	// Medium: ordinary changes to the workspace (builds, edits, installs).
	Medium Risk = "medium"
	// Unknown: the call could not be judged (parse error, dynamic command,
	// unknown form, a failing classifier). Treat as "ask".
	Unknown Risk = "unknown"
	// High: dangerous but with legitimate uses (recursive forced deletes,
	// credential reads, privilege, network uploads).
	High Risk = "high"
	// Critical: destructive or malicious forms with no plausible benign use
	// in an agent (rm -rf /, fork bombs, curl | sh).
	Critical Risk = "critical"
)

// Severity orders risks: 1 (Low) to 5 (Critical); 0 for an invalid risk.
func (r Risk) Severity() int {
	switch r {
	case Low:
		return 1
	case Medium:
		return 2
	case Unknown:
		return 3
	case High:
		return 4
	case Critical:
		return 5
	}
	return 0
}

// Max returns the more severe of r and o; an invalid risk counts as Unknown.
func (r Risk) Max(o Risk) Risk {
	if r.Severity() == 0 {
		r = Unknown
	}
	if o.Severity() == 0 {
		o = Unknown
	}
	if o.Severity() > r.Severity() {
		return o
	}
	return r
}

// Category says what kind of danger a finding is.
type Category string

// The categories.
const (
	CatReadOnly         Category = "read-only"
	CatWrite            Category = "write"
	CatDestructive      Category = "destructive"
	CatNetwork          Category = "network"
	CatExfiltration     Category = "exfiltration"
	CatCredentials      Category = "credential-access"
	CatPrivilege        Category = "privilege"
	CatCodeExecution    Category = "code-execution"
	CatPersistence      Category = "persistence"
	CatResource         Category = "resource-exhaustion"
	CatPromptInjection  Category = "prompt-injection"
	CatMaliciousCommand Category = "malicious-command"
	CatUnknown          Category = "unknown"
)

// Call is a tool call to analyze.
type Call struct {
	// Tool is the tool's name, e.g. "bash".
	Tool string `json:"tool"`
	// Args is the call's JSON input.
	Args json.RawMessage `json:"args"`
	// Cwd is the directory the call runs in.
	Cwd string `json:"cwd,omitempty"`
}

// Finding is one reason for a risk.
type Finding struct {
	Risk     Risk     `json:"risk"`
	Category Category `json:"category"`
	Reason   string   `json:"reason"`
}

// Segment is one simple command of a shell command line, as the analyzer
// split it out of compound forms, with its own findings.
type Segment struct {
	// Text is the segment's source text.
	Text string `json:"text"`
	// Argv is the command after wrappers (sudo, env, timeout, …) were
	// looked through, with quotes removed. A word that is not a literal
	// (it expands a variable or a substitution) is [Dynamic].
	Argv []string `json:"argv"`
	// Offset is the byte offset of the segment in the analyzed text
	// (of the innermost string for bash -c and eval).
	Offset int `json:"offset"`
	// Depth is 0 for the top level, +1 inside each bash -c or eval string.
	Depth int `json:"depth,omitempty"`
	// Writes and Reads are the paths the segment is seen to write and read,
	// redirections included.
	Writes []string `json:"writes,omitempty"`
	Reads  []string `json:"reads,omitempty"`
	// Redirects are the targets of the segment's output redirections
	// (also in Writes), /dev/null and the like excluded.
	Redirects []string `json:"redirects,omitempty"`
	// Risk is the highest risk of the segment's findings (Low if none).
	Risk     Risk      `json:"risk"`
	Findings []Finding `json:"findings,omitempty"`
}

// Dynamic stands in Segment.Argv for a word whose value is only known when
// the shell runs (it expands a variable, a command substitution, …).
const Dynamic = "\x00dynamic"

// Verdict is an analyzer's judgment of a call.
type Verdict struct {
	// Analyzer names the analyzer, e.g. "shell" or "llm".
	Analyzer string `json:"analyzer"`
	// Risk is the highest risk of all findings, segments included.
	Risk Risk `json:"risk"`
	// Category is the category of the most severe finding.
	Category Category `json:"category"`
	// Reasons are the reasons of the findings, most severe first.
	Reasons []string `json:"reasons,omitempty"`
	// Findings that concern the whole call rather than one segment (a
	// parse error, a pipe into a shell, a credential read sent over the
	// network).
	Findings []Finding `json:"findings,omitempty"`
	// Segments are the per-segment findings of a shell command.
	Segments []Segment `json:"segments,omitempty"`
	// Parts are the verdicts an [Ensemble] combined.
	Parts []Verdict `json:"parts,omitempty"`
}

// Safe reports whether the verdict allows running the call without asking.
func (v Verdict) Safe() bool { return v.Risk == Low }

// Analyzer judges tool calls.
//
// Analyze must not return a verdict less severe than what it knows: when it
// cannot judge a call it returns Unknown, never Low. An error means the
// analyzer failed; callers treat it as an Unknown verdict (see [Ensemble]).
// Implementations must be safe for concurrent use.
type Analyzer interface {
	Analyze(ctx context.Context, call Call) (Verdict, error)
}

// finish computes v.Risk, v.Category and v.Reasons from the findings.
func (v *Verdict) finish() {
	var all []Finding
	all = append(all, v.Findings...)
	for _, s := range v.Segments {
		all = append(all, s.Findings...)
	}
	v.Risk, v.Category, v.Reasons = Low, CatReadOnly, nil
	if len(all) == 0 {
		return
	}
	slices.SortStableFunc(all, func(a, b Finding) int { return b.Risk.Severity() - a.Risk.Severity() })
	v.Risk, v.Category = all[0].Risk, all[0].Category
	seen := map[string]bool{}
	for _, f := range all {
		if f.Risk == Low || seen[f.Reason] {
			continue
		}
		seen[f.Reason] = true
		v.Reasons = append(v.Reasons, f.Reason)
	}
}

// unknownVerdict is the fail-closed verdict of an analyzer that could not judge.
func unknownVerdict(analyzer, format string, args ...any) Verdict {
	f := Finding{Risk: Unknown, Category: CatUnknown, Reason: fmt.Sprintf(format, args...)}
	return Verdict{Analyzer: analyzer, Risk: Unknown, Category: CatUnknown, Reasons: []string{f.Reason}, Findings: []Finding{f}}
}
