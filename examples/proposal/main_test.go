package main

import (
	"os/exec"
	"strings"
	"testing"
)

func TestProposalExample(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the example makes a git project; git is not installed")
	}
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"# Proposal <id>",
		"| renamed | `old.md` → `docs/notes.md` (100%) | 0 | 0 |",
		"| deleted | `tmp.txt` | 0 | 1 |",
		"- 4 file(s) changed",
		"ChangedFiles:\n- NEW.md\n- docs/notes.md\n- main.go\n- tmp.txt\n",
		"== review: 4 file(s)",
		"  clean            old.md -> docs/notes.md\n",
		"== run 2, drift in other lines\n  merged           config.toml\n",
		"retries = 5\ntimeout = 10s\nverbose = true\n",
		"config.toml, base lines 4-4: project \"timeout = 1m\\n\", worker \"timeout = 30s\\n\"",
		"project unchanged: true",
		"run 3 events: proposal_created proposal_conflicted proposal_rejected",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	// git status shows exactly the applied change.
	for _, want := range []string{" M main.go", "?? NEW.md", "?? docs/", " D old.md", " D tmp.txt"} {
		if !strings.Contains(got, want) {
			t.Errorf("git status lacks %q:\n%s", want, got)
		}
	}
}
