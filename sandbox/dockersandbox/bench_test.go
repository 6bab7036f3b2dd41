package dockersandbox_test

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dockersandbox"
)

// BenchmarkExecRoundTrip measures a warm Exec of `true` through the
// portable sandbox.Sandbox ("sandbox") in the same container as its
// baseline, the docker exec CLI ("docker-cli", target ≤ 0.6×), and its
// floor, a bare Engine API exec: create, attach (which starts it), read to
// the end, inspect ("engine-api", target ≤ 1.15×). The sandbox
// sub-benchmark reports x-cli and x-engine-api.
func BenchmarkExecRoundTrip(b *testing.B) {
	eng, image := engine(b)
	drv, err := dockersandbox.New(bg, eng, image, b.TempDir(), sandbox.Spec{}, &dockersandbox.Options{RemoveOnClose: true})
	if err != nil {
		b.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	b.Cleanup(func() { s.Close(bg) })
	cli := eng.Client()
	var cliNs, apiNs float64
	b.Run("docker-cli", func(b *testing.B) {
		docker, err := exec.LookPath("docker")
		if err != nil {
			b.Skipf("no docker CLI: %v", err)
		}
		for b.Loop() {
			if out, err := exec.Command(docker, "exec", drv.Name(), "true").CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
		cliNs = float64(b.Elapsed()) / float64(b.N)
	})
	b.Run("engine-api", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := rawExec(bg, cli, drv.Name(), []string{"true"}); err != nil {
				b.Fatal(err)
			}
		}
		apiNs = float64(b.Elapsed()) / float64(b.N)
	})
	b.Run("sandbox", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := s.Exec(bg, sandbox.ExecRequest{Argv: []string{"true"}})
			if err != nil || !res.Success() {
				b.Fatalf("%v %+v", err, res)
			}
		}
		ns := float64(b.Elapsed()) / float64(b.N)
		if cliNs > 0 {
			b.ReportMetric(ns/cliNs, "x-cli")
		}
		if apiNs > 0 {
			b.ReportMetric(ns/apiNs, "x-engine-api")
		}
	})
}

// rawExec is the floor: the fewest Engine API calls that run a command and
// learn its exit code.
func rawExec(ctx context.Context, cli *client.Client, container string, argv []string) error {
	ex, err := cli.ExecCreate(ctx, container, client.ExecCreateOptions{AttachStdout: true, AttachStderr: true, Cmd: argv})
	if err != nil {
		return err
	}
	att, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return err
	}
	stdcopy.StdCopy(io.Discard, io.Discard, att.Reader)
	att.Close()
	for {
		r, err := cli.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
		if err != nil {
			return err
		}
		if !r.Running {
			if r.ExitCode != 0 {
				return fmt.Errorf("exit %d", r.ExitCode)
			}
			return nil
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkEnsureCold measures EnsureContainer of a new container (create
// and start; removal is not timed) beside the docker CLI's `docker run -d`
// of the same image (the baseline).
func BenchmarkEnsureCold(b *testing.B) {
	eng, image := engine(b)
	dir := b.TempDir()
	var base float64
	b.Run("docker-cli", func(b *testing.B) {
		if _, err := exec.LookPath("docker"); err != nil {
			b.Skip("no docker CLI for the baseline")
		}
		for b.Loop() {
			out, err := exec.Command("docker", "run", "-d", "--network", "none", "--read-only", image, "sleep", "100000").Output()
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if out, err := exec.Command("docker", "rm", "-f", strings.TrimSpace(string(out))).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			b.StartTimer()
		}
		base = float64(b.Elapsed()) / float64(b.N)
	})
	b.Run("ensure", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			c, err := eng.EnsureContainer(bg, dockersandbox.Config{Key: fmt.Sprintf("bench-cold-%d-%d", time.Now().UnixNano(), i), Image: image, WorkDir: dir})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := eng.Remove(bg, c.Name); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if base > 0 {
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/base, "x-cli")
		}
	})
}
