package proposal_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/paddockdev/paddock/proposal"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

// prepare makes a project with one file and a sandbox of it.
func prepare(dir string) (workspace.Paths, *sandbox.Prepared) {
	project := filepath.Join(dir, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "hello.txt"), []byte("hello\nworld\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	ws, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(dir, "state")})
	if err != nil {
		log.Fatal(err)
	}
	sb, err := sandbox.Prepare(context.Background(), ws, "run1", "worker", sandbox.Selection{"."}, nil)
	if err != nil {
		log.Fatal(err)
	}
	return ws, sb
}

func Example() {
	dir, err := os.MkdirTemp("", "proposal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	ws, sb := prepare(dir)

	// The worker edits work/.
	work := sb.Dirs().Work
	if err := os.WriteFile(filepath.Join(work, "hello.txt"), []byte("hello\npaddock\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	p, err := proposal.Create(ctx, sb, &proposal.CreateOptions{Notes: "greet paddock"})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range p.ChangedFiles {
		fmt.Println(c.Status, c.Path, "+", c.LinesAdded, "-", c.LinesDeleted)
	}

	// The orchestrator applies it.
	res, err := proposal.Apply(ctx, ws, sb.Dirs().Proposal, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Files[0].Path, res.Files[0].Verdict)
	b, _ := os.ReadFile(filepath.Join(ws.ProjectRoot, "hello.txt"))
	fmt.Printf("%q\n", b)
	// Output:
	// modified hello.txt + 1 - 1
	// hello.txt clean
	// "hello\npaddock\n"
}

func ExampleReview() {
	dir, err := os.MkdirTemp("", "proposal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	_, sb := prepare(dir)
	if err := os.WriteFile(filepath.Join(sb.Dirs().Work, "new.txt"), []byte("new\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	if _, err := proposal.Create(ctx, sb, nil); err != nil {
		log.Fatal(err)
	}
	r, err := proposal.Review(ctx, sb.Dirs().Proposal, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(r.Files[0].Diff)
	// Output:
	// diff --git a/new.txt b/new.txt
	// new file mode 100644
	// index 0000000000000000000000000000000000000000..3e757656cf36eca53338e520d134963a44f793f8
	// --- /dev/null
	// +++ b/new.txt
	// @@ -0,0 +1 @@
	// +new
}

func ExampleApply_conflict() {
	dir, err := os.MkdirTemp("", "proposal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	ws, sb := prepare(dir)
	if err := os.WriteFile(filepath.Join(sb.Dirs().Work, "hello.txt"), []byte("hello\nworker\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	if _, err := proposal.Create(ctx, sb, nil); err != nil {
		log.Fatal(err)
	}
	// Meanwhile the project changed the same line.
	if err := os.WriteFile(filepath.Join(ws.ProjectRoot, "hello.txt"), []byte("hello\nuser\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	_, err = proposal.Apply(ctx, ws, sb.Dirs().Proposal, nil)
	var ce *proposal.ConflictError
	if errors.As(err, &ce) {
		r := ce.Files[0].Regions[0]
		fmt.Printf("%s: ours %q, theirs %q\n", ce.Files[0].Path, r.Ours, r.Theirs)
	}
	b, _ := os.ReadFile(filepath.Join(ws.ProjectRoot, "hello.txt"))
	fmt.Printf("project unchanged: %q\n", b)
	// Output:
	// hello.txt: ours "user\n", theirs "worker\n"
	// project unchanged: "hello\nuser\n"
}

func ExampleApplyPatch() {
	dir, err := os.MkdirTemp("", "proposal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws := workspace.Paths{ProjectRoot: dir, StateRoot: filepath.Join(dir, ".state-for-example"), WorkspaceID: "ws"}
	patch := "diff --git a/../escape.txt b/../escape.txt\nnew file mode 100644\n--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+x\n"
	_, err = proposal.ApplyPatch(context.Background(), ws, []byte(patch), nil)
	fmt.Println(errors.Is(err, proposal.ErrPathPolicy))
	// Output:
	// true
}

func ExampleReject() {
	dir, err := os.MkdirTemp("", "proposal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	_, sb := prepare(dir)
	if _, err := proposal.Create(ctx, sb, nil); err != nil {
		log.Fatal(err)
	}
	rj, err := proposal.Reject(ctx, sb.Dirs().Proposal, "add a test first", nil)
	if err != nil {
		log.Fatal(err)
	}
	evs, err := proposal.ReadEvents(sb.Dirs().Proposal)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rj.Reason)
	for _, e := range evs {
		fmt.Println(e.Type)
	}
	// Output:
	// add a test first
	// proposal_created
	// proposal_rejected
}

func ExampleHandoff() {
	h := &proposal.Handoff{
		Context:      "Tests fail on empty input.",
		Goal:         "Handle empty input",
		DoD:          "go test ./... passes",
		ChangedFiles: []string{"parse.go"},
		Next:         []string{"Orchestrator: review + apply or request changes"},
	}
	s := h.Format()
	fmt.Print(s)
	back, err := proposal.ParseHandoff(s)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(back.Goal)
	// Output:
	// HANDOFF
	// Context: Tests fail on empty input.
	// Goal: Handle empty input
	// DoD: go test ./... passes
	// ChangedFiles:
	// - parse.go
	// Next:
	// - Orchestrator: review + apply or request changes
	// Handle empty input
}

func ExamplePolicy_CheckPath() {
	pol := &proposal.Policy{AllowedDirs: []string{"src"}}
	for _, p := range []string{"src/main.go", "docs/x.md", ".GIT/config", "src/../x"} {
		fmt.Println(p, pol.CheckPath(p) == nil)
	}
	// Output:
	// src/main.go true
	// docs/x.md false
	// .GIT/config false
	// src/../x false
}

func ExampleRecover() {
	dir, err := os.MkdirTemp("", "proposal-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ws, _ := prepare(dir)
	// After a crash, before anything else touches the project: finish or
	// undo the interrupted Apply. (Apply does this itself too.)
	recovered, err := proposal.Recover(context.Background(), ws)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("recovered an interrupted apply:", recovered)
	// Output:
	// recovered an interrupted apply: false
}
