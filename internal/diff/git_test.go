package diff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/internal/testenv"
)

// git runs real git in dir with a hardened environment: no system or
// global configuration, a fresh HOME, the C locale, and none of the
// caller's GIT_ variables. It returns stdout, stderr and the exit code
// (-1 when git could not run).
func git(t testing.TB, dir string, stdin []byte, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	path, err := exec.LookPath("git")
	testenv.Need(t, "git", err)
	home := t.TempDir()
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "LC_") && !strings.HasPrefix(kv, "LANG") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C", "GIT_ATTR_NOSYSTEM=1")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	code = 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code == -1 {
			t.Fatalf("git %v: %v", args, err)
		}
	}
	return o.Bytes(), e.Bytes(), code
}

// pair is a test input: a file before and after.
type pair struct {
	name string
	a, b []byte
}

// handPairs are the hand-written cases.
func handPairs() []pair {
	long := strings.Repeat("x", 100000)
	var big, bigEdit strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&big, "line %d of a large file\n", i)
		switch {
		case i == 3:
			bigEdit.WriteString("changed near the start\n")
		case i == 10000:
			fmt.Fprintf(&bigEdit, "line %d of a large file\ninserted in the middle\n", i)
		case i >= 19990 && i < 19995:
		default:
			fmt.Fprintf(&bigEdit, "line %d of a large file\n", i)
		}
	}
	return []pair{
		{"empty to text", nil, []byte("a\nb\n")},
		{"text to empty", []byte("a\nb\n"), nil},
		{"empty to no newline", nil, []byte("a")},
		{"no newline to empty", []byte("a"), nil},
		{"add final newline", []byte("a\nb"), []byte("a\nb\n")},
		{"drop final newline", []byte("a\nb\n"), []byte("a\nb")},
		{"change last line without newline", []byte("a\nb\nc"), []byte("a\nb\nd")},
		{"append after missing newline", []byte("a\nb"), []byte("a\nb\nc\n")},
		{"only newline", []byte("\n"), []byte("\n\n")},
		{"newline to nothing", []byte("\n"), []byte("")},
		{"one line", []byte("a\n"), []byte("b\n")},
		{"crlf change", []byte("a\r\nb\r\nc\r\n"), []byte("a\r\nB\r\nc\r\n")},
		{"lf to crlf", []byte("a\nb\nc\n"), []byte("a\r\nb\r\nc\r\n")},
		{"lone cr", []byte("a\rb\nc\n"), []byte("a\rb\nc\rd\n")},
		{"crlf no final newline", []byte("a\r\nb\r"), []byte("a\r\nb\r\n")},
		{"long line", []byte(long + "\n" + "y\n"), []byte(long + "z\n" + "y\n")},
		{"non-utf8 bytes", []byte("\xff\xfe\x80\n\x01\x02\n"), []byte("\xff\xfe\x81\n\x01\x02\n\x7f\n")},
		{"nul bytes", []byte("a\x00b\nc\n"), []byte("a\x00b\nd\x00\n")},
		{"repeated lines", []byte(strings.Repeat("x\n", 20)), []byte(strings.Repeat("x\n", 23))},
		{"repeated lines removed", []byte(strings.Repeat("a\nb\n", 10)), []byte(strings.Repeat("a\nb\n", 7))},
		{"blank lines", []byte("a\n\n\nb\n\nc\n"), []byte("a\n\nb\n\n\nc\n")},
		{"hunks merge at 6", []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"), []byte("1\nX\n3\n4\n5\n6\n7\n8\nY\n10\n11\n12\n13\n14\n15\n")},
		{"hunks split at 7", []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"), []byte("1\nX\n3\n4\n5\n6\n7\n8\n9\nY\n11\n12\n13\n14\n15\n")},
		{"function context", []byte("func a() {\n\t1\n\t2\n\t3\n\t4\n\t5\n}\n"), []byte("func a() {\n\t1\n\t2\n\t3\n\t4\n\tfive\n}\n")},
		{"long function line", []byte(strings.Repeat("f", 100) + "   \n1\n2\n3\n4\n5\n"), []byte(strings.Repeat("f", 100) + "   \n1\n2\n3\n4\nfive\n")},
		{"function line trailing space", []byte("_x  \t\r\n1\n2\n3\n4\n5\n"), []byte("_x  \t\r\n1\n2\n3\n4\nfive\n")},
		{"indent heuristic", []byte("func a() {\n\tx()\n}\n\nfunc b() {\n\ty()\n}\n"), []byte("func a() {\n\tx()\n}\n\nfunc c() {\n\tz()\n}\n\nfunc b() {\n\ty()\n}\n")},
		{"indent heuristic nested", []byte("if a {\n\tif b {\n\t\tc()\n\t}\n}\n"), []byte("if a {\n\tif b {\n\t\tc()\n\t}\n\tif b {\n\t\tc()\n\t}\n}\n")},
		{"all different", []byte("a\nb\nc\n"), []byte("d\ne\nf\ng\n")},
		{"large file few edits", []byte(big.String()), []byte(bigEdit.String())},
	}
}

// genPairs returns n generated pairs: random lines from a small vocabulary
// (so many repeat), edited by random runs of insertions, deletions and
// replacements, with random CRLF and final newlines.
func genPairs(seed uint64, n int) []pair {
	r := rand.New(rand.NewPCG(seed, 1))
	vocab := []string{"", "{", "}", "\treturn nil", "a", "b", "c", "if err != nil {", "x := 1", "// comment", "func f() {"}
	line := func() string {
		if r.IntN(4) == 0 {
			return fmt.Sprintf("unique %d", r.IntN(1000))
		}
		return vocab[r.IntN(len(vocab))]
	}
	var ps []pair
	for i := range n {
		var a []string
		size := r.IntN(60)
		if i%20 == 19 {
			size = 500 + r.IntN(3000)
		}
		for range size {
			a = append(a, line())
		}
		b := append([]string{}, a...)
		for range r.IntN(6 + size/50) {
			at := r.IntN(len(b) + 1)
			del := min(r.IntN(4), len(b)-at)
			var ins []string
			for range r.IntN(4) {
				ins = append(ins, line())
			}
			b = append(b[:at], append(ins, b[at+del:]...)...)
		}
		eol := "\n"
		if r.IntN(8) == 0 {
			eol = "\r\n"
		}
		join := func(ls []string) []byte {
			s := strings.Join(ls, eol)
			if len(ls) > 0 && r.IntN(6) != 0 {
				s += eol
			}
			return []byte(s)
		}
		ps = append(ps, pair{fmt.Sprintf("generated %d", i), join(a), join(b)})
	}
	return ps
}

// heavyPairs returns pairs of unrelated files drawn from six lines, whose
// diffs are long enough for the search's cost heuristics to decide.
func heavyPairs() []pair {
	r := rand.New(rand.NewPCG(4, 4))
	gen := func(n int) []byte {
		var b bytes.Buffer
		for range n {
			b.WriteString([]string{"a\n", "b\n", "c\n", "{\n", "}\n", "\n"}[r.IntN(6)])
		}
		return b.Bytes()
	}
	var ps []pair
	for i, n := range []int{300, 600, 1000, 2000, 3000, 5000, 10000} {
		ps = append(ps, pair{fmt.Sprintf("generated heavy %d", i), gen(n), gen(n)})
	}
	return ps
}

func allPairs() []pair {
	return append(append(handPairs(), genPairs(1, 600)...), heavyPairs()...)
}

// unifiedPatch returns a git patch for the file named name from a to b,
// made of a minimal header and Unified's hunks.
func unifiedPatch(t testing.TB, name string, a, b []byte) ([]byte, Stats) {
	t.Helper()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", name, name, name, name)
	st, err := Unified(&buf, a, b, DefaultContext)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), st
}

