package dirsandbox_test

import (
	"context"
	"testing"

	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dirsandbox"
	"github.com/paddockdev/paddock/sandbox/sandboxtest"
)

type harness struct{}

func (harness) New(t *testing.T, spec sandbox.Spec) *sandbox.Sandbox {
	drv, err := dirsandbox.New(t.TempDir(), spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func TestConformance(t *testing.T) {
	sandboxtest.Run(t, harness{}, sandboxtest.Options{})
}

func (harness) NewBench(b *testing.B) *sandbox.Sandbox {
	drv, err := dirsandbox.New(b.TempDir(), sandbox.Spec{Network: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	b.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func BenchmarkSandbox(b *testing.B) { sandboxtest.RunBenchmarks(b, harness{}) }
