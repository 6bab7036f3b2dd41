package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

func ExamplePrepare() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	project := filepath.Join(dir, "project")
	for _, name := range []string{"go.mod", "src/main.go", "src/main_test.go", "node_modules/x.js"} {
		p := filepath.Join(project, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("// "+name+"\n"), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	ws, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(dir, "state")})
	if err != nil {
		log.Fatal(err)
	}

	sb, err := sandbox.Prepare(context.Background(), ws, "run-1", "coder", sandbox.Selection{"go.mod", "src/*.go"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range sb.Manifest().Files {
		fmt.Println(f.Path, f.Size)
	}
	rel, _ := filepath.Rel(ws.StateRoot, sb.Dirs().Work)
	fmt.Println(filepath.ToSlash(rel))

	_, err = sandbox.Prepare(context.Background(), ws, "run-1", "other", sandbox.Selection{"node_modules/x.js"}, nil)
	fmt.Println(err)

	if err := sandbox.Destroy(context.Background(), ws, "run-1", "coder"); err != nil {
		log.Fatal(err)
	}
	// Output:
	// go.mod 10
	// src/main.go 15
	// src/main_test.go 20
	// workspaces/default/sandboxes/run-1/coder/work
	// sandbox: refusing "node_modules/x.js": inside node_modules/, which is blocked; allow it with PrepareOptions.Allow
}
