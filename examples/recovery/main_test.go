package main

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMain runs the child role when run re-executes the test binary, as it
// re-executes the program under go run.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		if err := child(dir, os.Stdout); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const wantOutput = `parent: committed 2 turns (m1-m4)
child: began turn 3, appended m5 and m6, ended the step
parent: Open fails with ErrLocked while the child holds the instance
parent: killed the child mid-turn (SIGKILL)
reopened: crashed=true, status=processing, torn tails repaired=0
committed messages:
  m1 user:      Fix the failing test in parser.go
  m2 assistant: Done: the off-by-one in Next is fixed.
  m3 user:      Now run the linter
  m4 assistant: The linter is clean.
pending turn, 2 events:
  append m5 user:      Run the tests
  append m6 assistant: Running go test ./...
resumed the pending turn, appended m7, committed
final messages:
  m1 user:      Fix the failing test in parser.go
  m2 assistant: Done: the off-by-one in Next is fixed.
  m3 user:      Now run the linter
  m4 assistant: The linter is clean.
  m5 user:      Run the tests
  m6 assistant: Running go test ./...
  m7 assistant: All 41 tests pass.
`

func TestRun(t *testing.T) {
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1", "ios", "android":
		t.Skipf("the workspace store has no instance lock on %s", runtime.GOOS)
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var out strings.Builder
	if err := run(&out); err != nil {
		t.Fatalf("run: %v\noutput so far:\n%s", err, out.String())
	}
	if diff := cmp.Diff(wantOutput, out.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("run left %d entries in the temporary directory, want none", len(left))
	}
}
