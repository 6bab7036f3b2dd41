package sandbox

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/workspace"
)

// benchTree writes n files totalling about total bytes under dir, in a tree
// of nested directories with sizes skewed like a source tree (many small
// files, a few large ones).
func benchTree(dir string, n int, total int64) error {
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
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		size := int(sizes[i] / sum * float64(total))
		buf = buf[:0]
		for len(buf) < size {
			buf = fmt.Appendf(buf, "line %d of file %d: %x\n", len(buf), i, r.Uint64())
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.go", i)), buf[:size], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// benchOnce holds what every run of BenchmarkPrepare in this process
// shares: the source project, and a directory the copies accumulate in.
var benchOnce struct {
	sync.Once
	base string // removed by TestMain
	ws   workspace.Paths
	out  string
	err  error
	n    atomic.Int64 // names the copies
}

// TestMain removes what the benchmarks left.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchOnce.base != "" {
		// removeTree, as Destroy does: the input/ trees are read-only.
		if err := removeTree(benchOnce.base); err != nil {
			fmt.Fprintln(os.Stderr, "removing the benchmark's copies:", err)
		}
	}
	os.Exit(code)
}

// BenchmarkPrepare compares Prepare of 10,000 files / 70 MB into input/ and
// work/ with one `cp -a` of the same files (the baseline, which runs
// first); the prepare line reports the ratio as x-baseline. cp and prepare
// also report their CPU time (cp's as a child process), and the sha256 line
// times the hashing Prepare does, alone.
//
// Nothing is deleted until the process ends: every copy goes to fresh
// directories, and -count repeats reuse the project. Deleting between
// iterations would measure the file system instead of the copy: ext4
// without a journal skips every inode freed in the last minute when it
// allocates one (recently_deleted in fs/ext4/ialloc.c), so a create right
// after deleting a tree of 10,000 files costs half a millisecond, and the
// side that deleted more files (Prepare's two trees) would pay more.
func BenchmarkPrepare(b *testing.B) {
	if _, err := exec.LookPath("cp"); err != nil {
		b.Skip("cp not on PATH")
	}
	benchOnce.Do(func() {
		base, err := os.MkdirTemp("", "paddock-bench-prepare-")
		if err != nil {
			benchOnce.err = err
			return
		}
		benchOnce.base = base
		project, state, out := filepath.Join(base, "project"), filepath.Join(base, "state"), filepath.Join(base, "out")
		for _, d := range []string{project, out} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				benchOnce.err = err
				return
			}
		}
		benchOnce.ws, benchOnce.err = workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: state})
		benchOnce.out = out
		if benchOnce.err == nil {
			benchOnce.err = benchTree(project, 10_000, 70<<20)
		}
	})
	must(b, benchOnce.err)
	ws, out := benchOnce.ws, benchOnce.out
	syscall.Sync()
	var baseline time.Duration
	b.Run("cp", func(b *testing.B) {
		b.ReportAllocs()
		var cpu time.Duration
		for b.Loop() {
			dst := filepath.Join(out, fmt.Sprint("cp", benchOnce.n.Add(1)))
			start := testenv.ChildrenCPUTime(b)
			if out, err := exec.Command("cp", "-a", ws.ProjectRoot, dst).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v: %s", err, out)
			}
			cpu += testenv.ChildrenCPUTime(b) - start
			b.StopTimer()
			syscall.Sync() // start each iteration without writeback pending
			b.StartTimer()
		}
		baseline = b.Elapsed() / time.Duration(b.N)
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
	})
	// The hashing Prepare does for the manifest, alone and on one core:
	// part of the floor under Prepare's time on a machine with few cores.
	b.Run("sha256", func(b *testing.B) {
		h := sha256.New()
		for b.Loop() {
			err := filepath.WalkDir(ws.ProjectRoot, func(name string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				f, err := os.Open(name)
				if err != nil {
					return err
				}
				defer f.Close()
				h.Reset()
				_, err = io.Copy(h, f)
				return err
			})
			must(b, err)
		}
	})
	b.Run("prepare", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		var cpu time.Duration
		for b.Loop() {
			start := testenv.CPUTime(b)
			if _, err := Prepare(ctx, ws, fmt.Sprint("r", benchOnce.n.Add(1)), "a", Selection{"."}, nil); err != nil {
				b.Fatal(err)
			}
			cpu += testenv.CPUTime(b) - start
			b.StopTimer()
			syscall.Sync()
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
		if baseline > 0 {
			b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N))/float64(baseline), "x-baseline")
		}
	})
}
