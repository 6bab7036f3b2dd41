package proposal

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/paddockdev/paddock/internal/linkres"
)

// ErrPathPolicy is wrapped, through a *PolicyError, by the errors of Review
// and Apply for a patch that names a path, a link target or a mode the path
// policy refuses.
var ErrPathPolicy = errors.New("proposal: refused by the path policy")

// A PolicyError is a path the policy refuses, and why.
type PolicyError struct {
	Path   string
	Reason string
}

// Error says which path was refused and why.
func (e *PolicyError) Error() string {
	return fmt.Sprintf("proposal: path %q refused: %s", e.Path, e.Reason)
}

// Is reports whether target is ErrPathPolicy.
func (e *PolicyError) Is(target error) bool { return target == ErrPathPolicy }

// Limits of the path policy.
const (
	maxPathBytes    = 4096
	maxElementBytes = 255
)

// A Policy says which paths a patch may touch. The zero Policy allows
// every relative path outside the repository and internal directories.
//
// Whatever the policy, these are always refused: an empty path, an absolute
// path (or a Windows drive or UNC path), a backslash, a NUL byte, control
// characters other than tab, a name that is not valid UTF-8, empty, "." or ".." elements, elements over 255 bytes,
// paths over 4096 bytes, and any element that names the git directory in any
// spelling a file system may take for it: ".git" in any case, with trailing
// dots or spaces (Windows), with Unicode code points that HFS+ ignores,
// the 8.3 short name "git~1", or an NTFS stream (".git::$INDEX_ALLOCATION").
// The directory ".paddock" is refused the same way. Modes other than a
// regular file (100644), an executable (100755) and a symbolic link (120000)
// are refused: no setuid, setgid, sticky bit, directory or submodule.
type Policy struct {
	// AllowedDirs, when not empty, restricts every path to these
	// directories ('/'-separated, relative to the project; "." is the
	// whole project).
	AllowedDirs []string
	// Internal lists more directory names refused like .git (say the state
	// directory's name when it is inside the project), matched ignoring
	// case.
	Internal []string
}

// hfsIgnorable reports whether HFS+ ignores r when comparing names (git's
// is_hfs_dotgit list).
func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// normElement returns the spelling of one path element that the most
// forgiving file system compares: ignorable code points dropped, lower
// case, trailing dots and spaces dropped, and an NTFS stream suffix dropped.
func normElement(e string) string {
	var b strings.Builder
	for _, r := range e {
		if !hfsIgnorable(r) {
			b.WriteRune(r)
		}
	}
	s := strings.ToLower(b.String())
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, ". ")
}

// CheckPath returns a *PolicyError when the policy refuses name, a
// '/'-separated path relative to the project.
func (p *Policy) CheckPath(name string) error {
	bad := func(reason string) error { return &PolicyError{Path: name, Reason: reason} }
	switch {
	case name == "":
		return bad("empty path")
	case len(name) > maxPathBytes:
		return bad("path longer than 4096 bytes")
	case strings.IndexByte(name, 0) >= 0:
		return bad("path contains a NUL byte")
	case !utf8.ValidString(name):
		return bad("path is not valid UTF-8")
	case strings.ContainsFunc(name, func(r rune) bool { return (r < 0x20 && r != '\t') || r == 0x7f }):
		return bad("path contains a control character (newline, carriage return, escape…)")
	case strings.HasPrefix(name, "/"):
		return bad("absolute path; patch paths must be relative to the project")
	case strings.IndexByte(name, '\\') >= 0:
		return bad("path contains a backslash, a separator on Windows")
	case len(name) >= 2 && name[1] == ':':
		return bad("path starts with a drive letter")
	}
	elems := strings.Split(name, "/")
	for _, e := range elems {
		switch e {
		case "":
			return bad("empty path element (double or trailing slash)")
		case ".", "..":
			return bad(`"." or ".." element; paths must stay inside the project`)
		}
		if len(e) > maxElementBytes {
			return bad("path element longer than 255 bytes")
		}
		n := normElement(e)
		if n == ".git" || n == "git~1" {
			return bad("inside the git directory (.git in some spelling)")
		}
		if n == ".paddock" {
			return bad("inside paddock's internal directory")
		}
		for _, in := range p.internal() {
			if n == normElement(in) {
				return bad("inside the internal directory " + in)
			}
		}
	}
	if p != nil && len(p.AllowedDirs) > 0 {
		ok := false
		for _, d := range p.AllowedDirs {
			d = strings.Trim(d, "/")
			if d == "." || d == "" || name == d || strings.HasPrefix(name, d+"/") {
				ok = true
				break
			}
		}
		if !ok {
			return bad("outside the allowed directories " + strings.Join(p.AllowedDirs, ", "))
		}
	}
	return nil
}

