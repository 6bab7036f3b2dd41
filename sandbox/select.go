package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// entry is one selected file or symbolic link.
type entry struct {
	rel    string // project-relative, '/'-separated
	dir    string // path.Dir(rel)
	name   string // path.Base(rel)
	fi     fs.FileInfo
	size   int64
	perm   fs.FileMode // permission bits only
	mtime  time.Time
	isLink bool
	target string // for links
}

// selector expands a Selection into entries, applying the policy.
type selector struct {
	root     *os.Root
	block    blocker
	links    SymlinkPolicy
	maxFiles int64
	maxBytes int64

	entries  map[string]*entry
	dirModes map[string]fs.FileMode // every directory walked through
	needed   map[string]bool        // directories holding a selected entry
	nbytes   int64
	matched  int // entries matched by the current pattern
}

func newSelector(root *os.Root, block blocker, o *PrepareOptions) *selector {
	return &selector{
		root: root, block: block, links: o.Symlinks,
		maxFiles: int64(o.MaxFiles), maxBytes: o.MaxBytes,
		entries:  make(map[string]*entry),
		dirModes: make(map[string]fs.FileMode),
		needed:   make(map[string]bool),
	}
}

func refuse(p, reason string, err error) error {
	return &SelectionError{Path: p, Reason: reason, Err: err}
}

// add expands one checked pattern.
func (s *selector) add(p pattern) error {
	s.matched = 0
	n := len(p.elems)
	if p.glob >= 0 {
		n = p.glob
	}
	dr := s.root
	defer func() {
		if dr != s.root {
			dr.Close()
		}
	}()
	for i := range n {
		rel := strings.Join(p.elems[:i+1], "/")
		if why := s.block.blocked(rel); why != "" {
			return refuse(p.clean, why, ErrBlocked)
		}
		name := p.elems[i]
		fi, err := dr.Lstat(name)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return refuse(p.clean, rel+" does not exist", fs.ErrNotExist)
			}
			return fmt.Errorf("sandbox: %s: %w", rel, err)
		}
		last := i == len(p.elems)-1
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if last {
				return s.addLink(dr, rel, fi)
			}
			return s.refuseLink(dr, rel, name, "a parent directory, "+rel+", is a symbolic link; select the directory it points to instead")
		case fi.IsDir():
			s.dirModes[rel] = fi.Mode().Perm()
			sub, err := s.openDir(dr, name, rel, fi)
			if err != nil {
				return err
			}
			if dr != s.root {
				dr.Close()
			}
			dr = sub
		case !last:
			return refuse(p.clean, rel+" is not a directory", nil)
		default:
			return s.addFile(rel, fi)
		}
	}
	prefix := strings.Join(p.elems[:n], "/")
	if p.glob < 0 {
		return s.walk(dr, prefix, nil, nil)
	}
	if err := s.walk(dr, prefix, p.elems[p.glob:], []string{}); err != nil {
		return err
	}
	if s.matched == 0 {
		return refuse(p.clean, "the pattern matches no file", fs.ErrNotExist)
	}
	return nil
}

// openDir opens the directory name in dr as a root of its own and checks
// that it is the directory fi describes, so that a directory swapped for a
// link after Lstat is noticed.
func (s *selector) openDir(dr *os.Root, name, rel string, fi fs.FileInfo) (*os.Root, error) {
	sub, err := dr.OpenRoot(name)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", rel, err)
	}
	if st, err := sub.Stat("."); err != nil || !os.SameFile(st, fi) {
		sub.Close()
		return nil, fmt.Errorf("sandbox: %s changed while the sandbox was being prepared", rel)
	}
	return sub, nil
}

// walk adds the entries below the directory dr (at rel). With pat nil it
// adds everything; otherwise only what matches the glob elements pat, with
// sub the path elements of rel below the glob's literal prefix.
func (s *selector) walk(dr *os.Root, rel string, pat, sub []string) error {
	f, err := dr.Open(".")
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", rel, err)
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", rel, err)
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, de := range des {
		name := de.Name()
		crel := name
		if rel != "" {
			crel = rel + "/" + name
		}
		if s.block.blocked(crel) != "" {
			continue
		}
		var csub []string
		all := pat == nil
		if !all {
			csub = append(sub[:len(sub):len(sub)], name)
			all = matchElems(pat, csub)
			if !all && !(de.IsDir() && mayMatchBelow(pat, csub)) {
				continue
			}
		}
		fi, err := dr.Lstat(name)
		if err != nil {
			return fmt.Errorf("sandbox: %s: %w", crel, err)
		}
		if !all && !fi.IsDir() {
			continue // changed since ReadDir; it did not match
		}
		if all && pat != nil {
			s.matched++
		}
		switch {
		case fi.IsDir():
			s.dirModes[crel] = fi.Mode().Perm()
			cdr, err := s.openDir(dr, name, crel, fi)
			if err != nil {
				return err
			}
			if all {
				err = s.walk(cdr, crel, nil, nil)
			} else {
				err = s.walk(cdr, crel, pat, csub)
			}
			cdr.Close()
			if err != nil {
				return err
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			if err := s.addLink(dr, crel, fi); err != nil {
				return err
			}
		default:
			if err := s.addFile(crel, fi); err != nil {
				return err
			}
		}
	}
	return nil
}

// addFile adds the regular file at rel, refusing anything else.
func (s *selector) addFile(rel string, fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return refuse(rel, "is a device", ErrUnsafeFile)
	case m&fs.ModeNamedPipe != 0:
		return refuse(rel, "is a FIFO", ErrUnsafeFile)
	case m&fs.ModeSocket != 0:
		return refuse(rel, "is a socket", ErrUnsafeFile)
	case !m.IsRegular():
		return refuse(rel, "is not a regular file", ErrUnsafeFile)
	}
	if n := linkCount(fi); n > 1 {
		return refuse(rel, fmt.Sprintf("has %d hard links; a hard link may share its contents with a file outside the project", n), ErrUnsafeFile)
	}
	return s.put(&entry{rel: rel, fi: fi, size: fi.Size(), perm: m.Perm(), mtime: fi.ModTime()})
}

