package linkres_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paddockdev/paddock/internal/linkres"
)

// mapTree describes a tree: "" for a file, "/" for a directory, "->t" for a
// link to t.
func mapTree(m map[string]string) linkres.Lookup {
	return func(rel string) (bool, bool, string, bool) {
		v, ok := m[rel]
		if !ok {
			return false, false, "", false
		}
		if t, ok := strings.CutPrefix(v, "->"); ok {
			return true, false, t, true
		}
		return true, v == "/", "", false
	}
}

func Example() {
	tree := mapTree(map[string]string{"x": "/", "x/up": "->..", "a.txt": ""})
	// As a string, x/up/../a.txt is x/a.txt; the kernel follows x/up
	// (the root) first, and its ".." leaves the root.
	_, _, err := linkres.Resolve("esc", "x/up/../a.txt", tree)
	fmt.Println(errors.Is(err, linkres.ErrEscape))
	res, found, err := linkres.Resolve("l", "x/up/a.txt", tree)
	fmt.Println(res, found, err)
	// Output:
	// true
	// a.txt true <nil>
}

// TestResolveMatchesKernel builds each tree on disk and checks Resolve
// against filepath.EvalSymlinks.
func TestResolveMatchesKernel(t *testing.T) {
	for _, tc := range []struct {
		tree         map[string]string
		link, target string
		want         string
		wantErr      error
		checkOnDisk  bool
	}{
		{map[string]string{"x": "/", "x/up": "->..", "a.txt": ""}, "esc", "x/up/../a.txt", "", linkres.ErrEscape, true},
		{map[string]string{"x": "/", "x/up": "->..", "a.txt": ""}, "l", "x/up/a.txt", "a.txt", nil, true},
		{map[string]string{"d": "/", "d/e": "/", "f": ""}, "l", "d/e/../../f", "f", nil, true},
		{map[string]string{"a": "->b", "b": "->a"}, "l", "a", "", linkres.ErrLoop, false},
		{map[string]string{"a.txt": ""}, "l", "missing/../a.txt", "", linkres.ErrUnknown, false},
		{map[string]string{}, "l", "../x", "", linkres.ErrEscape, false},
		{map[string]string{}, "l", "/etc", "", linkres.ErrEscape, false},
	} {
		res, _, err := linkres.Resolve(tc.link, tc.target, mapTree(tc.tree))
		if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && res != tc.want) {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q, %v", tc.link, tc.target, res, err, tc.want, tc.wantErr)
		}
		if !tc.checkOnDisk {
			continue
		}
		root := filepath.Join(t.TempDir(), "root")
		os.MkdirAll(root, 0o755)
		os.WriteFile(filepath.Join(filepath.Dir(root), "a.txt"), nil, 0o644)
		for _, p := range slices.Sorted(maps.Keys(tc.tree)) {
			v := tc.tree[p]
			full := filepath.Join(root, p)
			err := os.MkdirAll(filepath.Dir(full), 0o755) // map order: a child may come first
			switch {
			case err != nil:
			case v == "/":
				err = os.MkdirAll(full, 0o755)
			case strings.HasPrefix(v, "->"):
				err = os.Symlink(v[2:], full)
			default:
				err = os.WriteFile(full, nil, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(tc.target, filepath.Join(root, tc.link)); err != nil {
			t.Fatal(err)
		}
		real, err := filepath.EvalSymlinks(filepath.Join(root, tc.link))
		if err != nil {
			t.Fatal(err)
		}
		realRoot, _ := filepath.EvalSymlinks(root)
		rel, _ := filepath.Rel(realRoot, real)
		escaped := rel == ".." || strings.HasPrefix(rel, "../")
		if escaped != (tc.wantErr == linkres.ErrEscape) || (!escaped && filepath.ToSlash(rel) != tc.want) {
			t.Errorf("on disk %q -> %q is %s (escaped %v), Resolve says %q, %v", tc.link, tc.target, rel, escaped, res, err)
		}
	}
}
