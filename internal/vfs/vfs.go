// Package vfs is the small file-system interface that paddock's durable
// stores write through, so that tests can swap the real operating system for
// a fault-injecting one (see internal/crashfs).
//
// Only the operations the stores need are here. Every path is a host path;
// implementations do not resolve symlinks specially.
package vfs

import (
	"bytes"
	"io"
	"io/fs"
	"os"
)

// File is an open file.
type File interface {
	io.Reader
	io.Writer
	io.Seeker
	io.Closer
	// Sync commits the file's contents and size to stable storage (on the
	// operating system, with fdatasync where there is one).
	Sync() error
	// Truncate changes the file's size. It does not move the offset.
	Truncate(size int64) error
	Stat() (fs.FileInfo, error)
}

// FS is the file system.
type FS interface {
	// OpenFile is os.OpenFile.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Rename is os.Rename: atomic replacement of newpath.
	Rename(oldpath, newpath string) error
	// Remove is os.Remove.
	Remove(name string) error
	// RemoveAll is os.RemoveAll.
	RemoveAll(name string) error
	// MkdirAll is os.MkdirAll.
	MkdirAll(name string, perm fs.FileMode) error
	// Stat is os.Stat.
	Stat(name string) (fs.FileInfo, error)
	// ReadDir is os.ReadDir.
	ReadDir(name string) ([]fs.DirEntry, error)
	// SyncDir makes the directory's entries (creations, renames, removals)
	// durable.
	SyncDir(name string) error
}

// OS is the real operating system's file system.
var OS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // avoid a typed-nil File
	}
	return osFile{f}, nil
}

// osFile is an *os.File whose Sync is fdatasync where the system has it.
type osFile struct{ *os.File }

func (f osFile) Sync() error { return syncFile(f.File) }

func (osFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) RemoveAll(name string) error                  { return os.RemoveAll(name) }
func (osFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	return joinClose(err, d)
}

func joinClose(err error, c io.Closer) error {
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile reads a whole file through fsys.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		buf.Grow(int(fi.Size()) + bytes.MinRead) // room to see EOF without growing
	}
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}

// WriteFileAtomic replaces name with data so that, after a crash at any
// point, name holds either its old contents or data, never a mix: it writes a
// temporary file beside name, syncs it (when sync is true), renames it over
// name, and syncs the directory (when sync is true).
func WriteFileAtomic(fsys FS, name string, data []byte, perm fs.FileMode, sync bool) (err error) {
	tmp := name + ".tmp"
	// A stale temporary file from an interrupted write would keep its old
	// mode under O_TRUNC; start from a new file so perm holds.
	fsys.Remove(tmp)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			fsys.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err == nil && sync {
		err = f.Sync()
	}
	if err = joinClose(err, f); err != nil {
		return err
	}
	if err = fsys.Rename(tmp, name); err != nil {
		return err
	}
	if sync {
		return fsys.SyncDir(dirOf(name))
	}
	return nil
}

func dirOf(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if os.IsPathSeparator(name[i]) {
			if i == 0 {
				return name[:1]
			}
			return name[:i]
		}
	}
	return "."
}
