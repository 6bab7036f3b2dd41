package proposal

import (
	"fmt"
	"path/filepath"
	"strings"
)

// A Handoff is the message a worker ends with to hand a proposal to the
// orchestrator: the seed's extended HANDOFF block. Its text form is
//
//	HANDOFF
//	Context: what the worker was told
//	Goal: what it set out to do
//	DoD: the definition of done
//	SandboxWorkDir: <sandbox>/work
//	ProposalJson: <sandbox>/proposal/proposal.json
//	ChangedFiles:
//	- src/a.go
//	Tests:
//	- go test ./... (pass)
//	Next:
//	- Orchestrator: review + apply or request changes
//
// A text field continues on following lines indented by two spaces; list
// fields hold one "- item" per line. Empty fields are left out.
type Handoff struct {
	Context        string
	Goal           string
	DoD            string
	SandboxWorkDir string
	ProposalJSON   string
	ChangedFiles   []string
	Tests          []string
	Next           []string
}

// NewHandoff returns the Handoff of a proposal created in the sandbox
// directory sandboxDir, with its changed files and the default next step.
func NewHandoff(sandboxDir string, p *Proposal) *Handoff {
	h := &Handoff{
		SandboxWorkDir: filepath.Join(sandboxDir, p.Paths.WorkDir),
		ProposalJSON:   filepath.Join(sandboxDir, "proposal", JSONFile),
		Next:           []string{"Orchestrator: review + apply or request changes"},
	}
	for _, c := range p.ChangedFiles {
		h.ChangedFiles = append(h.ChangedFiles, string(quoteName(nil, c.Path)))
	}
	return h
}

type handoffField struct {
	key  string
	text func(*Handoff) *string
	list func(*Handoff) *[]string
}

var handoffFields = []handoffField{
	{key: "Context", text: func(h *Handoff) *string { return &h.Context }},
	{key: "Goal", text: func(h *Handoff) *string { return &h.Goal }},
	{key: "DoD", text: func(h *Handoff) *string { return &h.DoD }},
	{key: "SandboxWorkDir", text: func(h *Handoff) *string { return &h.SandboxWorkDir }},
	{key: "ProposalJson", text: func(h *Handoff) *string { return &h.ProposalJSON }},
	{key: "ChangedFiles", list: func(h *Handoff) *[]string { return &h.ChangedFiles }},
	{key: "Tests", list: func(h *Handoff) *[]string { return &h.Tests }},
	{key: "Next", list: func(h *Handoff) *[]string { return &h.Next }},
}

// Format returns h as a HANDOFF block. Parse reads it back as h, except
// that text is normalised the way Parse normalises it: spaces around the
// first line and items are trimmed, line breaks in items become spaces,
// carriage returns at line ends are dropped, and empty items are left out.
func (h *Handoff) Format() string {
	var b strings.Builder
	b.WriteString("HANDOFF\n")
	for _, f := range handoffFields {
		if f.text != nil {
			v := *f.text(h)
			if v == "" {
				continue
			}
			lines := strings.Split(v, "\n")
			fmt.Fprintf(&b, "%s: %s\n", f.key, strings.TrimSpace(strings.TrimSuffix(lines[0], "\r")))
			for _, l := range lines[1:] {
				b.WriteString("  " + strings.TrimSuffix(l, "\r") + "\n")
			}
			continue
		}
		var items []string
		for _, it := range *f.list(h) {
			it = strings.TrimSpace(strings.Join(strings.Fields(strings.ReplaceAll(it, "\n", " ")), " "))
			if it != "" {
				items = append(items, it)
			}
		}
		if len(items) == 0 {
			continue
		}
		b.WriteString(f.key + ":\n")
		for _, it := range items {
			b.WriteString("- " + it + "\n")
		}
	}
	return b.String()
}

// ParseHandoff reads a HANDOFF block: a first line "HANDOFF" (blank lines
// around the block are ignored), then the fields of Handoff in any order.
// Unknown or repeated fields, text outside a field, and list items under a
// text field are errors that name the line.
func ParseHandoff(s string) (*Handoff, error) {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
		i++
	}
	if i == len(lines) || strings.TrimSpace(lines[i]) != "HANDOFF" {
		return nil, fmt.Errorf("proposal: handoff: the first line must be HANDOFF")
	}
	h := &Handoff{}
	seen := map[string]bool{}
	var text *string // the text field being continued
	var list *[]string
	bad := func(n int, format string, args ...any) error {
		return fmt.Errorf("proposal: handoff line %d: %s", n+1, fmt.Sprintf(format, args...))
	}
	for i++; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "  ") && text != nil:
			*text += "\n" + l[2:]
			continue
		case strings.TrimSpace(l) == "":
			text, list = nil, nil
			continue
		case strings.HasPrefix(l, "- ") || l == "-":
			if list == nil {
				return nil, bad(i, "list item %q outside a list field (ChangedFiles, Tests or Next)", l)
			}
			if it := strings.TrimSpace(l[1:]); it != "" {
				*list = append(*list, strings.Join(strings.Fields(it), " "))
			}
			continue
		}
		key, val, ok := strings.Cut(l, ":")
		if !ok {
			return nil, bad(i, "%q is not a field (Key: value)", l)
		}
		var f *handoffField
		for k := range handoffFields {
			if handoffFields[k].key == key {
				f = &handoffFields[k]
			}
		}
		if f == nil {
			return nil, bad(i, "unknown field %q; the fields are Context, Goal, DoD, SandboxWorkDir, ProposalJson, ChangedFiles, Tests and Next", key)
		}
		if seen[key] {
			return nil, bad(i, "field %s repeated", key)
		}
		seen[key] = true
		text, list = nil, nil
		if f.text != nil {
			text = f.text(h)
			*text = strings.TrimSpace(val)
			continue
		}
		if strings.TrimSpace(val) != "" {
			return nil, bad(i, "%s is a list: put each item on its own line as \"- item\"", key)
		}
		list = f.list(h)
	}
	return h, nil
}
