package crashfs

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddockdev/paddock/internal/vfs"
)

// ErrCrashed is returned by every operation of an [FS], and of its files,
// once the FS has crashed.
var ErrCrashed = errors.New("crashfs: crashed")

// FS is an in-memory file system that can crash. The zero FS is an empty
// file system, like the one [New] returns. An FS is safe for concurrent use.
type FS struct {
	mu      sync.Mutex
	root    *node
	ops     int
	armed   bool
	crashAt int
	crashed bool
	images  []Image
}

var _ vfs.FS = (*FS)(nil)

// New returns an empty file system in which only the root "/" exists.
func New() *FS {
	return &FS{root: newDir(0o755)}
}

// node is an inode: a regular file or a directory.
type node struct {
	mode fs.FileMode // fs.ModeDir set for directories

	// Regular files.
	data    []byte // current
	durable []byte

	// Directories.
	children        map[string]*node // current entries
	durableChildren map[string]*node
}

func newDir(perm fs.FileMode) *node {
	return &node{
		mode:            fs.ModeDir | perm&fs.ModePerm,
		children:        map[string]*node{},
		durableChildren: map[string]*node{},
	}
}

func newFile(perm fs.FileMode) *node {
	return &node{mode: perm & fs.ModePerm}
}

func (n *node) isDir() bool { return n.mode.IsDir() }

// sync makes n durable: its data if a file, its entries if a directory.
func (n *node) sync() {
	if n.isDir() {
		n.durableChildren = maps.Clone(n.children)
	} else {
		n.durable = slices.Clone(n.data)
	}
}

// lock locks fsys, creating the root of a zero FS.
func (fsys *FS) lock() {
	fsys.mu.Lock()
	if fsys.root == nil {
		fsys.root = newDir(0o755)
	}
}

func (fsys *FS) unlock() { fsys.mu.Unlock() }

// Ops returns how many mutating operations have run.
func (fsys *FS) Ops() int {
	fsys.lock()
	defer fsys.unlock()
	return fsys.ops
}

// CrashAt arms a crash at the mutating operation with 0-based index n: that
// operation does not run (a Write lands half its buffer first) and the FS
// crashes instead. If n is below [FS.Ops] the crash never fires; a negative
// n disarms.
func (fsys *FS) CrashAt(n int) {
	fsys.lock()
	defer fsys.unlock()
	fsys.armed, fsys.crashAt = n >= 0, n
}

// CrashNow crashes the FS at once, taking the images of its current state,
// as after a power loss. It does nothing if the FS has crashed already.
func (fsys *FS) CrashNow() {
	fsys.lock()
	defer fsys.unlock()
	if !fsys.crashed {
		fsys.crash()
	}
}

// Crashed reports whether the FS has crashed.
func (fsys *FS) Crashed() bool {
	fsys.lock()
	defer fsys.unlock()
	return fsys.crashed
}

// Images returns the possible disk states left by the crash, eight of them
// (see the package documentation), or nil if the FS has not crashed.
func (fsys *FS) Images() []Image {
	fsys.lock()
	defer fsys.unlock()
	return slices.Clone(fsys.images)
}

func (fsys *FS) crash() {
	fsys.images = fsys.takeImages()
	fsys.crashed = true
	fsys.armed = false
}

// step starts a mutating operation. It returns ErrCrashed if the FS has
// crashed or crashes now; in the latter case it first calls torn, if not
// nil, to apply a partial effect of the operation.
func (fsys *FS) step(torn func()) error {
	if fsys.crashed {
		return ErrCrashed
	}
	if fsys.armed && fsys.ops == fsys.crashAt {
		if torn != nil {
			torn()
		}
		fsys.crash()
		return ErrCrashed
	}
	fsys.ops++
	return nil
}

