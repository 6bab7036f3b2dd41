package approval_test

import (
	"log"
	"os"
	"path/filepath"

	"github.com/paddockdev/paddock/workspace"
)

func mustPaths(dir string) workspace.Paths {
	project := filepath.Join(dir, "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		log.Fatal(err)
	}
	p, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(dir, "state"), WorkspaceName: "example"})
	if err != nil {
		log.Fatal(err)
	}
	return p
}