func (p *Policy) internal() []string {
	if p == nil {
		return nil
	}
	return p.Internal
}

// CheckSymlink returns a *PolicyError when a symbolic link at name with
// the given target is refused: the target must be relative, and resolved
// from the link's directory it must stay inside the project and pass
// CheckPath. CheckSymlink judges the target as a string; Apply, ApplyPatch
// and Create also resolve it as the kernel would, following the links the
// project (or work/) has and the patch adds, and refuse it when that leaves
// the project.
func (p *Policy) CheckSymlink(name, target string) error {
	if err := p.CheckPath(name); err != nil {
		return err
	}
	bad := func(reason string) error { return &PolicyError{Path: name, Reason: reason} }
	switch {
	case target == "":
		return bad("symbolic link with an empty target")
	case strings.IndexByte(target, 0) >= 0 || !utf8.ValidString(target):
		return bad("symbolic link target has a NUL byte or is not UTF-8")
	case strings.HasPrefix(target, "/") || strings.IndexByte(target, '\\') >= 0 || (len(target) >= 2 && target[1] == ':'):
		return bad("symbolic link with an absolute target")
	}
	r := path.Join(path.Dir(name), target)
	if r == ".." || strings.HasPrefix(r, "../") {
		return bad("symbolic link whose target leaves the project")
	}
	if r == "." {
		return nil
	}
	if err := p.CheckPath(r); err != nil {
		return bad("symbolic link target " + r + " is refused: " + err.(*PolicyError).Reason)
	}
	return nil
}

// checkLinkIn returns a *PolicyError when the symbolic link at name with
// the given target, resolved as the kernel would over the tree lookup
// describes (following every other link in it), leaves the tree, depends
// on a name that does not exist followed by "..", or lands on a path
// CheckPath refuses. CheckSymlink judges the target as a string; this
// judges it in the tree it will live in.
func (p *Policy) checkLinkIn(name, target string, lookup linkres.Lookup) error {
	res, _, err := linkres.Resolve(name, target, lookup)
	bad := func(reason string) error { return &PolicyError{Path: name, Reason: reason} }
	switch {
	case errors.Is(err, linkres.ErrEscape):
		return bad("symbolic link to " + strconv.Quote(target) + " leaves the project once the links it goes through are followed")
	case errors.Is(err, linkres.ErrUnknown):
		return bad("symbolic link to " + strconv.Quote(target) + ` has ".." after a name that does not exist; where it leads depends on what that name becomes`)
	case err != nil:
		return bad("symbolic link to " + strconv.Quote(target) + ": " + err.Error())
	}
	if res != "" {
		if err := p.CheckPath(res); err != nil {
			return bad("symbolic link target " + res + " (links followed) is refused: " + err.(*PolicyError).Reason)
		}
	}
	return nil
}

// checkMode returns a *PolicyError for a git mode other than 0 (absent),
// 100644, 100755 and 120000.
func checkMode(name string, mode uint32) error {
	switch mode {
	case 0, modeFile, modeExec, modeSymlink:
		return nil
	}
	return &PolicyError{Path: name, Reason: fmt.Sprintf("mode %o is not allowed; only 100644, 100755 and 120000 are", mode)}
}
