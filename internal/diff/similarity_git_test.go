package diff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// simPairs returns pairs whose similarity is spread around git's 50%
// threshold: a random text and a copy with a share of its lines replaced,
// in LF, CRLF and binary flavours, plus some size changes.
func simPairs() []pair {
	r := rand.New(rand.NewPCG(3, 3))
	var ps []pair
	for i := range 150 {
		n := 5 + r.IntN(60)
		var a, b []string
		share := r.IntN(101)
		for j := range n {
			l := fmt.Sprintf("line %d of pair %d: %x", j, i, r.Uint64())
			if r.IntN(5) == 0 {
				l += strings.Repeat(" long", 20)
			}
			a = append(a, l)
			if r.IntN(100) < share {
				l = fmt.Sprintf("other %x", r.Uint64())
			}
			if r.IntN(10) != 0 {
				b = append(b, l)
			}
		}
		eol := "\n"
		switch i % 5 {
		case 1:
			eol = "\r\n"
		case 2:
			eol = "\x00\n"
		}
		ps = append(ps, pair{fmt.Sprintf("pair %d (%d%% replaced)", i, share), []byte(strings.Join(a, eol) + eol), []byte(strings.Join(b, eol))})
	}
	return ps
}

// TestSimilarityMatchesGit writes each pair as a deleted and an added file
// and asks real git for renames (`git diff-tree -M`, default threshold):
// git must pair them exactly when Similarity is at least 50, with the same
// score.
func TestSimilarityMatchesGit(t *testing.T) {
	dir := t.TempDir()
	if _, e, code := git(t, dir, nil, "init", "-q", "--bare", "."); code != 0 {
		t.Fatalf("git init: %s", e)
	}
	ps := simPairs()
	// Blobs, then a tree with src and one with dst for each pair, and one
	// diff-tree run over all the tree pairs.
	blob := func(data []byte) string {
		out, e, code := git(t, dir, data, "hash-object", "-w", "--stdin", "--no-filters")
		if code != 0 {
			t.Fatalf("git hash-object: %s", e)
		}
		return string(bytes.TrimSpace(out))
	}
	var mk bytes.Buffer
	for _, p := range ps {
		fmt.Fprintf(&mk, "100644 blob %s\tsrc\n\n100644 blob %s\tdst\n\n", blob(p.a), blob(p.b))
	}
	out, e, code := git(t, dir, mk.Bytes(), "mktree", "--batch")
	if code != 0 {
		t.Fatalf("git mktree: %s", e)
	}
	trees := strings.Fields(string(out))
	if len(trees) != 2*len(ps) {
		t.Fatalf("git mktree made %d trees, want %d", len(trees), 2*len(ps))
	}
	var in bytes.Buffer
	for i := range ps {
		fmt.Fprintf(&in, "%s %s\n", trees[2*i], trees[2*i+1])
	}
	out, e, code = git(t, dir, in.Bytes(), "diff-tree", "--stdin", "-r", "-M", "--name-status")
	if code != 0 {
		t.Fatalf("git diff-tree: %s", e)
	}
	// Each tree pair's line is followed by its changes.
	score := map[string]int{}
	var cur string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && len(f[0]) == 40:
			cur = f[0]
			score[cur] = -1
		case len(f) == 3 && f[0][0] == 'R':
			s, err := strconv.Atoi(f[0][1:])
			if err != nil {
				t.Fatalf("bad diff-tree line %q", l)
			}
			score[cur] = s
		}
	}
	renamed, agree := 0, 0
	for i, p := range ps {
		want, ok := score[trees[2*i]]
		if !ok {
			t.Fatalf("%s: git printed nothing", p.name)
		}
		got := Similarity(p.a, p.b)
		if want >= 0 {
			renamed++
		}
		if (got >= 50) != (want >= 0) || (want >= 0 && got != want) {
			t.Errorf("%s: Similarity = %d, git's rename score %d (-1: no rename)", p.name, got, want)
		} else {
			agree++
		}
	}
	t.Logf("%d pairs, %d renamed by git, Similarity agrees on %d", len(ps), renamed, agree)
	if renamed < len(ps)/5 || renamed > len(ps)*4/5 {
		t.Errorf("only %d of %d pairs are renames: the pairs do not straddle the threshold", renamed, len(ps))
	}
}

func TestSimilarityEdges(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 100},
		{"x\n", "", 0},
		{"", "x\n", 0},
		{"a\nb\n", "a\nb\n", 100},
		{"a\nb\n", "a\r\nb\r\n", 66}, // CRs are skipped in chunks, not in sizes
		{"a\nb\nc\nd\n", "a\nb\nX\nY\n", 50},
	} {
		if got := Similarity([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("Similarity(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
