package rootfs

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrPathEscape is wrapped by every error that refuses a path because it
// leaves the root: an absolute path outside it, a ".." that climbs above it,
// or a symbolic link whose target is absolute or lies outside it. The
// sandbox package re-exports it as sandbox.ErrPathEscape.
var ErrPathEscape = errors.New("sandbox: path escapes its root")

// ErrSpecialFile is wrapped by every error that refuses a file because it is
// not a plain regular file: a hard-linked file (a regular file with more
// than one link, whose other names may lie outside the root), a device, a
// named pipe (FIFO) or a socket. The error's text says which and why.
var ErrSpecialFile = errors.New("sandbox: special file refused")

// ErrTooLarge is wrapped by the error [FS.ReadFile] and [FS.Edit] return
// when a file is larger than the byte limit.
var ErrTooLarge = errors.New("sandbox: file too large")

// DefaultMaxRead is the limit [FS.ReadFile] applies when its maxBytes is
// zero or negative, and the limit [FS.Edit] applies to the file it edits.
const DefaultMaxRead = 10 << 20

// Limits on the paths the tools accept, as on Linux: a whole path of at most
// MaxPath bytes (PATH_MAX, 4096, counts the terminating NUL) and path
// elements of at most MaxName bytes (NAME_MAX).
const (
	MaxPath = 4095
	MaxName = 255
)

const (
	defaultFilePerm = 0o644
	defaultDirPerm  = 0o755
	maxSymlinks     = 8 // as os.Root
	tempPrefix      = ".rootfs-tmp-"
)

// FS is a directory tree whose files can be read and changed only through
// names that stay inside it. Every operation goes through an [os.Root], so no
// symbolic link, ".." or absolute path can reach outside the directory, even
// when the tree changes while the operation runs.
//
// An FS is safe for concurrent use by multiple goroutines. [FS.WriteFile]
// and [FS.Edit] calls on the same file through the same FS are serialized,
// so concurrent edits are not lost; changes made by other processes between
// Edit's read and its write are (see the package's Security section).
type FS struct {
	dir     string // absolute, clean, as given
	realDir string // dir with symbolic links resolved
	root    *os.Root
	seed    maphash.Seed
	locks   [64]sync.Mutex
}

// Open opens the directory dir as an FS. A relative dir is made absolute
// against the current directory; symbolic links in dir itself are followed.
// The returned FS holds an open file descriptor until [FS.Close].
func Open(dir string) (*FS, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	realDir, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(realDir)
	if err != nil {
		return nil, err
	}
	probeEscapeError(root)
	return &FS{dir: abs, realDir: realDir, root: root, seed: maphash.MakeSeed()}, nil
}

// Close releases the FS's directory. Methods called after Close, or while it
// runs, return errors. Close is safe to call more than once; calls after the
// first return an error.
func (f *FS) Close() error { return f.root.Close() }

// Dir returns the directory given to [Open], made absolute and cleaned. It
// may contain symbolic links; the tree it names is the one the FS opened.
func (f *FS) Dir() string { return f.dir }

// Entry describes a file, as [FS.Stat] and [FS.List] report it. A symbolic
// link is described as itself, never as its target.
type Entry struct {
	Name    string // base name; "." for the root itself
	Type    EntryType
	Size    int64       // bytes for files; as the system reports for others
	Mode    fs.FileMode // type and permission bits
	ModTime time.Time
}

// EntryType is the kind of an [Entry].
type EntryType string

// The kinds of Entry.
const (
	TypeFile    EntryType = "file"    // a regular file
	TypeDir     EntryType = "dir"     // a directory
	TypeSymlink EntryType = "symlink" // a symbolic link, not followed
	TypeOther   EntryType = "other"   // a device, named pipe or socket
)

