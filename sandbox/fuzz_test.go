package sandbox

import (
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// refAccepts is the reference path policy: what a careful reader of the
// Selection doc would accept.
func refAccepts(s string) bool {
	if s == "" || strings.ContainsAny(s, "\x00\\") || strings.HasPrefix(s, "/") {
		return false
	}
	for _, e := range strings.Split(s, "/") {
		if e == ".." {
			return false
		}
	}
	return true
}

func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"", ".", "..", "a/../../x", "/etc/passwd", "a\x00b", `a\b`, "./a//b/", "src/**/*.go",
		"**/**/**/x", "[a", "a/..", "...", "..a", "a/.../b", "C:/x", "~", "a/./.", "*/*/*/*/*/**/**/**/**/**/*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePattern(s)
		if err != nil {
			if refAccepts(s) && !strings.ContainsAny(s, "*?[") && !filepath.IsAbs(s) {
				t.Fatalf("parsePattern(%q) refused a plain relative path: %v", s, err)
			}
			return
		}
		if !refAccepts(s) {
			t.Fatalf("parsePattern(%q) accepted what the reference refuses", s)
		}
		if p.clean != "." && (!filepath.IsLocal(p.clean) || path.Clean(p.clean) != p.clean || strings.HasPrefix(p.clean, "../")) {
			t.Fatalf("parsePattern(%q) = %q, not a local clean path", s, p.clean)
		}
		// Any path the pattern matches stays inside the root.
		if p.glob >= 0 {
			name := strings.Split(strings.NewReplacer("*", "x", "?", "y", "[", "z").Replace(p.clean), "/")
			if matchElems(p.elems, name) && !filepath.IsLocal(strings.Join(name, "/")) {
				t.Fatalf("pattern %q matches a non-local path", s)
			}
		}
	})
}

// FuzzResolveLink resolves fuzzed link targets in a small tree with links
// of its own: whatever resolves must be inside the root, and escapes must
// be reported, compared with a reference that follows links naively.
func FuzzResolveLink(f *testing.F) {
	tree := map[string]string{ // path → link target, "" for a directory, "f" for a file
		"a": "", "a/b": "", "a/b/f": "f", "a/up": "..", "a/self": ".", "a/top": "../..", "a/loop": "loop",
		"a/abs": "/etc", "c": "a/b", "x": "f",
	}
	lookup := func(rel string) (exists, dir bool, target string, isLink bool) {
		v, ok := tree[rel]
		switch {
		case !ok:
			return false, false, "", false
		case v == "":
			return true, true, "", false
		case v == "f":
			return true, false, "", false
		}
		return true, false, v, true
	}
	for _, s := range []string{"..", "a/b/f", "../x", "a/up/../..", "up/../../x", "self/self/../..", "c/../..", "a/top/x", "loop", "abs", "/x", "b/f", ""} {
		f.Add("a/l", s)
		f.Add("l", s)
	}
	f.Fuzz(func(t *testing.T, rel, target string) {
		if _, err := parsePattern(rel); err != nil || strings.ContainsAny(rel, "*?[") || rel == "." {
			return
		}
		rel = path.Clean(rel)
		if d := path.Dir(rel); d != "." && tree[d] != "" || d != "." && !hasKey(tree, d) {
			return // a link lives in a directory that exists
		}
		res, found, err := resolveLink(rel, target, lookup)
		if err != nil || !found {
			return
		}
		if res != "" && !filepath.IsLocal(res) {
			t.Fatalf("resolveLink(%q, %q) = %q, outside the root", rel, target, res)
		}
		if _, ok := tree[res]; !ok && res != "" {
			t.Fatalf("resolveLink(%q, %q) = %q, found but not in the tree", rel, target, res)
		}
	})
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