// clean turns name into a cleaned absolute slash path.
func clean(op, name string) (string, error) {
	if name == "" {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return path.Clean("/" + filepath.ToSlash(name)), nil
}

func components(p string) []string {
	if p == "/" {
		return nil
	}
	return strings.Split(p[1:], "/")
}

// parent returns the directory holding the entry p (not the root) and the
// entry's name.
func (fsys *FS) parent(op, name, p string) (*node, string, error) {
	comps := components(p)
	dir := fsys.root
	for _, c := range comps[:len(comps)-1] {
		child := dir.children[c]
		switch {
		case child == nil:
			return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		case !child.isDir():
			return nil, "", &fs.PathError{Op: op, Path: name, Err: syscall.ENOTDIR}
		}
		dir = child
	}
	return dir, comps[len(comps)-1], nil
}

// lookup returns the inode named p.
func (fsys *FS) lookup(op, name, p string) (*node, error) {
	if p == "/" {
		return fsys.root, nil
	}
	dir, base, err := fsys.parent(op, name, p)
	if err != nil {
		return nil, err
	}
	n := dir.children[base]
	if n == nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// OpenFile opens a file like os.OpenFile. It is a counted operation when
// flag has O_CREATE or O_TRUNC.
func (fsys *FS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	fsys.lock()
	defer fsys.unlock()
	if fsys.crashed {
		return nil, ErrCrashed
	}
	if flag&(os.O_CREATE|os.O_TRUNC) != 0 {
		if err := fsys.step(nil); err != nil {
			return nil, err
		}
	}
	p, err := clean("open", name)
	if err != nil {
		return nil, err
	}
	var n *node
	if p == "/" {
		n = fsys.root
	} else {
		dir, base, err := fsys.parent("open", name, p)
		if err != nil {
			return nil, err
		}
		n = dir.children[base]
		if n == nil {
			if flag&os.O_CREATE == 0 {
				return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
			}
			n = newFile(perm)
			dir.children[base] = n
			flag &^= os.O_TRUNC // nothing to truncate
		} else if flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
		}
	}
	if n.isDir() {
		if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
		}
		if accessMode(flag) != os.O_RDONLY || flag&os.O_TRUNC != 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
		}
	}
	if flag&os.O_TRUNC != 0 {
		n.data = n.data[:0:0]
	}
	return &file{fsys: fsys, n: n, name: name, flag: flag}, nil
}

func accessMode(flag int) int {
	return flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
}

// Rename renames a file or directory like os.Rename, replacing a file at
// newpath. It is a counted operation.
func (fsys *FS) Rename(oldpath, newpath string) error {
	fsys.lock()
	defer fsys.unlock()
	if err := fsys.step(nil); err != nil {
		return err
	}
	linkErr := func(err error) error {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	op, err := clean("rename", oldpath)
	if err != nil {
		return linkErr(err)
	}
	np, err := clean("rename", newpath)
	if err != nil {
		return linkErr(err)
	}
	if op == "/" || np == "/" {
		return linkErr(syscall.EBUSY)
	}
	odir, obase, err := fsys.parent("rename", oldpath, op)
	if err != nil {
		return linkErr(err)
	}
	n := odir.children[obase]
	if n == nil {
		return linkErr(fs.ErrNotExist)
	}
	ndir, nbase, err := fsys.parent("rename", newpath, np)
	if err != nil {
		return linkErr(err)
	}
	if op == np {
		return nil
	}
	existing := ndir.children[nbase]
	switch {
	case existing != nil && existing.isDir():
		// os.Rename refuses to replace a directory.
		return linkErr(syscall.EEXIST)
	case existing != nil && n.isDir():
		return linkErr(syscall.ENOTDIR)
	case n.isDir() && strings.HasPrefix(np, op+"/"):
		return linkErr(syscall.EINVAL)
	}
	delete(odir.children, obase)
	ndir.children[nbase] = n
	return nil
}

// Remove removes a file or an empty directory like os.Remove. It is a
// counted operation.
func (fsys *FS) Remove(name string) error {
	fsys.lock()
	defer fsys.unlock()
	if err := fsys.step(nil); err != nil {
		return err
	}
	p, err := clean("remove", name)
	if err != nil {
		return err
	}
	if p == "/" {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.EBUSY}
	}
	dir, base, err := fsys.parent("remove", name, p)
	if err != nil {
		return err
	}
	n := dir.children[base]
	switch {
	case n == nil:
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	case n.isDir() && len(n.children) > 0:
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.ENOTEMPTY}
	}
	delete(dir.children, base)
	return nil
}