// Resolve maps p to a clean path relative to the root, the form every
// method accepts and the one to show a model or a user:
//
//   - "" and "." are the root itself;
//   - a relative path is relative to the root and cleaned lexically, as
//     by [filepath.Clean]: "a/../b" is "b" even where a is a symbolic link;
//   - an absolute path is accepted only when it lies inside the root: after
//     cleaning, under [FS.Dir] or under the same directory with its symbolic
//     links resolved, or, when it exists, once its own symbolic links are
//     resolved ("/proc/self/root" + Dir() + "/x" maps to "x").
//
// Anything else is refused with an error wrapping [ErrPathEscape]; Resolve
// never falls back to the root. Resolve also looks the path up inside the
// root, following symbolic links, and refuses it with ErrPathEscape when one
// of them leads out. The lookup is a check at one moment: the tree may change
// afterwards, which is why the other methods do their own lookups through the
// root rather than trusting a resolved name. A path that does not exist yet
// resolves without error.
//
// A path holding a NUL byte, longer than [MaxPath] bytes, or with an element
// longer than [MaxName] bytes is refused with an error wrapping
// [fs.ErrInvalid].
func (f *FS) Resolve(p string) (string, error) {
	rel, err := f.resolve(p)
	if err != nil {
		return "", &fs.PathError{Op: "resolve", Path: p, Err: err}
	}
	if _, err := f.root.Stat(rel); err != nil && isEscape(err) {
		return "", &fs.PathError{Op: "resolve", Path: p, Err: ErrPathEscape}
	}
	return rel, nil
}

// ReadFile returns the content of the regular file name. Symbolic links are
// followed while they stay inside the root. It refuses directories, files
// larger than maxBytes (zero or less means [DefaultMaxRead]; the error wraps
// [ErrTooLarge]), and, with an error wrapping [ErrSpecialFile], hard-linked
// files, devices, named pipes and sockets. It never blocks on a named pipe.
func (f *FS) ReadFile(name string, maxBytes int64) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxRead
	}
	rel, err := f.resolve(name)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	data, _, err := f.read(rel, maxBytes)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return data, nil
}

// WriteFile replaces the content of the file name with data, atomically:
// it writes a temporary file in the same directory and renames it over
// name, so a reader sees the old content or the new, never a mix, and a
// failed write leaves the old file as it was. The write is not synced to
// stable storage.
//
// An existing file keeps its permission bits and perm is ignored; a new file
// gets perm (zero means 0o644), not reduced by the umask. Missing parent
// directories are created with mode 0o755. A symbolic link is followed while
// it stays inside the root, so the file it names is replaced and the link
// kept; a link that leads out is refused with [ErrPathEscape]. A hard-linked
// file, device, named pipe or socket is refused with [ErrSpecialFile]; a
// directory with an error for which errors.Is(err, syscall.EISDIR).
//
// The replaced file gets the owner of the calling process.
func (f *FS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := f.writeFile(name, data, perm); err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}

func (f *FS) writeFile(name string, data []byte, perm fs.FileMode) error {
	if perm == 0 {
		perm = defaultFilePerm
	}
	if perm&^fs.ModePerm != 0 {
		return fmt.Errorf("mode %v has bits other than permissions: %w", perm, fs.ErrInvalid)
	}
	rel, err := f.resolve(name)
	if err != nil {
		return err
	}
	real, err := f.realPath(rel)
	if err != nil {
		return err
	}
	if real == "." {
		return syscall.EISDIR
	}
	defer f.lock(real)()
	fi, err := f.root.Lstat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if dir := filepath.Dir(real); dir != "." {
			if err := f.root.MkdirAll(dir, defaultDirPerm); err != nil {
				return cause(err)
			}
		}
	case err != nil:
		return cause(err)
	case fi.Mode()&fs.ModeSymlink != 0:
		// Swapped in since realPath: the rename replaces the link itself.
	case fi.IsDir():
		return syscall.EISDIR
	default:
		if err := checkRegular(fi); err != nil {
			return err
		}
		perm = fi.Mode().Perm()
	}
	return f.writeAtomic(real, data, perm)
}

// Edit replaces the one occurrence of old in the file name with new and
// writes the result as [FS.WriteFile] does, keeping the file's mode. It
// returns the number of occurrences of old it found. When that is not
// exactly one, it changes nothing and returns an [*EditError] holding the
// count. An empty old is refused with an error wrapping [fs.ErrInvalid].
// The file must be a regular file of at most [DefaultMaxRead] bytes; other
// files are refused as by [FS.ReadFile], and a missing file with an error
// wrapping [fs.ErrNotExist]. When old equals new, Edit writes nothing.
func (f *FS) Edit(name, old, new string) (count int, err error) {
	count, err = f.edit(name, old, new)
	if err != nil {
		if _, ok := errors.AsType[*EditError](err); ok {
			return count, err
		}
		return count, &fs.PathError{Op: "edit", Path: name, Err: err}
	}
	return count, nil
}

