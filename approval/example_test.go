package approval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/paddockdev/paddock/approval"
)

const rules = `
allow bash: git status|log|diff
ask   bash: git push
deny  bash: rm -r -f
example deny bash: rm --force --recursive build
`

func bash(id, cmd string) approval.ToolCall {
	in, _ := json.Marshal(map[string]string{"command": cmd})
	return approval.ToolCall{ID: id, Name: "bash", Input: in}
}

func ExampleEvaluator() {
	e := approval.NewEvaluator(nil)
	if err := e.Load(approval.LayerProject, "project.rules", []byte(rules)); err != nil {
		log.Fatal(err)
	}
	for _, cmd := range []string{"git status", "git status && rm -fr build", "git push origin main", "ls -la"} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		d, err := e.Evaluate(context.Background(), approval.Call{Tool: "bash", Input: in, Cwd: "/src/app"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-5s %s\n", d.Effect, cmd)
	}
	// Output:
	// allow git status
	// deny  git status && rm -fr build
	// ask   git push origin main
	// allow ls -la
}

func ExampleParseRules() {
	_, _, err := approval.ParseRules("bad.rules", []byte("allow bash: git status\npermit bash: ls\n"), approval.LayerUser, approval.DefaultToolKinds)
	fmt.Println(err)
	// Output:
	// approval: bad.rules:2: a rule starts with allow, ask or deny, not "permit" (line "permit bash: ls")
}

func ExampleHook() {
	e := approval.NewEvaluator(nil)
	if err := e.Load(approval.LayerProject, "project.rules", []byte(rules)); err != nil {
		log.Fatal(err)
	}
	h := approval.NewHook(e, nil) // no approver: calls needing a human become pending
	ctx := context.Background()
	calls := []approval.ToolCall{bash("t1", "git status"), bash("t2", "rm -rf build"), bash("t3", "git push")}
	b, err := h.Process(ctx, calls, os.TempDir())
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range b.Outcomes {
		fmt.Println(o.CallID, o.Action)
	}
	fmt.Println(b.Outcomes[1].Result)

	// Later, perhaps in another process: the human approves t3.
	o, err := h.Resume(ctx, b.Pending[0].ID, calls[2], os.TempDir(), approval.Response{Kind: approval.Approve})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.CallID, o.Action)
	// An edited call is refused.
	b, _ = h.Process(ctx, []approval.ToolCall{bash("t4", "git push")}, os.TempDir())
	_, err = h.Resume(ctx, b.Pending[0].ID, bash("t4", "git push --force"), os.TempDir(), approval.Response{Kind: approval.Approve})
	fmt.Println(err != nil)
	// Output:
	// t1 run
	// t2 result
	// t3 pending
	// The tool call was not run: it was denied by policy (rule "deny  bash: rm -r -f").
	// t3 run
	// true
}

func ExampleTerminalApprover() {
	var out strings.Builder
	a := approval.NewTerminalApprover(strings.NewReader("n\nrun the tests first\n"), &out, "alice")
	h := approval.NewHook(approval.NewEvaluator(nil), &approval.HookOptions{Approver: a})
	b, err := h.Process(context.Background(), []approval.ToolCall{bash("t1", "git push")}, os.TempDir())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Outcomes[0].Action, b.Outcomes[0].Result)
	// Output:
	// result The user rejected this tool call; it was not run. Reason: run the tests first
}

func ExamplePrintable() {
	// A command that clears its own line and shows something harmless.
	fmt.Println(approval.Printable("rm -rf ~ \x1b[2K\rgit status"))
	// Plain text, non-ASCII and backslashes included, is left alone.
	fmt.Println(approval.Printable(`grep -E 'a|b' "메모.txt" \`))
	// Output:
	// "rm -rf ~ \x1b[2K\rgit status"
	// grep -E 'a|b' "메모.txt" \
}

func ExampleChannelApprover() {
	a, requests := approval.NewChannelApprover()
	go func() { // the host's UI
		req := <-requests
		req.Reply <- approval.Response{Kind: approval.Respond, Message: "CI pushes for us; skip " + req.Tool}
	}()
	h := approval.NewHook(approval.NewEvaluator(nil), &approval.HookOptions{Approver: a})
	b, err := h.Process(context.Background(), []approval.ToolCall{bash("t1", "git push")}, os.TempDir())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Outcomes[0].Action, b.Outcomes[0].Result)
	// Output:
	// result CI pushes for us; skip bash
}

func ExampleVerifyAudit() {
	dir, err := os.MkdirTemp("", "audit")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "audit.jsonl")
	a, err := approval.OpenAudit(path, nil)
	if err != nil {
		log.Fatal(err)
	}
	h := approval.NewHook(approval.NewEvaluator(nil), &approval.HookOptions{Audit: a})
	if _, err := h.Process(context.Background(), []approval.ToolCall{bash("t1", "ls")}, dir); err != nil {
		log.Fatal(err)
	}
	a.Close()
	data, _ := os.ReadFile(path)
	sum, err := approval.VerifyAudit(strings.NewReader(string(data)))
	fmt.Println(sum.Records, err)
	_, err = approval.VerifyAudit(strings.NewReader(strings.Replace(string(data), `"effect":"allow"`, `"effect":"deny"`, 1)))
	fmt.Println(err)
	// Output:
	// 2 <nil>
	// approval: audit log line 1: hash does not match the content (the record was edited)
}

func ExampleOpenFileStore() {
	dir, err := os.MkdirTemp("", "approval")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	paths := mustPaths(dir)
	store, err := approval.OpenFileStore(paths, nil)
	if err != nil {
		log.Fatal(err)
	}
	h := approval.NewHook(approval.NewEvaluator(nil), &approval.HookOptions{Store: store})
	b, err := h.Process(context.Background(), []approval.ToolCall{bash("t1", "git push")}, paths.ProjectRoot)
	if err != nil {
		log.Fatal(err)
	}
	list, _ := store.ListPending(context.Background())
	fmt.Println(len(list), list[0].ID == b.Pending[0].ID, filepath.Base(store.Path()))
	// Output:
	// 1 true state.json
}