// TestUnifiedGitApply checks that real `git apply --check` accepts the
// patch of every pair, that `git apply` turns a into b exactly, and that
// `git apply -R` turns it back.
func TestUnifiedGitApply(t *testing.T) {
	dir := t.TempDir()
	ps := allPairs()
	var patch []byte
	for i, p := range ps {
		name := fmt.Sprintf("f%d", i)
		if err := os.WriteFile(filepath.Join(dir, name), p.a, 0o644); err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(p.a, p.b) {
			continue
		}
		pt, _ := unifiedPatch(t, name, p.a, p.b)
		patch = append(patch, pt...)
	}
	if err := os.WriteFile(filepath.Join(dir, "p.patch"), patch, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := git(t, dir, nil, "apply", "--check", "p.patch"); code != 0 {
		t.Fatalf("git apply --check: exit %d: %s", code, e)
	}
	if _, e, code := git(t, dir, nil, "apply", "p.patch"); code != 0 {
		t.Fatalf("git apply: exit %d: %s", code, e)
	}
	for i, p := range ps {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, p.b) {
			t.Errorf("%s: git apply gave %q, want %q", p.name, trunc(got), trunc(p.b))
		}
	}
	// And back.
	if _, e, code := git(t, dir, nil, "apply", "-R", "p.patch"); code != 0 {
		t.Fatalf("git apply -R: exit %d: %s", code, e)
	}
	for i, p := range ps {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("f%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, p.a) {
			t.Errorf("%s: git apply -R gave %q, want %q", p.name, trunc(got), trunc(p.a))
		}
	}
}

