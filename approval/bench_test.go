package approval

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paddockdev/paddock/internal/testenv"
)

// BenchmarkEvaluate measures Evaluate of a shell call against 1,000 rules
// (DESIGN.md target: ≤ 10 µs). There is no external baseline; the
// sub-benchmark "1000-rules" reports "x-target", its time per call divided
// by 10 µs, and "x-no-rules", its time divided by the "no-rules"
// sub-benchmark's (the cost the rules add). Both evaluate the same call
// repeatedly, as the hook does (evaluate, propose a rule, resume), so the
// shell analysis comes from the evaluator's cache; "1000-rules-uncached"
// evaluates a new command every time and so includes a full shell parse
// (about 15–20 µs of CPU, see safety's BenchmarkShellAnalyzer). All report
// "cpu-ns/op".
//
//	go test -run '^$' -bench Evaluate ./approval/
func BenchmarkEvaluate(b *testing.B) {
	var sb strings.Builder
	verbs := []string{"allow", "ask", "deny"}
	for i := 0; i < 1000; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&sb, "%s bash: tool%d sub%d|alt%d -x\n", verbs[i%3], i, i, i)
		case 1:
			fmt.Fprintf(&sb, "%s read_file: path dir%d/**\n", verbs[i%3], i)
		case 2:
			fmt.Fprintf(&sb, "%s fetch: domain *.host%d.example\n", verbs[i%3], i)
		case 3:
			fmt.Fprintf(&sb, "%s bash: git sub%d\n", verbs[i%3], i)
		}
	}
	sb.WriteString("allow bash: git status|log|diff\n")
	full := NewEvaluator(&Options{Home: "/home/dev"})
	if err := full.Load(LayerProject, "bench.rules", []byte(sb.String())); err != nil {
		b.Fatal(err)
	}
	if full.Len() != 1001 {
		b.Fatalf("%d rules", full.Len())
	}
	empty := NewEvaluator(&Options{Home: "/home/dev"})
	call := shellCall("git log --oneline -5")
	ctx := context.Background()
	var base float64
	run := func(b *testing.B, e *Evaluator) float64 {
		b.ReportAllocs()
		start, cpu := time.Now(), testenv.CPUTime(b)
		n := 0
		for b.Loop() {
			if _, err := e.Evaluate(ctx, call); err != nil {
				b.Fatal(err)
			}
			n++
		}
		b.ReportMetric(float64(testenv.CPUTime(b)-cpu)/float64(n), "cpu-ns/op")
		return float64(time.Since(start).Nanoseconds()) / float64(n)
	}
	b.Run("no-rules", func(b *testing.B) { base = run(b, empty) })
	b.Run("1000-rules", func(b *testing.B) {
		per := run(b, full)
		b.ReportMetric(per/10000, "x-target")
		if base > 0 {
			b.ReportMetric(per/base, "x-no-rules")
		}
	})
	// A new command every time: the shell analysis is never cached.
	b.Run("1000-rules-uncached", func(b *testing.B) {
		b.ReportAllocs()
		calls := make([]Call, 50000)
		for i := range calls {
			calls[i] = shellCall(fmt.Sprintf("git log --oneline -%d", i))
		}
		start, cpu := time.Now(), testenv.CPUTime(b)
		n := 0
		for b.Loop() {
			if _, err := full.Evaluate(ctx, calls[n%len(calls)]); err != nil {
				b.Fatal(err)
			}
			n++
		}
		b.ReportMetric(float64(testenv.CPUTime(b)-cpu)/float64(n), "cpu-ns/op")
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(n)/10000, "x-target")
	})
}
