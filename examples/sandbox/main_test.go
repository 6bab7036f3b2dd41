package main

import (
	"context"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox/bwrapsandbox"
)

func TestSandboxExample(t *testing.T) {
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"prepared 3 files (107 bytes)",
		"  docs/README.md\n  greet.go\n  main.go\n",
		"selecting node_modules: refused (true)",
		"greet.go:1\n  main.go:1\n",
		"reading the planted symlink: refused as a path escape: true",
		"running in ../../..: refused as a path escape: true",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "git inside work/ finds the project's repository: true") {
		t.Errorf("git in work/ reached the project's repository:\n%s", got)
	}
	err := bwrapsandbox.Probe(context.Background(), "")
	if err == nil && !strings.Contains(got, "bwrapsandbox: cwd /workspace, pid 2, interfaces: lo \n") {
		t.Errorf("bubblewrap ran but the output does not show its isolation:\n%s", got)
	}
	testenv.Need(t, "bwrap", err) // the rest of the example ran either way
}