func trunc(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// gitDiffs runs `git diff --no-index --text` with extra flags on the
// pairs and returns, per pair index, the hunks git printed (after the file
// header) and its --numstat counts.
func gitDiffs(t *testing.T, ps []pair, flags ...string) (hunks map[int][]byte, stats map[int]Stats) {
	t.Helper()
	dir := t.TempDir()
	for _, side := range []string{"A", "B"} {
		if err := os.Mkdir(filepath.Join(dir, side), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range ps {
		for side, data := range map[string][]byte{"A": p.a, "B": p.b} {
			if err := os.WriteFile(filepath.Join(dir, side, fmt.Sprintf("f%d", i)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	args := append([]string{"diff", "--no-index", "--text", "--no-color", "--no-ext-diff"}, flags...)
	out, e, code := git(t, dir, nil, append(args, "A", "B")...)
	if code != 1 {
		t.Fatalf("git diff: exit %d: %s", code, e)
	}
	hunks = map[int][]byte{}
	for _, sec := range bytes.Split(out, []byte("diff --git ")) {
		var i int
		if _, err := fmt.Sscanf(string(sec), "a/A/f%d", &i); err != nil {
			continue
		}
		if at := bytes.Index(sec, []byte("\n@@ ")); at >= 0 {
			hunks[i] = sec[at+1:]
		}
	}
	out, e, code = git(t, dir, nil, append(args, "--numstat", "A", "B")...)
	if code != 1 {
		t.Fatalf("git diff --numstat: exit %d: %s", code, e)
	}
	stats = map[int]Stats{}
	for _, l := range strings.Split(string(out), "\n") {
		var st Stats
		var i int
		if _, err := fmt.Sscanf(l, "%d\t%d\t{A => B}/f%d", &st.Added, &st.Deleted, &i); err == nil {
			stats[i] = st
		}
	}
	return hunks, stats
}

// TestUnifiedMatchesGit compares Unified with `git diff --no-index` on
// every pair: the line counts must equal git's --numstat, and the hunks
// must be byte-identical to git's (indent heuristic on, git's default) for
// all hand-written pairs and nearly all generated ones (Myers may find
// another shortest script where several exist). The sizes, and those of git without the heuristic, are logged.
func TestUnifiedMatchesGit(t *testing.T) {
	ps := allPairs()
	gitHunks, gitStats := gitDiffs(t, ps, "--indent-heuristic")
	plainHunks, _ := gitDiffs(t, ps, "--no-indent-heuristic")
	var same, differ, statsSame, mineBytes, gitBytes, plainBytes, mineHunks, gitHunkN int
	for i, p := range ps {
		var buf bytes.Buffer
		st, err := Unified(&buf, p.a, p.b, DefaultContext)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(p.a, p.b) {
			if buf.Len() != 0 {
				t.Errorf("%s: equal inputs gave %q", p.name, buf.Bytes())
			}
			continue
		}
		gs, ok := gitStats[i]
		if !ok && !IsBinary(p.a) && !IsBinary(p.b) {
			t.Fatalf("%s: git printed no numstat", p.name)
		}
		if st == gs || !ok {
			statsSame++
		} else {
			t.Logf("%s: stats %+v, git %+v", p.name, st, gs)
		}
		mineBytes += buf.Len()
		gitBytes += len(gitHunks[i])
		plainBytes += len(plainHunks[i])
		mineHunks += bytes.Count(buf.Bytes(), []byte("\n@@ ")) + 1
		gitHunkN += bytes.Count(gitHunks[i], []byte("\n@@ ")) + 1
		if bytes.Equal(buf.Bytes(), gitHunks[i]) {
			same++
		} else {
			differ++
			if !strings.HasPrefix(p.name, "generated") {
				t.Errorf("%s: hunks differ from git's\nours:\n%s\ngit:\n%s", p.name, trunc(buf.Bytes()), trunc(gitHunks[i]))
			} else if differ <= 3 {
				t.Logf("%s: hunks differ from git's\nours:\n%s\ngit:\n%s", p.name, trunc(buf.Bytes()), trunc(gitHunks[i]))
			}
		}
	}
	n := same + differ
	t.Logf("%d changed pairs: hunks identical to git's for %d (%.1f%%); line counts equal for %d",
		n, same, 100*float64(same)/float64(n), statsSame)
	t.Logf("hunks: ours %d, git %d; bytes: ours %d, git %d (%.3f×), git without indent heuristic %d (%.3f×)",
		mineHunks, gitHunkN, mineBytes, gitBytes, float64(mineBytes)/float64(gitBytes), plainBytes, float64(mineBytes)/float64(plainBytes))
	if statsSame < n*99/100 {
		t.Errorf("line counts equal to git's for only %d of %d pairs", statsSame, n)
	}
	if same < n*99/100 {
		t.Errorf("hunks identical to git's for only %d of %d pairs", same, n)
	}
	if float64(mineBytes) > 1.02*float64(gitBytes) {
		t.Errorf("our hunks are %d bytes, git's %d", mineBytes, gitBytes)
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestUnifiedWriteError(t *testing.T) {
	st, err := Unified(errWriter{}, []byte("a\n"), []byte("b\n"), DefaultContext)
	if err != os.ErrClosed {
		t.Fatalf("Unified returned %v, want the writer's error", err)
	}
	if st != (Stats{Added: 1, Deleted: 1}) {
		t.Errorf("stats %+v", st)
	}
	if err := BinaryPatch(errWriter{}, []byte("a"), []byte("b")); err != os.ErrClosed {
		t.Fatalf("BinaryPatch returned %v, want the writer's error", err)
	}
}
