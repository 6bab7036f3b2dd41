package proposal

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// ErrPatch is wrapped by the errors of Review and Apply for a patch that is
// malformed, over a limit, or whose hunks do not apply.
var ErrPatch = errors.New("proposal: bad patch")

// Limits on patches, against patches built to exhaust memory.
const (
	// DefaultMaxPatchBytes caps the size of a patch.
	DefaultMaxPatchBytes = 256 << 20
	// DefaultMaxFileBytes caps the size of one file a patch produces or
	// changes.
	DefaultMaxFileBytes = 256 << 20
	// maxFiles caps the number of files in a patch.
	maxPatchFiles = 1 << 20
)

// unit is the change of one target: one patch file, or a deletion and an
// addition of the same path (a change between a symbolic link and a
// regular file, which git writes that way).
type unit struct {
	oldPath, newPath string // "" for the side that does not exist
	oldMode, newMode uint32 // 0 when absent or not given
	del              *gitdiff.File
	f                *gitdiff.File
}

func (u *unit) path() string {
	if u.newPath != "" {
		return u.newPath
	}
	return u.oldPath
}

// parsePatch parses a git patch and checks it against the policy: every
// path, link target and mode, that no path is touched twice, and that no
// path lies below a file, a symbolic link or another target of the patch.
// It does not look at the project.
func parsePatch(data []byte, pol *Policy, maxFile int64) ([]*unit, error) {
	if len(data) > DefaultMaxPatchBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte cap", ErrPatch, len(data), DefaultMaxPatchBytes)
	}
	files, _, err := gitdiff.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPatch, err)
	}
	if len(files) == 0 && len(bytes.TrimSpace(data)) > 0 {
		return nil, fmt.Errorf("%w: no file changes found in %d bytes; is this a git diff?", ErrPatch, len(data))
	}
	if len(files) > maxPatchFiles {
		return nil, fmt.Errorf("%w: %d files, over the cap of %d", ErrPatch, len(files), maxPatchFiles)
	}
	var units []*unit
	byNew := map[string]*unit{}
	for _, f := range files {
		u := &unit{f: f, oldMode: uint32(f.OldMode), newMode: uint32(f.NewMode)}
		switch {
		case f.IsCopy:
			return nil, fmt.Errorf("%w: %s: copies are not supported", ErrPatch, f.NewName)
		case f.IsNew && f.IsDelete:
			return nil, fmt.Errorf("%w: %s: both new and deleted", ErrPatch, f.NewName)
		case f.IsNew:
			u.newPath = f.NewName
		case f.IsDelete:
			u.oldPath = f.OldName
		default:
			u.oldPath, u.newPath = f.OldName, f.NewName
		}
		if !f.IsRename && u.oldPath != "" && u.newPath != "" && u.oldPath != u.newPath {
			return nil, fmt.Errorf("%w: %s: old and new names differ without a rename", ErrPatch, u.newPath)
		}
		for _, p := range []string{u.oldPath, u.newPath} {
			if p == "" {
				continue
			}
			if err := pol.CheckPath(p); err != nil {
				return nil, err
			}
		}
		if err := checkMode(u.path(), u.oldMode); err != nil {
			return nil, err
		}
		if err := checkMode(u.path(), u.newMode); err != nil {
			return nil, err
		}
		if f.IsNew && u.newMode == 0 {
			u.newMode = modeFile
		}
		if err := checkFragments(u.path(), f, maxFile); err != nil {
			return nil, err
		}
		// A deletion and an addition of one path is a type change.
		if f.IsNew {
			if prev := byNew[u.newPath]; prev != nil && prev.f.IsDelete && prev.del == nil {
				prev.del, prev.f = prev.f, f
				prev.newPath, prev.newMode = u.newPath, u.newMode
				continue
			}
		}
		units = append(units, u)
		if f.IsDelete {
			byNew[u.oldPath] = u
		}
	}
	if err := checkTargets(units); err != nil {
		return nil, err
	}
	return units, nil
}

// checkFragments checks the sizes a file's fragments claim.
func checkFragments(name string, f *gitdiff.File, maxFile int64) error {
	if f.IsBinary {
		if f.BinaryFragment == nil {
			return fmt.Errorf("%w: %s: binary change without data (\"Binary files differ\"); make the patch with --binary", ErrPatch, name)
		}
		if f.BinaryFragment.Size > maxFile {
			return fmt.Errorf("%w: %s: binary fragment of %d bytes, over the %d-byte cap", ErrPatch, name, f.BinaryFragment.Size, maxFile)
		}
		return nil
	}
	var size int64
	for _, fr := range f.TextFragments {
		if err := fr.Validate(); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrPatch, name, err)
		}
		for _, l := range fr.Lines {
			size += int64(len(l.Line))
		}
		if size > maxFile {
			return fmt.Errorf("%w: %s: hunks of more than %d bytes", ErrPatch, name, maxFile)
		}
	}
	return nil
}

// checkTargets refuses patches that touch a path twice, or put a path below
// another one the patch leaves as a file or link.
func checkTargets(units []*unit) error {
	touched := map[string]bool{}
	leaves := map[string]bool{} // paths that are files or links after the patch
	for _, u := range units {
		if u.oldPath != "" {
			if touched[u.oldPath] {
				return &PolicyError{Path: u.oldPath, Reason: "the patch changes this path more than once"}
			}
			touched[u.oldPath] = true
		}
		if u.newPath != "" && u.newPath != u.oldPath {
			if touched[u.newPath] {
				return &PolicyError{Path: u.newPath, Reason: "the patch changes this path more than once"}
			}
			touched[u.newPath] = true
		}
		if u.newPath != "" {
			leaves[u.newPath] = true
		}
	}
	for _, u := range units {
		for _, p := range []string{u.oldPath, u.newPath} {
			for d := parentOf(p); d != ""; d = parentOf(d) {
				if leaves[d] {
					return &PolicyError{Path: p, Reason: "lies below " + d + ", which the patch makes a file or symbolic link"}
				}
			}
		}
	}
	return nil
}

// parentOf returns the parent of a '/'-separated relative path, or "" at
// the top.
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}
