package mask

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func BenchmarkMask(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	var m Masker
	var toks []string
	for i := range 10 {
		toks = append(toks, fmt.Sprintf("tok_%d_%016x", i, rng.Uint64()))
		m.Add(toks[i])
	}
	// A 4 KiB log line of ordinary text and base64.
	var sb strings.Builder
	for sb.Len() < 4096 {
		fmt.Fprintf(&sb, "level=info msg=%q id=%x ", "request handled", rng.Uint64())
		sb.WriteString(base64.StdEncoding.EncodeToString([]byte(fmt.Sprint(rng.Uint64()))))
		sb.WriteByte(' ')
	}
	clean := sb.String()[:4096]
	// The same line holding two secrets, one raw and one in base64.
	dirty := (clean[:1024] + " auth=" + toks[3] + clean[1024:2048] + " b64=" +
		base64.StdEncoding.EncodeToString([]byte("Bearer "+toks[7])) + clean[2048:])[:4096]
	patterns := m.m.Load().patterns

	for _, line := range []struct{ name, s string }{{"clean", clean}, {"dirty", dirty}} {
		b.Run("secrets=10/"+line.name, func(b *testing.B) {
			b.SetBytes(int64(len(line.s)))
			b.ReportAllocs()
			for b.Loop() {
				m.Mask(line.s)
			}
		})
		// Baseline: strings.Replacer over the same patterns, longest first,
		// which has the same leftmost-longest semantics.
		b.Run("baseline=strings.Replacer/"+line.name, func(b *testing.B) {
			var oldnew []string
			for _, p := range patterns {
				oldnew = append(oldnew, p, Redacted)
			}
			r := strings.NewReplacer(oldnew...)
			if r.Replace(line.s) != m.Mask(line.s) {
				b.Fatal("strings.Replacer and Masker disagree")
			}
			b.SetBytes(int64(len(line.s)))
			b.ReportAllocs()
			for b.Loop() {
				r.Replace(line.s)
			}
		})
	}
}
