package sandbox

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/paddockdev/paddock/internal/linkres"
)

// A Selection lists what [Prepare] copies: patterns relative to the project
// root, using '/' as the separator on every system. A pattern is one of:
//
//   - a file or symbolic link ("go.mod", "cmd/main.go");
//   - a directory ("src", "src/", "." for the whole project), which expands
//     to every file below it;
//   - a glob: each '/'-separated element is matched with [path.Match]
//     syntax ('*', '?', '[a-z]', with '\' unsupported), and an element that
//     is exactly "**" matches zero or more directories. "src/*.go",
//     "**/*_test.go" and "docs/**" are globs. A glob that matches a
//     directory expands to every file below it. '*' matches names starting
//     with '.' too.
//
// Patterns are cleaned ("./a//b/" is "a/b"). Empty patterns, absolute paths,
// ".." elements, NUL bytes and backslashes are refused. A literal pattern
// that does not exist is an error, as is a glob that matches no file.
// Overlapping patterns are fine: each file is copied once.
//
// Blocked directories (.git, node_modules, dist, and the state directory
// when it is inside the project) are skipped while a directory or glob
// expands, and refused when a pattern names a path inside one. Every element
// of a path is checked, so "web/node_modules/x" is blocked too; the check
// ignores case, because on case-insensitive file systems ".GIT" is the
// repository.
type Selection []string

// SymlinkPolicy says what [Prepare] does with selected symbolic links.
type SymlinkPolicy int

const (
	// RefuseSymlinks, the default, refuses any selected symbolic link with
	// an error naming it.
	RefuseSymlinks SymlinkPolicy = iota
	// CopySymlinksInside copies a symbolic link as a link when its target,
	// resolved from the link's directory through the selection itself
	// (following further selected links), names a selected file or a
	// directory holding selected files. Absolute targets, dangling links and
	// links to anything else are refused.
	CopySymlinksInside
)

func (p SymlinkPolicy) String() string {
	switch p {
	case RefuseSymlinks:
		return "RefuseSymlinks"
	case CopySymlinksInside:
		return "CopySymlinksInside"
	}
	return fmt.Sprintf("SymlinkPolicy(%d)", int(p))
}

// blockedNames are the directory names blocked unless allowed.
var blockedNames = []string{".git", "node_modules", "dist"}

// maxDoubleStar bounds the "**" elements of a glob, so that matching stays
// cheap whatever the pattern.
const maxDoubleStar = 4

// pattern is a checked selection pattern.
type pattern struct {
	clean string   // cleaned, '/'-separated, "." for the root
	elems []string // clean split on '/'; empty for "."
	glob  int      // index of the first glob element, or -1
}

// parsePattern applies the path policy to one selection pattern. It touches
// nothing on disk.
func parsePattern(s string) (pattern, error) {
	refuse := func(reason string, err error) (pattern, error) {
		return pattern{}, &SelectionError{Path: s, Reason: reason, Err: err}
	}
	switch {
	case s == "":
		return refuse("empty path", nil)
	case strings.IndexByte(s, 0) >= 0:
		return refuse("the path contains a NUL byte", nil)
	case strings.HasPrefix(s, "/") || filepath.IsAbs(s) || filepath.VolumeName(s) != "":
		return refuse("absolute path; select paths relative to the project root", ErrPathEscape)
	case strings.IndexByte(s, '\\') >= 0:
		return refuse(`the path contains a backslash; use "/" as the separator`, nil)
	}
	for e := range strings.SplitSeq(s, "/") {
		if e == ".." {
			return refuse(`the path contains ".."`, ErrPathEscape)
		}
	}
	p := pattern{clean: path.Clean(s), glob: -1}
	if p.clean == "." {
		return p, nil
	}
	p.elems = strings.Split(p.clean, "/")
	stars := 0
	for i, e := range p.elems {
		if !strings.ContainsAny(e, "*?[") {
			continue
		}
		if p.glob < 0 {
			p.glob = i
		}
		if e == "**" {
			if stars++; stars > maxDoubleStar {
				return refuse(fmt.Sprintf(`more than %d "**" elements`, maxDoubleStar), nil)
			}
			continue
		}
		if _, err := path.Match(e, ""); err != nil {
			return refuse("bad glob element "+e, err)
		}
	}
	// Collapse runs of "**": they match the same and would cost more.
	p.elems = slices.CompactFunc(p.elems, func(a, b string) bool { return a == "**" && b == "**" })
	return p, nil
}

// matchElems reports whether the glob elements pat match the path elements
// name in full.
func matchElems(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchElems(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// mayMatchBelow reports whether some path below the directory dir could
// match pat, so that walking into dir is worth it.
func mayMatchBelow(pat, dir []string) bool {
	for ; len(dir) > 0; dir = dir[1:] {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[0], dir[0]); !ok {
			return false
		}
		pat = pat[1:]
	}
	return len(pat) > 0
}

// blocker decides which project paths are blocked.
type blocker struct {
	names    []string // blocked names, after Allow
	stateRel string   // the state root relative to the project, or ""
}

func newBlocker(allow []string, stateRel string) (blocker, error) {
	b := blocker{stateRel: stateRel}
	for _, a := range allow {
		a = strings.Trim(a, "/")
		if !slices.ContainsFunc(blockedNames, func(n string) bool { return strings.EqualFold(n, a) }) {
			return blocker{}, fmt.Errorf("sandbox: PrepareOptions.Allow: %q is not a blocked directory (blocked are %s)", a, strings.Join(blockedNames, ", "))
		}
	}
	for _, n := range blockedNames {
		if !slices.ContainsFunc(allow, func(a string) bool { return strings.EqualFold(strings.Trim(a, "/"), n) }) {
			b.names = append(b.names, n)
		}
	}
	return b, nil
}

// blocked returns why rel (cleaned, '/'-separated, relative to the project)
// is blocked, or "" when it is not.
func (b blocker) blocked(rel string) string {
	if b.stateRel != "" && (rel == b.stateRel || strings.HasPrefix(rel, b.stateRel+"/")) {
		return "inside the state directory " + b.stateRel
	}
	for e := range strings.SplitSeq(rel, "/") {
		for _, n := range b.names {
			if strings.EqualFold(e, n) {
				return fmt.Sprintf("inside %s/, which is blocked; allow it with PrepareOptions.Allow", n)
			}
		}
	}
	return ""
}

// A linkLookup describes one path of a tree to [resolveLink]: whether it
// exists, whether it is a directory, and the target of a symbolic link.
type linkLookup = linkres.Lookup

// resolveLink resolves the target of the symbolic link at rel, from rel's
// directory, following further links through lookup, as the kernel would
// (see [linkres.Resolve]). It returns the resolved path relative to the
// root and whether every element of it exists. An error wrapping
// [ErrPathEscape] means the target leaves the root (an absolute target, or
// ".." above the root); other errors are loops. A ".." after a missing
// name is not found, without an error.
func resolveLink(rel, target string, lookup linkLookup) (resolved string, found bool, err error) {
	resolved, found, err = linkres.Resolve(rel, target, lookup)
	switch {
	case errors.Is(err, linkres.ErrEscape):
		return "", false, ErrPathEscape
	case errors.Is(err, linkres.ErrUnknown):
		return "", false, nil
	}
	return resolved, found, err
}
