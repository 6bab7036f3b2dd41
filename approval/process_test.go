package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/workspace"
)

// The test in this file runs the hook in real child processes: the test
// binary re-executes itself with -test.run=^TestHelperProcess$ and a role in
// the environment. The first process stops at a pending approval and
// exits; a second, new process resumes it from the file store.

const (
	helperRoleEnv    = "PADDOCK_APPROVAL_HELPER"  // "propose" or "resume"
	helperProjectEnv = "PADDOCK_APPROVAL_PROJECT" // project root
	helperStateEnv   = "PADDOCK_APPROVAL_STATE"   // state root
	helperCommandEnv = "PADDOCK_APPROVAL_COMMAND" // the command the "resume" process is about to run
	helperPendingEnv = "PADDOCK_APPROVAL_PENDING" // the pending id to resume
	helperResultFile = "PADDOCK_APPROVAL_RESULT"  // where the helper writes its JSON result
)

func testPaths(t testing.TB) workspace.Paths {
	t.Helper()
	p, err := workspace.NewPaths(t.TempDir(), &workspace.PathsOptions{StateRoot: t.TempDir(), WorkspaceName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHelperProcess is not a test: it is the body of the child processes.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperRoleEnv)
	if role == "" {
		return
	}
	out, err := helper(role)
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", role, err)
		os.Exit(2)
	}
	data, _ := json.Marshal(out)
	if err := os.WriteFile(os.Getenv(helperResultFile), data, 0o600); err != nil {
		os.Exit(3)
	}
	os.Exit(0)
}

func helper(role string) (any, error) {
	paths, err := workspace.NewPaths(os.Getenv(helperProjectEnv), &workspace.PathsOptions{StateRoot: os.Getenv(helperStateEnv), WorkspaceName: "test"})
	if err != nil {
		return nil, err
	}
	store, err := OpenFileStore(paths, nil)
	if err != nil {
		return nil, err
	}
	audit, err := OpenAudit(filepath.Join(paths.WorkspaceDir(), "approval", "audit.jsonl"), &AuditOptions{Sync: true})
	if err != nil {
		return nil, err
	}
	defer audit.Close()
	ev := NewEvaluator(nil)
	if err := ev.Load(LayerProject, "p.rules", []byte("allow bash: git status\n")); err != nil {
		return nil, err
	}
	h := NewHook(ev, &HookOptions{Store: store, Audit: audit, Session: "proc-" + role})
	ctx := context.Background()
	switch role {
	case "propose":
		return h.Process(ctx, []ToolCall{bash("toolu_1", "git status"), bash("toolu_2", "git push origin main")}, paths.ProjectRoot)
	case "resume":
		call := bash("toolu_2", os.Getenv(helperCommandEnv))
		o, err := h.Resume(ctx, os.Getenv(helperPendingEnv), call, paths.ProjectRoot, Response{Kind: Approve, By: "bob"})
		if err != nil {
			return map[string]string{"error": err.Error()}, nil
		}
		return o, nil
	}
	return nil, fmt.Errorf("unknown role %q", role)
}

func runHelper(t *testing.T, paths workspace.Paths, role string, env ...string) []byte {
	t.Helper()
	result := filepath.Join(t.TempDir(), "result.json")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperRoleEnv+"="+role, helperProjectEnv+"="+paths.ProjectRoot,
		helperStateEnv+"="+paths.StateRoot, helperResultFile+"="+result)
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper %s: %v\n%s", role, err, stderr.String())
	}
	data, err := os.ReadFile(result)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestPendingResumeAcrossProcesses stops one process at a pending approval
// and resumes it in another: an edited call is refused, the approved one
// runs, and the audit log written by both processes verifies.
func TestPendingResumeAcrossProcesses(t *testing.T) {
	switch runtime.GOOS {
	case "windows", "plan9", "js", "wasip1", "ios", "android":
		t.Skipf("no flock or no re-executable test binary on %s", runtime.GOOS)
	}
	paths := testPaths(t)
	var b Batch
	if err := json.Unmarshal(runHelper(t, paths, "propose"), &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Outcomes) != 2 || b.Outcomes[0].Action != Run || b.Outcomes[1].Action != Wait || len(b.Pending) != 1 {
		t.Fatalf("first process: %+v", b)
	}
	id := b.Pending[0].ID

	// The pending record is on disk, readable by this (third) process.
	store, err := OpenFileStore(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := store.ListPending(context.Background())
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Digest != b.Pending[0].Digest {
		t.Fatalf("store after the first process: %+v, %v", list, err)
	}

	// A new process trying to run an edited call is refused; the record stays.
	out := runHelper(t, paths, "resume", helperPendingEnv+"="+id, helperCommandEnv+"=git push --force origin main")
	if !strings.Contains(string(out), "call changed") {
		t.Fatalf("edited call: %s", out)
	}
	// Another new process resumes with the approved call.
	var o Outcome
	if err := json.Unmarshal(runHelper(t, paths, "resume", helperPendingEnv+"="+id, helperCommandEnv+"=git push origin main"), &o); err != nil {
		t.Fatal(err)
	}
	if o.Action != Run || o.CallID != "toolu_2" || o.By != "bob" {
		t.Fatalf("resumed outcome: %+v", o)
	}
	if list, _ := store.ListPending(context.Background()); len(list) != 0 {
		t.Errorf("pending left after resume: %+v", list)
	}
	f, err := os.Open(filepath.Join(paths.WorkspaceDir(), "approval", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := VerifyAudit(f)
	// propose: 2 evaluations, 1 run, 1 pending; refused resume: 1; resume: 1 decision.
	if err != nil || sum.Records != 6 {
		t.Errorf("audit: %d records, %v; want 6", sum.Records, err)
	}
}
