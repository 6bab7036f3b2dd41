package diff

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

const zeroID = "0000000000000000000000000000000000000000"

// binaryPatch returns a git patch of file name from old to new (nil old:
// added, nil new: deleted) made of a git header and BinaryPatch's body.
func binaryPatch(t testing.TB, name string, old, new []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "diff --git a/%s b/%s\n", name, name)
	oldID, newID := BlobID(old), BlobID(new)
	switch {
	case old == nil:
		fmt.Fprintf(&buf, "new file mode 100644\nindex %s..%s\n", zeroID, newID)
	case new == nil:
		fmt.Fprintf(&buf, "deleted file mode 100644\nindex %s..%s\n", oldID, zeroID)
	default:
		fmt.Fprintf(&buf, "index %s..%s 100644\n", oldID, newID)
	}
	if err := BinaryPatch(&buf, old, new); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func binaryPairs() []pair {
	r := rand.New(rand.NewPCG(7, 7))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	big := rnd(300000)
	bigEdit := append(append(append([]byte{}, big[:1000]...), "edit\x00"...), big[1000:]...)
	ps := []pair{
		{"small", []byte("\x00\x01\x02"), []byte("\x00\x01\x03")},
		{"added", nil, rnd(1000)},
		{"deleted", rnd(1000), nil},
		{"to empty", rnd(10), []byte{}},
		{"from empty", []byte{}, rnd(10)},
		{"large random", big, bigEdit},
		{"zeros", make([]byte, 100000), make([]byte, 100001)},
	}
	for n := range 60 {
		ps = append(ps, pair{fmt.Sprintf("size %d", n), rnd(n), rnd(n + 1)})
	}
	return ps
}

// TestBinaryPatchGitApply checks that `git apply` applies every binary
// patch to give new, and `git apply -R` reverts it to old.
func TestBinaryPatchGitApply(t *testing.T) {
	for _, p := range binaryPairs() {
		t.Run(p.name, func(t *testing.T) {
			dir := t.TempDir()
			f := filepath.Join(dir, "f.bin")
			if p.a != nil {
				if err := os.WriteFile(f, p.a, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "p.patch"), binaryPatch(t, "f.bin", p.a, p.b), 0o644); err != nil {
				t.Fatal(err)
			}
			check := func(want []byte) {
				t.Helper()
				got, err := os.ReadFile(f)
				if want == nil {
					if err == nil {
						t.Fatalf("f.bin exists, want it deleted")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("f.bin has %d bytes, not the %d wanted", len(got), len(want))
				}
			}
			for _, args := range [][]string{{"apply", "--check", "p.patch"}, {"apply", "p.patch"}} {
				if _, e, code := git(t, dir, nil, args...); code != 0 {
					t.Fatalf("git %v: exit %d: %s", args, code, e)
				}
			}
			check(p.b)
			for _, args := range [][]string{{"apply", "-R", "--check", "p.patch"}, {"apply", "-R", "p.patch"}} {
				if _, e, code := git(t, dir, nil, args...); code != 0 {
					t.Fatalf("git %v: exit %d: %s", args, code, e)
				}
			}
			check(p.a)
		})
	}
}

// TestBlobID compares BlobID with `git hash-object`.
func TestBlobID(t *testing.T) {
	dir := t.TempDir()
	for i, data := range [][]byte{nil, []byte("hello\n"), []byte("\x00\xff"), bytes.Repeat([]byte("ab\r\n"), 5000)} {
		f := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, e, code := git(t, dir, nil, "hash-object", "--no-filters", f)
		if code != 0 {
			t.Fatalf("git hash-object: %s", e)
		}
		if got, want := BlobID(data), string(bytes.TrimSpace(out)); got != want {
			t.Errorf("BlobID(%q…) = %s, git says %s", trunc(data), got, want)
		}
	}
}

// TestIsBinary checks IsBinary against git, which prints "-" for the
// line counts of a binary file in `git diff --numstat`.
func TestIsBinary(t *testing.T) {
	dir := t.TempDir()
	for i, c := range []struct {
		data []byte
		want bool
	}{
		{nil, false},
		{[]byte("text\r\n\xff"), false},
		{[]byte("a\x00"), true},
		{append(bytes.Repeat([]byte("a"), 7999), 0), true},
		{append(bytes.Repeat([]byte("a"), 8000), 0), false},
	} {
		if got := IsBinary(c.data); got != c.want {
			t.Errorf("IsBinary(%d bytes ending %q) = %v", len(c.data), c.data[max(0, len(c.data)-2):], got)
		}
		f := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(f, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, e, code := git(t, dir, nil, "diff", "--no-index", "--numstat", "/dev/null", f)
		if code != 1 {
			t.Fatalf("git diff: exit %d: %s", code, e)
		}
		if gitBinary := bytes.HasPrefix(out, []byte("-\t-\t")); gitBinary != c.want && len(c.data) > 0 {
			t.Errorf("case %d: git says binary=%v, want %v", i, gitBinary, c.want)
		}
	}
}
