package proposal

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var exampleHandoff = &Handoff{
	Context:        "The parser drops the last record.\n\n  See issue 12.",
	Goal:           "Fix the parser",
	DoD:            "go test ./... passes",
	SandboxWorkDir: "/state/workspaces/ws/sandboxes/run1/worker/work",
	ProposalJSON:   "/state/workspaces/ws/sandboxes/run1/worker/proposal/proposal.json",
	ChangedFiles:   []string{"parser.go", "parser_test.go"},
	Tests:          []string{"go test ./... (pass)"},
	Next:           []string{"Orchestrator: review + apply or request changes"},
}

func TestHandoffRoundTrip(t *testing.T) {
	s := exampleHandoff.Format()
	got, err := ParseHandoff(s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(exampleHandoff, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s\n%s", diff, s)
	}
}

func TestParseHandoff(t *testing.T) {
	seed := "HANDOFF\r\nContext: c\r\nGoal: g\r\nDoD: d\r\nSandboxWorkDir: w\r\nProposalJson: p\r\nChangedFiles:\r\n- src/a.ts\r\nTests:\r\n- (선택) npm test\r\nNext:\r\n- Orchestrator: review + apply or request changes\r\n"
	got, err := ParseHandoff(seed)
	if err != nil {
		t.Fatal(err)
	}
	want := &Handoff{Context: "c", Goal: "g", DoD: "d", SandboxWorkDir: "w", ProposalJSON: "p",
		ChangedFiles: []string{"src/a.ts"}, Tests: []string{"(선택) npm test"}, Next: []string{"Orchestrator: review + apply or request changes"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []struct{ in, msg string }{
		{"Context: x\n", "first line"},
		{"HANDOFF\nColor: blue\n", "unknown field"},
		{"HANDOFF\nGoal: a\nGoal: b\n", "repeated"},
		{"HANDOFF\n- stray\n", "outside a list"},
		{"HANDOFF\nTests: go test\n", "is a list"},
		{"HANDOFF\njust words\n", "not a field"},
	} {
		if _, err := ParseHandoff(bad.in); err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("ParseHandoff(%q) = %v, want an error with %q", bad.in, err, bad.msg)
		}
	}
}
