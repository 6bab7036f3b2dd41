package bwrapsandbox

import (
	"bytes"
	"context"
	"os/exec"
	"testing"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/driver"
)

// BenchmarkExecRoundTrip compares an Exec of `true` through the portable
// sandbox.Sandbox with the baseline: running bwrap with the same arguments
// directly (target ≤ 1.3×). The measured sub-benchmark reports its ratio as
// x-baseline.
func BenchmarkExecRoundTrip(b *testing.B) {
	ctx := context.Background()
	testenv.Need(b, "bwrap", Probe(ctx, ""))
	s, err := New(ctx, b.TempDir(), driver.Spec{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	cmd := &driver.Command{Argv: []string{"true"}, Dir: ".", Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	args := s.args(cmd)
	var base float64
	b.Run("bwrap", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(s.bwrap, args...).Run(); err != nil {
				b.Fatal(err)
			}
		}
		base = float64(b.Elapsed()) / float64(b.N)
	})
	b.Run("exec", func(b *testing.B) {
		sbx := sandbox.New(s, nil)
		defer sbx.Close(ctx)
		b.ReportAllocs()
		for b.Loop() {
			res, err := sbx.Exec(ctx, sandbox.ExecRequest{Argv: []string{"true"}})
			if err != nil || !res.Success() {
				b.Fatalf("%v %+v", err, res)
			}
		}
		if base > 0 {
			b.ReportMetric(float64(b.Elapsed())/float64(b.N)/base, "x-baseline")
		}
	})
}
