package bwrapsandbox_test

import (
	"context"
	"os"
	"testing"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/bwrapsandbox"
	"github.com/paddockdev/paddock/sandbox/sandboxtest"
)

type harness struct{}

func (harness) New(t *testing.T, spec sandbox.Spec) *sandbox.Sandbox {
	ctx := context.Background()
	testenv.Need(t, "bwrap", bwrapsandbox.Probe(ctx, ""))
	drv, err := bwrapsandbox.New(ctx, t.TempDir(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	t.Cleanup(func() { s.Close(ctx) })
	return s
}

func TestConformance(t *testing.T) {
	// Spec.PIDs binds only an unprivileged host; TestUnprivileged runs
	// the suite's fork bomb as one.
	sandboxtest.Run(t, harness{}, sandboxtest.Options{Isolated: true, SignalsAsExitCodes: true, PIDs: os.Geteuid() != 0})
}

func (harness) NewBench(b *testing.B) *sandbox.Sandbox {
	ctx := context.Background()
	testenv.Need(b, "bwrap", bwrapsandbox.Probe(ctx, ""))
	drv, err := bwrapsandbox.New(ctx, b.TempDir(), sandbox.Spec{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	b.Cleanup(func() { s.Close(ctx) })
	return s
}

func BenchmarkSandbox(b *testing.B) { sandboxtest.RunBenchmarks(b, harness{}) }
