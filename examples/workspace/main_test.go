package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWorkspaceExample(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	want := `workspace id: quickstart-demo
a secret prints as [REDACTED]
reopened "user:alice": clean=true
  m1 user:      Fix the failing test in parser.go
  m2 assistant: Done: the off-by-one in Next is fixed.
  m3 user:      Now run the linter
  m4 assistant: The linter is clean.
extension state: 2 turns
runtime log masks the key: true
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
