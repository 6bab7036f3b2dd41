//go:build linux

// The benchmarks of DESIGN.md's "Numbers we hold ourselves to" for
// proposals. Each runs its baseline first, as a sub-benchmark, and the
// measured sub-benchmarks then report their time per op divided by the
// baseline's as "x-baseline" on their own result lines. Filtering out the
// baseline drops the ratio.
//
// Run them with
//
//	go test -run '^$' -bench . -benchtime=20x ./proposal/

package proposal

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/workspace"
)

// benchProject writes n text files of about 4 KiB in 100 directories.
func benchProject(b *testing.B, dir string, n int) {
	line := "\tif err := doSomething(ctx, value); err != nil { return fmt.Errorf(\"step: %w\", err) }\n"
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("pkg%02d", i%100), fmt.Sprintf("file%05d.go", i))
		if i < 100 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "package pkg%02d\n\n// File %d.\n", i%100, i)
		for j := range 45 {
			fmt.Fprintf(&sb, "// %d.%d\n%s", i, j, line)
		}
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// benchSandbox prepares a sandbox of 10,000 files and changes 100 of them in
// work/: 90 edited, 5 added, 5 deleted.
func benchSandbox(b *testing.B) (workspace.Paths, *sandbox.Prepared) {
	root := b.TempDir()
	project := filepath.Join(root, "project")
	os.MkdirAll(project, 0o755)
	benchProject(b, project, 10_000)
	ws, err := workspace.NewPaths(project, &workspace.PathsOptions{StateRoot: filepath.Join(root, "state")})
	if err != nil {
		b.Fatal(err)
	}
	sb, err := sandbox.Prepare(context.Background(), ws, "bench", "worker", sandbox.Selection{"."}, nil)
	if err != nil {
		b.Fatal(err)
	}
	work := sb.Dirs().Work
	for i := range 90 {
		n := 37*i + 11
		p := filepath.Join(work, fmt.Sprintf("pkg%02d", n%100), fmt.Sprintf("file%05d.go", n))
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		data = bytes.Replace(data, []byte("// "), []byte("// edited "), 3)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 5 {
		os.WriteFile(filepath.Join(work, fmt.Sprintf("pkg%02d/new%d.go", i, i)), []byte(fmt.Sprintf("package pkg%02d\n\nvar New%d = %d\n", i, i, i)), 0o644)
		if err := os.Remove(filepath.Join(work, fmt.Sprintf("pkg%02d/file%05d.go", 50+i, 9000+50+i))); err != nil {
			b.Fatal(err)
		}
	}
	return ws, sb
}

// baseline accumulates the baseline's timings over its runs (one per
// -count): wall time, and CPU time (of the git child processes).
type baseline struct {
	elapsed, cpu time.Duration
	n            int
}

func (bl *baseline) record(b *testing.B, cpu time.Duration) {
	bl.elapsed += b.Elapsed()
	bl.cpu += cpu
	bl.n += b.N
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

// report reports b's time per op over the baseline's, as "x-baseline", and
// the same for CPU time (the process's own, since paddock runs no child),
// as "cpu-x-baseline": on a busy shared machine the CPU ratio is the
// steadier of the two.
func (bl *baseline) report(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	if bl.n > 0 && b.N > 0 {
		b.ReportMetric((float64(b.Elapsed())/float64(b.N))/(float64(bl.elapsed)/float64(bl.n)), "x-baseline")
		b.ReportMetric((float64(cpu)/float64(b.N))/(float64(bl.cpu)/float64(bl.n)), "cpu-x-baseline")
	}
}

func benchGit(b *testing.B, dir string, stdin []byte, okExit1 bool, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(b, dir)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout = &bytes.Buffer{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); !(ok && okExit1 && ee.ExitCode() == 1) {
			b.Fatalf("git %v: %v: %s", args, err, stderr.Bytes())
		}
	}
}

// BenchmarkCreate: Create on 10,000 files with 100 changed, against a
// hardened git diff --no-index --binary of input/ and work/. Target ≤ 0.2×.
func BenchmarkCreate(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	_, sb := benchSandbox(b)
	dir := filepath.Dir(sb.Dirs().Input)
	ctx := context.Background()
	var bl baseline
	b.Run("git-diff-no-index", func(b *testing.B) {
		b.ReportAllocs()
		c0 := testenv.ChildrenCPUTime(b)
		for b.Loop() {
			benchGit(b, dir, nil, true, "diff", "--no-index", "--binary", "-M", "input", "work")
		}
		bl.record(b, testenv.ChildrenCPUTime(b)-c0)
	})
	b.Run("paddock", func(b *testing.B) {
		b.ReportAllocs()
		var p *Proposal
		c0 := testenv.CPUTime(b)
		for b.Loop() {
			var err error
			if p, err = Create(ctx, sb, nil); err != nil {
				b.Fatal(err)
			}
		}
		bl.report(b, testenv.CPUTime(b)-c0)
		if len(p.ChangedFiles) != 100 {
			b.Fatalf("%d changed files, want 100", len(p.ChangedFiles))
		}
	})
}

// BenchmarkApply: Apply of that proposal against git apply of its patch.
// Target ≤ 3× without fsync; the durable mode is reported beside it. Each
// op applies the change; undoing it between ops is not timed.
func BenchmarkApply(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	ws, sb := benchSandbox(b)
	ctx := context.Background()
	p, err := Create(ctx, sb, nil)
	if err != nil {
		b.Fatal(err)
	}
	patch, err := os.ReadFile(filepath.Join(sb.Dirs().Proposal, PatchFile))
	if err != nil {
		b.Fatal(err)
	}
	_ = p
	dry, err := Apply(ctx, ws, sb.Dirs().Proposal, &ApplyOptions{DryRun: true, Reverse: true})
	if err != nil {
		b.Fatal(err)
	}
	var bl baseline
	b.Run("git-apply", func(b *testing.B) {
		b.ReportAllocs()
		var cpu time.Duration
		for b.Loop() {
			c0 := testenv.ChildrenCPUTime(b)
			benchGit(b, ws.ProjectRoot, patch, false, "apply", "-")
			cpu += testenv.ChildrenCPUTime(b) - c0
			b.StopTimer()
			benchGit(b, ws.ProjectRoot, patch, false, "apply", "-R", "-")
			b.StartTimer()
		}
		bl.record(b, cpu)
	})
	for _, durable := range []bool{false, true} {
		name := "paddock"
		if durable {
			name = "paddock-durable"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				c0 := testenv.CPUTime(b)
				if _, err := Apply(ctx, ws, sb.Dirs().Proposal, &ApplyOptions{Durable: durable}); err != nil {
					b.Fatal(err)
				}
				cpu += testenv.CPUTime(b) - c0
				b.StopTimer()
				if _, err := ApplyPatch(ctx, ws, dry.Reverse, nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			bl.report(b, cpu)
		})
	}
}