func (f *FS) edit(name, old, new string) (int, error) {
	if old == "" {
		return 0, fmt.Errorf("old string is empty: %w", fs.ErrInvalid)
	}
	rel, err := f.resolve(name)
	if err != nil {
		return 0, err
	}
	real, err := f.realPath(rel)
	if err != nil {
		return 0, err
	}
	defer f.lock(real)()
	data, fi, err := f.read(real, DefaultMaxRead)
	if err != nil {
		return 0, err
	}
	content := string(data)
	n := strings.Count(content, old)
	if n != 1 {
		return n, &EditError{Path: name, Count: n}
	}
	if old == new {
		return 1, nil
	}
	return 1, f.writeAtomic(real, []byte(strings.Replace(content, old, new, 1)), fi.Mode().Perm())
}

// EditError is returned by [FS.Edit] when the old string does not occur
// exactly once in the file.
type EditError struct {
	Path  string // the name given to Edit
	Count int    // occurrences found: 0 (not found) or more than 1 (ambiguous)
}

func (e *EditError) Error() string {
	if e.Count == 0 {
		return "edit " + e.Path + ": old string not found; it must occur exactly once"
	}
	return "edit " + e.Path + ": old string found " + strconv.Itoa(e.Count) +
		" times; it must occur exactly once (include more surrounding text to make it unique)"
}

// List returns the entries of the directory dir, sorted by name. Symbolic
// links in dir are followed while they stay inside the root; the entries
// themselves are described by [FS.Stat] rules (links not followed).
func (f *FS) List(dir string) ([]Entry, error) {
	entries, err := f.list(dir)
	if err != nil {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: err}
	}
	return entries, nil
}

func (f *FS) list(dir string) ([]Entry, error) {
	rel, err := f.resolve(dir)
	if err != nil {
		return nil, err
	}
	d, err := f.root.OpenFile(rel, os.O_RDONLY|dirFlags|openFlags, 0)
	if err != nil {
		return nil, cause(err)
	}
	defer d.Close()
	des, err := d.ReadDir(-1)
	if err != nil {
		return nil, cause(err)
	}
	entries := make([]Entry, 0, len(des))
	for _, de := range des {
		fi, err := de.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the directory was read
		}
		if err != nil {
			return nil, cause(err)
		}
		entries = append(entries, entryOf(de.Name(), fi))
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return entries, nil
}

// Stat describes the file name without following a final symbolic link
// (symbolic links before it are followed while they stay inside the root).
func (f *FS) Stat(name string) (Entry, error) {
	rel, err := f.resolve(name)
	if err != nil {
		return Entry{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	fi, err := f.root.Lstat(rel)
	if err != nil {
		return Entry{}, &fs.PathError{Op: "stat", Path: name, Err: cause(err)}
	}
	return entryOf(filepath.Base(rel), fi), nil
}

// Remove removes the file or empty directory name. A symbolic link is
// removed itself, never its target. The root itself cannot be removed: that
// is refused with an error wrapping [fs.ErrInvalid].
func (f *FS) Remove(name string) error {
	return f.remove("remove", name, (*os.Root).Remove)
}

// RemoveAll removes name and everything it contains, as [os.RemoveAll] does:
// a missing name is not an error. It never follows symbolic links, neither
// name's nor any inside it, so nothing outside the root is removed. The root
// itself cannot be removed.
func (f *FS) RemoveAll(name string) error {
	return f.remove("removeall", name, (*os.Root).RemoveAll)
}

func (f *FS) remove(op, name string, rm func(*os.Root, string) error) error {
	rel, err := f.resolve(name)
	if err == nil && rel == "." {
		err = fmt.Errorf("cannot remove the root: %w", fs.ErrInvalid)
	}
	if err == nil {
		err = cause(rm(f.root, rel))
	}
	if err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// Mkdir creates the directory name and any missing parents, as
// [os.MkdirAll] does: an existing directory is not an error. New
// directories get perm (zero means 0o755), reduced by the umask. Symbolic
// links are followed while they stay inside the root.
func (f *FS) Mkdir(name string, perm fs.FileMode) error {
	if perm == 0 {
		perm = defaultDirPerm
	}
	rel, err := f.resolve(name)
	if err == nil && perm&^fs.ModePerm != 0 {
		err = fmt.Errorf("mode %v has bits other than permissions: %w", perm, fs.ErrInvalid)
	}
	if err == nil {
		err = cause(f.root.MkdirAll(rel, perm))
	}
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: name, Err: err}
	}
	return nil
}

// resolve is Resolve without the lookup: the tools look names up through
// the root when they use them.
func (f *FS) resolve(p string) (string, error) {
	if err := checkName(p); err != nil {
		return "", err
	}
	if p == "" {
		return ".", nil
	}
	c := filepath.Clean(p)
	if !filepath.IsAbs(c) {
		if c != "." && !filepath.IsLocal(c) {
			return "", ErrPathEscape
		}
		return c, nil
	}
	if rel, ok := within(f.dir, c); ok {
		return rel, nil
	}
	if rel, ok := within(f.realDir, c); ok {
		return rel, nil
	}
	if real, err := filepath.EvalSymlinks(c); err == nil {
		if rel, ok := within(f.realDir, real); ok {
			return rel, nil
		}
	}
	return "", ErrPathEscape
}

// within reports the path of the clean absolute path p relative to dir,
// when p is dir or below it.
func within(dir, p string) (string, bool) {
	if p == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if rest, ok := strings.CutPrefix(p, prefix); ok {
		return rest, true
	}
	return "", false
}

func checkName(p string) error {
	if strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("path contains a NUL byte: %w", fs.ErrInvalid)
	}
	if len(p) > MaxPath {
		return fmt.Errorf("path is %d bytes long, over the limit of %d: %w", len(p), MaxPath, fs.ErrInvalid)
	}
	for elem := range strings.SplitSeq(p, string(filepath.Separator)) {
		if len(elem) > MaxName {
			return fmt.Errorf("path element is %d bytes long, over the limit of %d: %w", len(elem), MaxName, fs.ErrInvalid)
		}
	}
	return nil
}

