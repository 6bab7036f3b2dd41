package diff

// The line-diff benchmark of the proposal issue: Unified on a large file
// with a few edits, against a hardened `git diff --no-index` of the same
// two files. The git baseline runs first, as a sub-benchmark; the Unified
// sub-benchmark then reports its time per op divided by the baseline's as
// "x-baseline" (filtering out the baseline drops the ratio). Unified's op
// reads both files from disk too, as git must. Both also report
// "cpu-ns/op", the CPU time per op (git's child process; this process,
// garbage collection included, for Unified), and Unified reports the ratio
// of those as "cpu-x-baseline": on a busy shared machine, the CPU ratio
// is the steadier of the two.
//
// Run them with
//
//	go test -run '^$' -bench . -benchtime=2s ./internal/diff/

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockdev/paddock/internal/testenv"
)

// benchFiles writes a Go-like file of n lines and a copy with edits
// random changes (a line replaced, inserted or deleted) and returns their
// paths.
func benchFiles(b *testing.B, n, edits int) (string, string) {
	r := rand.New(rand.NewPCG(uint64(n), uint64(edits)))
	lines := make([]string, n)
	for i := range lines {
		switch i % 7 {
		case 0:
			lines[i] = fmt.Sprintf("func f%d(x int) error {", i)
		case 6:
			lines[i] = "}"
		case 5:
			lines[i] = ""
		default:
			lines[i] = fmt.Sprintf("\tif err := step%d(x, %d); err != nil {\n\t\treturn err\n\t}", i%5, r.IntN(1000))
		}
	}
	edited := append([]string{}, lines...)
	for range edits {
		at := r.IntN(len(edited))
		switch r.IntN(3) {
		case 0:
			edited[at] = fmt.Sprintf("\t// edited %d", r.IntN(1000))
		case 1:
			edited = append(edited[:at], append([]string{"\tlog.Println(x)"}, edited[at:]...)...)
		default:
			edited = append(edited[:at], edited[at+1:]...)
		}
	}
	dir := b.TempDir()
	a, c := filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go")
	if err := os.WriteFile(a, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(c, []byte(strings.Join(edited, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return a, c
}

// BenchmarkUnified diffs a source file of 300 entries (about 640 lines,
// 10 KB) with 3 edits, and one of 100,000 entries (about 214,000 lines,
// 3.6 MB) with 5 and with 1,000 edits. (MB/s counts both files.)
func BenchmarkUnified(b *testing.B) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		b.Skip("git is not installed: no baseline")
	}
	for _, c := range []struct{ entries, edits int }{{300, 3}, {100000, 5}, {100000, 1000}} {
		b.Run(fmt.Sprintf("entries=%d/edits=%d", c.entries, c.edits), func(b *testing.B) {
			fa, fb := benchFiles(b, c.entries, c.edits)
			size := fileSize(b, fa) + fileSize(b, fb)
			home := b.TempDir()
			var base, baseCPU time.Duration
			var baseN int
			b.Run("git", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(size)
				var cpu time.Duration
				for b.Loop() {
					cmd := exec.Command(gitPath, "diff", "--no-index", "--no-color", "--no-ext-diff", fa, fb)
					cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C", "PATH=" + os.Getenv("PATH")}
					cmd.Stdout = io.Discard
					if err := cmd.Run(); err != nil {
						if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
							b.Fatal(err)
						}
					}
					cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				}
				base, baseCPU, baseN = b.Elapsed(), cpu, b.N
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			})
			b.Run("diff", func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(size)
				start := testenv.CPUTime(b)
				for b.Loop() {
					da, err := os.ReadFile(fa)
					if err != nil {
						b.Fatal(err)
					}
					db, err := os.ReadFile(fb)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := Unified(io.Discard, da, db, DefaultContext); err != nil {
						b.Fatal(err)
					}
				}
				cpu := testenv.CPUTime(b) - start
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
				if baseN > 0 {
					b.ReportMetric((float64(b.Elapsed())/float64(b.N))/(float64(base)/float64(baseN)), "x-baseline")
					b.ReportMetric((float64(cpu)/float64(b.N))/(float64(baseCPU)/float64(baseN)), "cpu-x-baseline")
				}
			})
		})
	}
}

func fileSize(b *testing.B, name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		b.Fatal(err)
	}
	return fi.Size()
}