// RemoveAll removes name and everything under it like os.RemoveAll; a
// missing name is not an error. It is a counted operation.
func (fsys *FS) RemoveAll(name string) error {
	fsys.lock()
	defer fsys.unlock()
	if err := fsys.step(nil); err != nil {
		return err
	}
	p, err := clean("unlinkat", name)
	if err != nil {
		return nil // os.RemoveAll("") is a no-op
	}
	if p == "/" {
		return &fs.PathError{Op: "unlinkat", Path: name, Err: syscall.EBUSY}
	}
	dir, base, err := fsys.parent("unlinkat", name, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if n := dir.children[base]; n != nil {
		unlinkTree(n)
		delete(dir.children, base)
	}
	return nil
}

// unlinkTree removes the current entries under n, as RemoveAll unlinks
// every file before removing a directory. Durable entries stay.
func unlinkTree(n *node) {
	if !n.isDir() {
		return
	}
	for _, c := range n.children {
		unlinkTree(c)
	}
	clear(n.children)
}

// MkdirAll creates a directory and any missing parents like os.MkdirAll.
// New directories are not durable until their parents are synced. It is a
// counted operation.
func (fsys *FS) MkdirAll(name string, perm fs.FileMode) error {
	fsys.lock()
	defer fsys.unlock()
	if err := fsys.step(nil); err != nil {
		return err
	}
	p, err := clean("mkdir", name)
	if err != nil {
		return err
	}
	dir := fsys.root
	for i, c := range components(p) {
		child := dir.children[c]
		if child == nil {
			child = newDir(perm)
			dir.children[c] = child
		} else if !child.isDir() {
			prefix := "/" + strings.Join(components(p)[:i+1], "/")
			return &fs.PathError{Op: "mkdir", Path: prefix, Err: syscall.ENOTDIR}
		}
		dir = child
	}
	return nil
}

// Stat describes a file or directory like os.Stat. ModTime is zero.
func (fsys *FS) Stat(name string) (fs.FileInfo, error) {
	fsys.lock()
	defer fsys.unlock()
	if fsys.crashed {
		return nil, ErrCrashed
	}
	p, err := clean("stat", name)
	if err != nil {
		return nil, err
	}
	n, err := fsys.lookup("stat", name, p)
	if err != nil {
		return nil, err
	}
	return stat(path.Base(p), n), nil
}

// ReadDir lists a directory's current entries sorted by name, like
// os.ReadDir.
func (fsys *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	fsys.lock()
	defer fsys.unlock()
	if fsys.crashed {
		return nil, ErrCrashed
	}
	p, err := clean("open", name)
	if err != nil {
		return nil, err
	}
	n, err := fsys.lookup("open", name, p)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, &fs.PathError{Op: "readdirent", Path: name, Err: syscall.ENOTDIR}
	}
	entries := make([]fs.DirEntry, 0, len(n.children))
	for _, base := range slices.Sorted(maps.Keys(n.children)) {
		entries = append(entries, fs.FileInfoToDirEntry(stat(base, n.children[base])))
	}
	return entries, nil
}

// SyncDir makes the directory's current entries durable (see the package
// documentation). Like syncing an opened directory on the real system, it
// syncs a regular file's data if name is one. It is a counted operation.
func (fsys *FS) SyncDir(name string) error {
	fsys.lock()
	defer fsys.unlock()
	if err := fsys.step(nil); err != nil {
		return err
	}
	p, err := clean("open", name)
	if err != nil {
		return err
	}
	n, err := fsys.lookup("open", name, p)
	if err != nil {
		return err
	}
	n.sync()
	return nil
}

