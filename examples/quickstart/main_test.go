package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox/bwrapsandbox"
)

func TestQuickstart(t *testing.T) {
	for _, backend := range []string{"bwrap", "dir"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "bwrap" {
				testenv.Need(t, "bwrap", bwrapsandbox.Probe(context.Background(), ""))
			}
			var out strings.Builder
			if err := run(context.Background(), &out, scriptedApprover{}, backend, false); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			got := out.String()
			for _, want := range []string{
				"sandbox: " + backend,
				"→ exit status 1: FAIL: 2 + 3 = -1, want 5",
				"execute_bash `rm -rf .cache && sh test.sh`   [ask:",
				"→ answered by script: The user rejected this tool call",
				"→ exit status 0: ok: 2 + 3 = 5",
				"| +add() { echo $(($1 + $2)); }",
				"[applied] applied 1 files to the project",
				"[tests] sh test.sh in the project: passed",
				"project: ok: 2 + 3 = 5",
				"proposal.json",
				"(worker's turn: done)",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("the transcript lacks %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, filepath.Join("project", ".paddock")) {
				t.Error("runtime state in the project")
			}
		})
	}
}

func TestQuickstartUnknownBackend(t *testing.T) {
	if err := run(context.Background(), os.Stderr, scriptedApprover{}, "vm", false); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Errorf("run with backend vm: %v", err)
	}
}