// realPath resolves every symbolic link in the clean relative path rel,
// refusing links that lead out of the root, so that the file can be replaced
// by a rename beside it. The result is a check at one moment; it is only
// ever used through the root, so a tree changed meanwhile can make the
// operation fail or land elsewhere inside the root, never outside.
func (f *FS) realPath(rel string) (string, error) {
	if rel == "." {
		return rel, nil
	}
	todo := strings.Split(rel, string(filepath.Separator))
	resolved := ""
	links := 0
	for len(todo) > 0 {
		elem := todo[0]
		todo = todo[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			if resolved == "" {
				return "", ErrPathEscape
			}
			resolved = filepath.Dir(resolved)
			if resolved == "." {
				resolved = ""
			}
			continue
		}
		next := filepath.Join(resolved, elem)
		fi, err := f.root.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// The rest cannot exist either; let the root judge it.
				rest := filepath.Join(append([]string{next}, todo...)...)
				if !filepath.IsLocal(rest) {
					return "", ErrPathEscape
				}
				return rest, nil
			}
			return "", cause(err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", syscall.ELOOP
		}
		target, err := f.root.Readlink(next)
		if err != nil {
			return "", cause(err)
		}
		if target == "" || filepath.IsAbs(target) {
			return "", ErrPathEscape
		}
		todo = append(strings.Split(target, string(filepath.Separator)), todo...)
	}
	if resolved == "" {
		return ".", nil
	}
	return resolved, nil
}

// read reads the regular file rel, refusing special files before opening
// them and again, on the open file, after.
func (f *FS) read(rel string, maxBytes int64) ([]byte, fs.FileInfo, error) {
	fi, err := f.root.Stat(rel)
	if err != nil {
		return nil, nil, cause(err)
	}
	if err := checkReadable(fi); err != nil {
		return nil, nil, err
	}
	file, err := f.root.OpenFile(rel, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, cause(err)
	}
	defer file.Close()
	fi, err = file.Stat()
	if err != nil {
		return nil, nil, cause(err)
	}
	if err := checkReadable(fi); err != nil {
		return nil, nil, err
	}
	if fi.Size() > maxBytes {
		return nil, nil, tooLarge(fi.Size(), maxBytes)
	}
	data := make([]byte, 0, fi.Size()+1)
	data, err = readAll(io.LimitReader(file, maxBytes+1), data)
	if err != nil {
		return nil, nil, cause(err)
	}
	if int64(len(data)) > maxBytes {
		return nil, nil, tooLarge(int64(len(data)), maxBytes)
	}
	return data, fi, nil
}

