package safety

import (
	"context"
	"fmt"
	"sync"
)

// Ensemble combines analyzers: the most severe verdict wins, and an
// analyzer that fails (returns an error or panics) counts as Unknown. The
// rules analyzer given first is a floor: nothing the others say can make
// the combined verdict less severe than it, and its segments are the
// combined verdict's segments.
//
// An Ensemble is safe for concurrent use if its analyzers are.
type Ensemble struct {
	floor  Analyzer
	others []Analyzer
}

// NewEnsemble returns an ensemble of the rules analyzer floor and others.
func NewEnsemble(floor Analyzer, others ...Analyzer) *Ensemble {
	return &Ensemble{floor: floor, others: others}
}

// Analyze runs every analyzer concurrently and combines their verdicts.
// Cancelling ctx is passed on to the analyzers; Analyze waits for all of
// them before returning.
func (e *Ensemble) Analyze(ctx context.Context, call Call) (Verdict, error) {
	all := append([]Analyzer{e.floor}, e.others...)
	parts := make([]Verdict, len(all))
	var wg sync.WaitGroup
	for i, a := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i] = runAnalyzer(ctx, a, call)
		}()
	}
	wg.Wait()
	out := Verdict{Analyzer: "ensemble", Segments: parts[0].Segments, Parts: parts}
	for _, p := range parts {
		out.Findings = append(out.Findings, p.Findings...)
		for _, r := range p.Reasons {
			// Keep verdicts that came without findings.
			if len(p.Findings) == 0 && len(p.Segments) == 0 {
				out.Findings = append(out.Findings, Finding{Risk: p.Risk, Category: p.Category, Reason: r})
			}
		}
	}
	out.finish()
	for _, p := range parts {
		if p.Risk.Severity() > out.Risk.Severity() || p.Risk.Severity() == 0 {
			out.Risk = out.Risk.Max(p.Risk)
			out.Category = p.Category
		}
	}
	return out, nil
}

func runAnalyzer(ctx context.Context, a Analyzer, call Call) (v Verdict) {
	defer func() {
		if r := recover(); r != nil {
			v = unknownVerdict(fmt.Sprintf("%T", a), "analyzer panicked: %v", r)
		}
	}()
	v, err := a.Analyze(ctx, call)
	if err != nil {
		name := v.Analyzer
		if name == "" {
			name = fmt.Sprintf("%T", a)
		}
		return unknownVerdict(name, "analyzer failed: %v", err)
	}
	if v.Risk.Severity() == 0 {
		return unknownVerdict(v.Analyzer, "analyzer returned the invalid risk %q", v.Risk)
	}
	return v
}
