// Command docker runs a worker's commands in a hardened, long-lived Docker
// container: it builds (or finds) a tiny busybox image, ensures the
// sandbox's container, runs commands and the file tools in it, shows a
// timeout killing a runaway process tree inside the container, then lists
// and prunes the containers, as a host's `sandbox list/prune` would.
//
// It needs a Docker engine (the local socket, or DOCKER_HOST) and Debian's
// busybox-static for the image; nothing is pulled.
//
//	go run ./examples/docker
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dockersandbox"
	"github.com/paddockdev/paddock/sandbox/dockersandbox/dockersandboxtest"
	"github.com/paddockdev/paddock/workspace"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// clock is the example's time: it can be moved forward to show pruning.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func run(w io.Writer) error {
	ctx := context.Background()
	tmp, err := os.MkdirTemp("", "paddock-docker-example-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	project, work := filepath.Join(tmp, "project"), filepath.Join(tmp, "work")
	for _, d := range []string{project, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	paths, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(tmp, "state")})
	if err != nil {
		return err
	}

	// The engine, with a clock we can move to show pruning.
	clk := &clock{now: time.Now()}
	eng, err := dockersandbox.Open(ctx, paths, &dockersandbox.EngineOptions{Now: clk.Now})
	if err != nil {
		return err
	}
	defer eng.Close()
	image, err := dockersandboxtest.Image(ctx, eng.Client())
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "image:", strings.SplitN(image, ":", 2)[0])

	// The sandbox: its container is made hardened, or reused.
	drv, err := dockersandbox.New(ctx, eng, image, work, sandbox.Spec{PIDs: 64}, &dockersandbox.Options{Key: "example-worker"})
	if err != nil {
		return err
	}
	s := sandbox.New(drv, nil)
	defer s.Close(ctx)
	fmt.Fprintln(w, "container:", drv.Name())

	res, err := s.Exec(ctx, sandbox.ExecRequest{Command: `echo hello > greeting.txt; pwd; touch /etc/x 2>/dev/null || echo "root is read-only"; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "exec: %s", res.Stdout)
	data, err := s.ReadFile(ctx, "greeting.txt", 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "read back on the host: %s", data)

	// A runaway tree: killed inside the container at the timeout.
	res, err = s.Exec(ctx, sandbox.ExecRequest{Command: "sleep 600 & (sleep 600 &) ; sleep 600", Timeout: time.Second})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "runaway:", res.Reason)
	res, err = s.Exec(ctx, sandbox.ExecRequest{Command: "ps -o args | grep -c '^sleep 600' || true"})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sleep 600 processes left in the container: %s", res.Stdout)

	// Management: list, then prune after a day without use.
	list, err := eng.List(ctx)
	if err != nil {
		return err
	}
	for _, c := range list {
		fmt.Fprintf(w, "list: %s key=%s state=%s\n", c.Name, c.Key, c.State)
	}
	clk.Advance(25 * time.Hour)
	rep, err := eng.Prune(ctx, nil)
	if err != nil {
		return err
	}
	for _, p := range rep.Removed {
		fmt.Fprintf(w, "pruned: %s (%s)\n", p.Name, strings.Fields(p.Reason)[0])
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(w, "prune failed: %s: %v\n", f.Name, f.Err)
	}
	list, err = eng.List(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "containers left:", len(list))
	return nil
}
