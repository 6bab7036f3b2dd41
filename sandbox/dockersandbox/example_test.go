package dockersandbox_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dockersandbox"
	"github.com/paddockdev/paddock/workspace"
)

func ExampleContainerName() {
	fmt.Println(dockersandbox.ContainerName("worker-1"))
	fmt.Println(dockersandbox.ContainerName("Worker 1") != dockersandbox.ContainerName("worker-1"))
	// Output:
	// paddock-sbx-worker-1-13029f9e
	// true
}

// A host runs a worker's commands in a hardened container. (Not run by go
// test: it needs a Docker engine and an image; examples/docker runs the
// same steps.)
func ExampleNew() {
	ctx := context.Background()
	paths, err := workspace.NewPaths("/home/me/project", nil)
	if err != nil {
		log.Fatal(err)
	}
	eng, err := dockersandbox.Open(ctx, paths, nil)
	if err != nil {
		log.Fatal(err) // wraps dockersandbox.ErrUnavailable when no engine answers
	}
	defer eng.Close()
	drv, err := dockersandbox.New(ctx, eng, "my-sandbox-image:1", "/path/to/work", sandbox.Spec{PIDs: 128},
		&dockersandbox.Options{Key: "agent-7", PathPrepend: []string{"/workspace/.bin"}})
	if err != nil {
		log.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	defer s.Close(ctx)
	res, err := s.Exec(ctx, sandbox.ExecRequest{Command: "make test", Timeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Reason, res.ExitCode)
}

// The seed's management commands: list, remove, recreate, prune.
func ExampleEngine_Prune() {
	ctx := context.Background()
	paths, err := workspace.NewPaths("/home/me/project", nil)
	if err != nil {
		log.Fatal(err)
	}
	eng, err := dockersandbox.Open(ctx, paths, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	list, err := eng.List(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range list {
		fmt.Println(c.Name, c.Key, c.State, c.LastUsed)
	}
	rep, err := eng.Prune(ctx, &dockersandbox.PruneOptions{IdleHours: 24, MaxAgeDays: 7})
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range rep.Removed {
		fmt.Println("removed", p.Name, p.Reason)
	}
	for _, f := range rep.Failed {
		fmt.Println("failed", f.Name, f.Err)
	}
}
