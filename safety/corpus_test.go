package safety

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

type corpusEntry struct {
	line int
	kind string
	want Risk
	cmd  string
}

func loadCorpus(t testing.TB) []corpusEntry {
	t.Helper()
	f, err := os.Open("testdata/shell_corpus.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, rest, _ := strings.Cut(line, " ")
		want, js, _ := strings.Cut(rest, " ")
		var cmd string
		if err := json.Unmarshal([]byte(js), &cmd); err != nil || (kind != "benign" && kind != "attack") || Risk(want).Severity() == 0 {
			t.Fatalf("shell_corpus.txt:%d: want <benign|attack> <risk> <JSON string>, got %q", n, line)
		}
		out = append(out, corpusEntry{n, kind, Risk(want), cmd})
	}
	return out
}

// TestShellCorpus runs the analyzer over testdata/shell_corpus.txt.
func TestShellCorpus(t *testing.T) {
	a := NewShellAnalyzer(&ShellOptions{Home: "/home/dev"})
	entries := loadCorpus(t)
	var benign, attacks int
	for _, e := range entries {
		v := a.AnalyzeCommand(e.cmd, "/home/dev/proj")
		switch e.kind {
		case "benign":
			benign++
			if v.Risk != e.want || v.Risk == Critical {
				t.Errorf("line %d: benign %q: risk %s, want %s (reasons %q)", e.line, e.cmd, v.Risk, e.want, v.Reasons)
			}
		case "attack":
			attacks++
			if v.Risk == Low || v.Risk.Severity() < e.want.Severity() {
				t.Errorf("line %d: attack %q: risk %s, want at least %s (reasons %q)", e.line, e.cmd, v.Risk, e.want, v.Reasons)
			}
		}
	}
	if benign+attacks < 150 || attacks < 80 {
		t.Errorf("corpus has %d commands and %d attacks; want at least 150 and 80", benign+attacks, attacks)
	}
}
