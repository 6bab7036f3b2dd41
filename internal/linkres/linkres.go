// Package linkres resolves the target of a symbolic link inside a tree the
// way the kernel would: element by element, following further links (those
// on disk and any the caller describes, say the ones a patch adds), and
// reports when the target leaves the tree's root.
//
// The tree is described by a Lookup, so the same resolution serves a real
// directory, a manifest, or a directory with a patch laid over it.
package linkres

import (
	"errors"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ErrEscape is returned when a target leaves the root: an absolute target,
// a drive or UNC path, a backslash, or ".." above the root, directly or
// through other links.
var ErrEscape = errors.New("symbolic link target leaves the root")

// ErrUnknown is returned when the resolution reaches ".." after a name
// that does not exist: where it leads depends on what that name becomes
// (a directory, or a link to anywhere), so the target cannot be judged.
var ErrUnknown = errors.New("symbolic link target goes through a missing name and then \"..\"")

// ErrLoop is returned after more than MaxHops links.
var ErrLoop = errors.New("too many levels of symbolic links")

// A Lookup describes one '/'-separated path of the tree, relative to the
// root and free of links in its directories: whether it exists, whether it
// is a directory, and the target of a symbolic link.
type Lookup func(rel string) (exists, dir bool, target string, isLink bool)

// MaxHops bounds the symbolic links one resolution follows, like the
// kernel's ELOOP limit.
const MaxHops = 40

// Resolve resolves the target of the symbolic link at rel, from rel's
// directory, following further links through lookup, as the kernel would.
// It returns the resolved path relative to the root ("" for the root
// itself) and whether every element of it exists. An error wrapping
// ErrEscape means the target leaves the root; ErrUnknown and ErrLoop are
// described above.
func Resolve(rel, target string, lookup Lookup) (resolved string, found bool, err error) {
	hops := 0
	var walk func(base []string, target string) ([]string, bool, error)
	walk = func(base []string, target string) ([]string, bool, error) {
		if target == "" {
			return nil, false, nil // ENOENT, as the kernel says
		}
		if path.IsAbs(target) || filepath.IsAbs(target) || filepath.VolumeName(target) != "" || strings.IndexByte(target, '\\') >= 0 {
			return nil, false, ErrEscape
		}
		cur := slices.Clone(base)
		elems := strings.Split(target, "/")
		for i, e := range elems {
			switch e {
			case "", ".":
				continue
			case "..":
				if len(cur) == 0 {
					return nil, false, ErrEscape
				}
				cur = cur[:len(cur)-1]
				continue
			}
			cur = append(cur, e)
			exists, dir, link, isLink := lookup(strings.Join(cur, "/"))
			switch {
			case !exists:
				// Keep walking lexically only to detect an escape.
				rest := path.Clean(strings.Join(append(slices.Clone(cur), elems[i+1:]...), "/"))
				if rest == ".." || strings.HasPrefix(rest, "../") {
					return nil, false, ErrEscape
				}
				if slices.Contains(elems[i+1:], "..") {
					return nil, false, ErrUnknown
				}
				return cur, false, nil
			case isLink:
				if hops++; hops > MaxHops {
					return nil, false, ErrLoop
				}
				var found bool
				var err error
				cur, found, err = walk(cur[:len(cur)-1], link)
				if err != nil || !found {
					return cur, false, err
				}
			case !dir && i < len(elems)-1:
				return cur, false, nil
			}
		}
		return cur, true, nil
	}
	var dir []string
	if d := path.Dir(rel); d != "." {
		dir = strings.Split(d, "/")
	}
	res, found, err := walk(dir, target)
	return strings.Join(res, "/"), found, err
}