func readAll(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

func tooLarge(size, limit int64) error {
	return fmt.Errorf("%w: at least %d bytes, over the limit of %d", ErrTooLarge, size, limit)
}

func checkReadable(fi fs.FileInfo) error {
	if fi.IsDir() {
		return syscall.EISDIR
	}
	return checkRegular(fi)
}

// checkRegular refuses everything but a regular file with a single link.
func checkRegular(fi fs.FileInfo) error {
	var what string
	switch m := fi.Mode(); {
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO): reading or writing it could block or talk to another process"
	case m&fs.ModeSocket != 0:
		what = "a socket: it is not a file and could talk to another process"
	case m&fs.ModeDevice != 0:
		what = "a device node: it could reach the host's hardware or kernel"
	case m&fs.ModeSymlink != 0:
		what = "a symbolic link that could not be followed"
	case !m.IsRegular():
		what = "not a regular file"
	default:
		if n := nlink(fi); n > 1 {
			what = "a hard-linked file (" + strconv.FormatUint(n, 10) +
				" links): its other names may lie outside the sandbox"
		}
	}
	if what == "" {
		return nil
	}
	return &specialError{what}
}

type specialError struct{ what string }

func (e *specialError) Error() string        { return ErrSpecialFile.Error() + ": " + e.what }
func (e *specialError) Is(target error) bool { return target == ErrSpecialFile }

// writeAtomic writes data to a new temporary file beside the clean relative
// path real, sets its mode, and renames it over real.
func (f *FS) writeAtomic(real string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(real)
	var tmp string
	var file *os.File
	for range 10 {
		tmp = filepath.Join(dir, tempPrefix+strconv.FormatUint(rand.Uint64(), 36))
		file, err = f.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return cause(err)
	}
	defer func() {
		if err != nil {
			file.Close()
			f.root.Remove(tmp)
		}
	}()
	if _, err := file.Write(data); err != nil {
		return cause(err)
	}
	if err := file.Chmod(perm); err != nil {
		return cause(err)
	}
	if err := file.Close(); err != nil {
		return cause(err)
	}
	if err := f.root.Rename(tmp, real); err != nil {
		return cause(err)
	}
	return nil
}

// lock serializes writes to one file through f and returns the unlock.
func (f *FS) lock(real string) func() {
	mu := &f.locks[maphash.String(f.seed, real)%uint64(len(f.locks))]
	mu.Lock()
	return mu.Unlock
}

func entryOf(name string, fi fs.FileInfo) Entry {
	e := Entry{Name: name, Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
	switch m := fi.Mode(); {
	case m.IsRegular():
		e.Type = TypeFile
	case m.IsDir():
		e.Type = TypeDir
	case m&fs.ModeSymlink != 0:
		e.Type = TypeSymlink
	default:
		e.Type = TypeOther
	}
	return e
}

// cause strips the *fs.PathError or *os.LinkError os.Root wraps its errors
// in (the methods add their own, naming the caller's path, not the root's),
// and turns os.Root's escape error into ErrPathEscape.
func cause(err error) error {
	if err == nil {
		return nil
	}
	if isEscape(err) {
		return ErrPathEscape
	}
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	if le, ok := errors.AsType[*os.LinkError](err); ok {
		return le.Err
	}
	return err
}

// escapeErr is the unexported error value os.Root returns for a path that
// escapes it, captured by probeEscapeError.
var (
	escapeOnce sync.Once
	escapeErr  error
)

// probeEscapeError captures os.Root's escape error by asking root for "..".
func probeEscapeError(root *os.Root) {
	escapeOnce.Do(func() {
		_, err := root.Lstat("..")
		if pe, ok := errors.AsType[*fs.PathError](err); ok && pe.Err.Error() == escapeText {
			escapeErr = pe.Err
		}
	})
}

const escapeText = "path escapes from parent"

// isEscape reports whether err is os.Root refusing a path that leaves it.
func isEscape(err error) bool {
	if errors.Is(err, ErrPathEscape) || escapeErr != nil && errors.Is(err, escapeErr) {
		return true
	}
	var inner error
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		inner = pe.Err
	} else if le, ok := errors.AsType[*os.LinkError](err); ok {
		inner = le.Err
	}
	return inner != nil && inner.Error() == escapeText
}
