package sandbox

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchTree writes n files totalling about total bytes under dir, in a tree
// of nested directories with sizes skewed like a source tree (many small
// files, a few large ones).
func benchTree(b *testing.B, dir string, n int, total int64) {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	sizes := make([]float64, n)
	var sum float64
	for i := range sizes {
		sizes[i] = r.ExpFloat64() * r.ExpFloat64()
		sum += sizes[i]
	}
	buf := make([]byte, 0, 1<<20)
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%40), fmt.Sprintf("sub%d", i%7), fmt.Sprintf("leaf%d", i%3))
		must(b, os.MkdirAll(d, 0o755))
		size := int(sizes[i] / sum * float64(total))
		buf = buf[:0]
		for len(buf) < size {
			buf = fmt.Appendf(buf, "line %d of file %d: %x\n", len(buf), i, r.Uint64())
		}
		must(b, os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.go", i)), buf[:size], 0o644))
	}
}

// BenchmarkPrepare compares Prepare of 10,000 files / 70 MB into input/ and
// work/ with one `cp -a` of the same files (the baseline, which runs
// first); the prepare line reports the ratio as x-baseline.
func BenchmarkPrepare(b *testing.B) {
	if _, err := exec.LookPath("cp"); err != nil {
		b.Skip("cp not on PATH")
	}
	ws := newPaths(b, false)
	benchTree(b, ws.ProjectRoot, 10_000, 70<<20)
	out := b.TempDir()
	syscall.Sync()
	var baseline time.Duration
	b.Run("cp", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			dst := filepath.Join(out, fmt.Sprint("cp", i))
			i++
			if out, err := exec.Command("cp", "-a", ws.ProjectRoot, dst).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v: %s", err, out)
			}
			b.StopTimer()
			must(b, os.RemoveAll(dst))
			syscall.Sync() // start each iteration without writeback pending
			b.StartTimer()
		}
		baseline = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("prepare", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		i := 0
		for b.Loop() {
			run := fmt.Sprint("r", i)
			i++
			if _, err := Prepare(ctx, ws, run, "a", Selection{"."}, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			must(b, Destroy(ctx, ws, run, "a"))
			syscall.Sync()
			b.StartTimer()
		}
		if baseline > 0 {
			b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/float64(baseline), "x-baseline")
		}
	})
}
