package safety

import (
	"slices"
	"testing"
)

// FuzzShellAnalyzer checks that the analyzer never panics, and that where
// its parser-based segmentation and the independent tokenizer disagree,
// the verdict is never Low ("safe").
func FuzzShellAnalyzer(f *testing.F) {
	for _, e := range loadCorpus(f) {
		f.Add(e.cmd)
	}
	for _, s := range []string{"a | b", "a `b` c", "a $(b) c", "x=1 y", ">f a", "a 2>&1 | b", "{ a; }", "(a)", "a\\\nb", "a '#' b # c", "a=(1 2)"} {
		f.Add(s)
	}
	a := NewShellAnalyzer(&ShellOptions{Home: "/home/dev"})
	f.Fuzz(func(t *testing.T, cmd string) {
		v := a.AnalyzeCommand(cmd, "/home/dev/proj")
		if v.Risk.Severity() == 0 {
			t.Fatalf("%q: invalid risk %q", cmd, v.Risk)
		}
		w := &walker{a: a, funcs: map[string]bool{}}
		names, parsed := w.analyze(cmd, 0, 0)
		if !parsed && v.Risk == Low {
			t.Fatalf("%q: does not parse but is low risk", cmd)
		}
		toks, ok := tokenNames(cmd)
		if parsed && ok && !slices.Equal(names, toks) && v.Risk == Low {
			t.Fatalf("%q: parser segments %q, tokenizer %q, yet low risk", cmd, names, toks)
		}
	})
}

// TestTokenizerAgrees checks that the two segmentations agree on the
// benign corpus and on the usual compound forms, so that the cross-check
// does not turn every ordinary command into "ask".
func TestTokenizerAgrees(t *testing.T) {
	a := NewShellAnalyzer(nil)
	cmds := []string{"a && b || c; d | e |& f & g\nh", "a $(b $(c)) `d`", "(a; b) && { c; }", "x=$(a) b", "a <(b) >(c)",
		"a >out 2>&1 <in", "2>/dev/null a", "a \"$(b)\" '$(c)'", "a # b; c", "a\\\n b"}
	wantNames := [][]string{{"a", "b", "c", "d", "e", "f", "g", "h"}, {"a", "b", "c", "d"}, {"a", "b", "c"}, {"a", "b"}, {"a", "b", "c"},
		{"a"}, {"a"}, {"a", "b"}, {"a"}, {"a"}}
	for _, e := range loadCorpus(t) {
		if e.kind == "benign" {
			cmds = append(cmds, e.cmd)
			wantNames = append(wantNames, nil)
		}
	}
	unsupported := 0
	for i, cmd := range cmds {
		w := &walker{a: a, funcs: map[string]bool{}}
		names, parsed := w.analyze(cmd, 0, 0)
		toks, ok := tokenNames(cmd)
		if !ok && wantNames[i] == nil {
			unsupported++ // a form the tokenizer gives up on, e.g. "time"
			continue
		}
		if !parsed || !ok || !slices.Equal(names, toks) {
			t.Errorf("%q: parser %q (ok %v), tokenizer %q (ok %v)", cmd, names, parsed, toks, ok)
		}
		if wantNames[i] != nil && !slices.Equal(wantNames[i], names) {
			t.Errorf("%q: segments %q, want %q", cmd, names, wantNames[i])
		}
	}
	if unsupported > len(cmds)/20 {
		t.Errorf("the tokenizer gives up on %d of %d ordinary commands", unsupported, len(cmds))
	}
}