// addLink adds the symbolic link at rel (in the directory dr), or refuses
// it.
func (s *selector) addLink(dr *os.Root, rel string, fi fs.FileInfo) error {
	name := path.Base(rel)
	if s.links != CopySymlinksInside {
		return s.refuseLink(dr, rel, name, "is a symbolic link; set PrepareOptions.Symlinks to CopySymlinksInside to copy links whose target is in the selection")
	}
	target, err := dr.Readlink(name)
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", rel, err)
	}
	return s.put(&entry{rel: rel, fi: fi, isLink: true, target: target, mtime: fi.ModTime(), perm: fi.Mode().Perm()})
}

// refuseLink refuses the link at rel, saying ErrPathEscape when it resolves
// outside the project and ErrUnsafeFile otherwise.
func (s *selector) refuseLink(dr *os.Root, rel, name, reason string) error {
	target, err := dr.Readlink(name)
	if err != nil {
		return refuse(rel, reason, ErrUnsafeFile)
	}
	if _, _, err := resolveLink(rel, target, s.projectLookup); errors.Is(err, ErrPathEscape) {
		return refuse(rel, fmt.Sprintf("is a symbolic link to %q, outside the project", target), ErrPathEscape)
	}
	return refuse(rel, reason, ErrUnsafeFile)
}

// projectLookup describes the project's files to resolveLink.
func (s *selector) projectLookup(rel string) (exists, dir bool, target string, isLink bool) {
	fi, err := s.root.Lstat(rel)
	if err != nil {
		return false, false, "", false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, err := s.root.Readlink(rel)
		return err == nil, false, t, err == nil
	}
	return true, fi.IsDir(), "", false
}

// selectionLookup describes the selection to resolveLink.
func (s *selector) selectionLookup(rel string) (exists, dir bool, target string, isLink bool) {
	if e, ok := s.entries[rel]; ok {
		return true, false, e.target, e.isLink
	}
	if s.needed[rel] {
		return true, true, "", false
	}
	return false, false, "", false
}

// put records e, enforcing the caps.
func (s *selector) put(e *entry) error {
	if s.entries[e.rel] != nil {
		return nil
	}
	if int64(len(s.entries)) >= s.maxFiles {
		return &LimitError{Option: "MaxFiles", Limit: s.maxFiles}
	}
	if s.nbytes+e.size > s.maxBytes {
		return &LimitError{Option: "MaxBytes", Limit: s.maxBytes}
	}
	s.matched++
	s.nbytes += e.size
	e.dir, e.name = path.Dir(e.rel), path.Base(e.rel)
	s.entries[e.rel] = e
	for d := e.dir; d != "." && !s.needed[d]; d = path.Dir(d) {
		s.needed[d] = true
	}
	return nil
}

// checkLinks checks, once the selection is complete, that every selected
// link resolves inside it.
func (s *selector) checkLinks() error {
	for _, e := range s.sorted() {
		if !e.isLink {
			continue
		}
		_, found, err := resolveLink(e.rel, e.target, s.selectionLookup)
		switch {
		case errors.Is(err, ErrPathEscape):
			return refuse(e.rel, fmt.Sprintf("is a symbolic link to %q, which leaves the sandbox", e.target), ErrPathEscape)
		case err != nil:
			return refuse(e.rel, fmt.Sprintf("is a symbolic link to %q: %v", e.target, err), ErrUnsafeFile)
		case !found:
			return refuse(e.rel, fmt.Sprintf("is a symbolic link to %q, which is not in the selection", e.target), ErrUnsafeFile)
		}
	}
	return nil
}

// sorted returns the entries sorted by path.
func (s *selector) sorted() []*entry {
	es := make([]*entry, 0, len(s.entries))
	for _, e := range s.entries {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b *entry) int { return strings.Compare(a.rel, b.rel) })
	return es
}

// dirs returns the directories to create, parents first, with their modes.
func (s *selector) dirs() []string {
	ds := make([]string, 0, len(s.needed))
	for d := range s.needed {
		ds = append(ds, d)
	}
	slices.Sort(ds) // a parent sorts before its children
	return ds
}
