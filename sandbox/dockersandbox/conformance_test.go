package dockersandbox_test

import (
	"context"
	"sync"
	"testing"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/dockersandbox"
	"github.com/paddockdev/paddock/sandbox/dockersandbox/dockersandboxtest"
	"github.com/paddockdev/paddock/sandbox/sandboxtest"
	"github.com/paddockdev/paddock/workspace"
)

var bg = context.Background()

var shared struct {
	once  sync.Once
	eng   *dockersandbox.Engine
	image string
	err   error
}

// engine opens one Engine (over a temporary state root) and the test image
// for the whole test binary, or skips tb.
func engine(tb testing.TB) (*dockersandbox.Engine, string) {
	tb.Helper()
	testenv.Need(tb, "docker", dockersandbox.Probe(bg))
	shared.once.Do(func() {
		root, err := stateRoot()
		if err != nil {
			shared.err = err
			return
		}
		shared.eng, shared.err = dockersandbox.Open(bg, workspace.Paths{StateRoot: root}, nil)
		if shared.err != nil {
			return
		}
		shared.image, shared.err = dockersandboxtest.Image(bg, shared.eng.Client())
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.eng, shared.image
}

type harness struct{}

func (harness) New(t *testing.T, spec sandbox.Spec) *sandbox.Sandbox {
	eng, image := engine(t)
	drv, err := dockersandbox.New(bg, eng, image, t.TempDir(), spec, &dockersandbox.Options{RemoveOnClose: true})
	if err != nil {
		t.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	t.Cleanup(func() {
		if err := s.Close(bg); err != nil {
			t.Error(err)
		}
	})
	return s
}

func (harness) NewBench(b *testing.B) *sandbox.Sandbox {
	eng, image := engine(b)
	drv, err := dockersandbox.New(bg, eng, image, b.TempDir(), sandbox.Spec{}, &dockersandbox.Options{RemoveOnClose: true})
	if err != nil {
		b.Fatal(err)
	}
	s := sandbox.New(drv, nil)
	b.Cleanup(func() { s.Close(bg) })
	return s
}

func TestConformance(t *testing.T) {
	sandboxtest.Run(t, harness{}, sandboxtest.Options{Isolated: true, SignalsAsExitCodes: true, PIDs: true, Memory: true})
}

func BenchmarkSandbox(b *testing.B) { sandboxtest.RunBenchmarks(b, harness{}) }