// ReadFile returns the current content of a regular file. It is meant for
// tests: it is not counted, and it still reads the state frozen at the crash
// after the FS has crashed.
func (fsys *FS) ReadFile(name string) ([]byte, error) {
	fsys.lock()
	defer fsys.unlock()
	p, err := clean("open", name)
	if err != nil {
		return nil, err
	}
	n, err := fsys.lookup("open", name, p)
	if err != nil {
		return nil, err
	}
	if n.isDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	return slices.Clone(n.data), nil
}

// WriteFile seeds a regular file with data, creating it with perm if needed
// and any missing parent directories with mode 0755. Unlike OpenFile and
// Write, it is meant for setting up tests: it is not counted, and the file,
// its content and its name (and every parent's name) are durable at once.
// After a crash it returns [ErrCrashed].
func (fsys *FS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	fsys.lock()
	defer fsys.unlock()
	if fsys.crashed {
		return ErrCrashed
	}
	p, err := clean("open", name)
	if err != nil {
		return err
	}
	if p == "/" {
		return &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	return fsys.putFile(name, p, data, perm)
}

// putDir returns the directory p, creating missing directories with perm;
// every directory on the way is linked durably into its parent.
func (fsys *FS) putDir(name string, comps []string, perm fs.FileMode) (*node, error) {
	dir := fsys.root
	for _, c := range comps {
		child := dir.children[c]
		if child == nil {
			child = newDir(perm)
			dir.children[c] = child
		} else if !child.isDir() {
			return nil, &fs.PathError{Op: "mkdir", Path: name, Err: syscall.ENOTDIR}
		}
		dir.durableChildren[c] = child
		dir = child
	}
	return dir, nil
}

// putFile writes a regular file durably, with durable parents.
func (fsys *FS) putFile(name, p string, data []byte, perm fs.FileMode) error {
	comps := components(p)
	dir, err := fsys.putDir(name, comps[:len(comps)-1], 0o755)
	if err != nil {
		return err
	}
	base := comps[len(comps)-1]
	n := dir.children[base]
	if n == nil {
		n = newFile(perm)
		dir.children[base] = n
	} else if n.isDir() {
		return &fs.PathError{Op: "open", Path: name, Err: syscall.EISDIR}
	}
	dir.durableChildren[base] = n
	n.data = slices.Clone(data)
	n.durable = slices.Clone(data)
	return nil
}

// Walk calls fn, in path order, with the path and current content of every
// regular file in the current namespace. fn may keep data. Walk is meant for
// tests: it still walks the state frozen at the crash after the FS has
// crashed. fn is called without the FS locked.
func (fsys *FS) Walk(fn func(path string, data []byte)) {
	type entry struct {
		path string
		data []byte
	}
	var files []entry
	fsys.lock()
	walkTree(fsys.root, "/", false, func(p string, n *node) {
		if !n.isDir() {
			files = append(files, entry{p, slices.Clone(n.data)})
		}
	})
	fsys.unlock()
	for _, f := range files {
		fn(f.path, f.data)
	}
}

// walkTree calls fn for n, at path p, and everything under it, in path
// order, following current entries or, if durable, durable ones. A
// directory reached a second time (durable entries can form a cycle after
// renames of directories) is skipped.
func walkTree(n *node, p string, durable bool, fn func(p string, n *node)) {
	visited := map[*node]bool{}
	var walk func(n *node, p string)
	walk = func(n *node, p string) {
		fn(p, n)
		if !n.isDir() {
			return
		}
		visited[n] = true
		entries := n.children
		if durable {
			entries = n.durableChildren
		}
		for _, base := range slices.Sorted(maps.Keys(entries)) {
			c := entries[base]
			if c.isDir() && visited[c] {
				continue
			}
			walk(c, path.Join(p, base))
		}
	}
	walk(n, p)
}

// stat describes n under the name base.
func stat(base string, n *node) fs.FileInfo {
	return &fileInfo{name: base, size: int64(len(n.data)), mode: n.mode}
}

type fileInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.size }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *fileInfo) ModTime() time.Time { return time.Time{} }
func (fi *fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any           { return nil }

// file is an open file: a handle on an inode, which it keeps across Rename
// and Remove of its name.
type file struct {
	fsys   *FS
	n      *node
	name   string // as opened
	flag   int
	off    int64
	closed bool
}

// check returns the error for an operation op on f, which must be locked,
// if f cannot run it at all.
func (f *file) check(op string) error {
	if f.fsys.crashed {
		return ErrCrashed
	}
	if f.closed {
		return &fs.PathError{Op: op, Path: f.name, Err: fs.ErrClosed}
	}
	return nil
}

func (f *file) Read(p []byte) (int, error) {
	f.fsys.lock()
	defer f.fsys.unlock()
	if err := f.check("read"); err != nil {
		return 0, err
	}
	switch {
	case accessMode(f.flag) == os.O_WRONLY:
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EBADF}
	case f.n.isDir():
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: syscall.EISDIR}
	case len(p) == 0:
		return 0, nil
	case f.off >= int64(len(f.n.data)):
		return 0, io.EOF
	}
	n := copy(p, f.n.data[f.off:])
	f.off += int64(n)
	return n, nil
}

