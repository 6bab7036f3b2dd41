package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/scripted.golden")

// TestScripted runs the example with the scripted human and compares its
// whole output with testdata/scripted.golden (refresh with -update).
func TestScripted(t *testing.T) {
	var out strings.Builder
	if err := run(&out, strings.NewReader(""), false); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/scripted.golden", []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/scripted.golden")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), out.String()); d != "" {
		t.Errorf("output (-want +got):\n%s", d)
	}
}

// TestInteractive answers on a fake terminal.
func TestInteractive(t *testing.T) {
	answers := strings.Join([]string{
		"s",                  // git push origin main: for the session
		"n", "keep the logs", // find -exec rm
		"m", "CMD is unset", // $CMD --help
		"e", `{"command":"npm install --ignore-scripts left-pad"}`,
		"q", // make deploy
	}, "\n") + "\n"
	var out strings.Builder
	if err := run(&out, strings.NewReader(answers), true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`toolu_06 "git push origin main"                                  -> run (remembered)`,
		"Reason: keep the logs",
		"-> result: CMD is unset",
		`with {"command":"npm install --ignore-scripts left-pad"}`,
		"the turn was aborted",
		"this rule will be saved", // never: nobody chose r
	} {
		has := strings.Contains(out.String(), want)
		if has == (want == "this rule will be saved") {
			t.Errorf("output has %q: %v\n%s", want, has, out.String())
		}
	}
	if !strings.Contains(out.String(), "verified: true") {
		t.Errorf("audit not verified:\n%s", out.String())
	}
}