func (f *file) Write(p []byte) (int, error) {
	f.fsys.lock()
	defer f.fsys.unlock()
	if err := f.check("write"); err != nil {
		return 0, err
	}
	if accessMode(f.flag) == os.O_RDONLY {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: syscall.EBADF}
	}
	off := f.off
	if f.flag&os.O_APPEND != 0 {
		off = int64(len(f.n.data))
	}
	if err := f.fsys.step(func() { f.n.writeAt(p[:len(p)/2], off) }); err != nil {
		return 0, err
	}
	f.n.writeAt(p, off)
	f.off = off + int64(len(p))
	return len(p), nil
}

// writeAt writes p at off into n's current data, zero-filling any gap.
func (n *node) writeAt(p []byte, off int64) {
	if len(p) == 0 {
		return
	}
	end := int(off) + len(p)
	if end > len(n.data) {
		n.resize(end)
	}
	copy(n.data[off:], p)
}

// resize sets the length of n's current data, zero-filling any growth.
func (n *node) resize(size int) {
	if size <= len(n.data) {
		n.data = n.data[:size]
		return
	}
	n.data = append(n.data, make([]byte, size-len(n.data))...)
}

func (f *file) Seek(offset int64, whence int) (int64, error) {
	f.fsys.lock()
	defer f.fsys.unlock()
	if err := f.check("seek"); err != nil {
		return 0, err
	}
	var off int64
	switch whence {
	case io.SeekStart:
		off = offset
	case io.SeekCurrent:
		off = f.off + offset
	case io.SeekEnd:
		off = int64(len(f.n.data)) + offset
	default:
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "seek", Path: f.name, Err: syscall.EINVAL}
	}
	f.off = off
	return off, nil
}

func (f *file) Close() error {
	f.fsys.lock()
	defer f.fsys.unlock()
	err := f.check("close")
	f.closed = true
	return err
}

// Sync makes the file's current content durable; for a directory opened
// read-only it is SyncDir. It is a counted operation.
func (f *file) Sync() error {
	f.fsys.lock()
	defer f.fsys.unlock()
	if err := f.check("sync"); err != nil {
		return err
	}
	if err := f.fsys.step(nil); err != nil {
		return err
	}
	f.n.sync()
	return nil
}

// Truncate changes the file's current size. It is a counted operation.
func (f *file) Truncate(size int64) error {
	f.fsys.lock()
	defer f.fsys.unlock()
	if err := f.check("truncate"); err != nil {
		return err
	}
	if accessMode(f.flag) == os.O_RDONLY || size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: syscall.EINVAL}
	}
	if err := f.fsys.step(nil); err != nil {
		return err
	}
	f.n.resize(int(size))
	return nil
}

func (f *file) Stat() (fs.FileInfo, error) {
	f.fsys.lock()
	defer f.fsys.unlock()
	if err := f.check("stat"); err != nil {
		return nil, err
	}
	return stat(filepath.Base(f.name), f.n), nil
}
