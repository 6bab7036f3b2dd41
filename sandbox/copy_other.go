//go:build !linux

package sandbox

import (
	"io/fs"
	"os"
	"time"
)

// openSourceFlags are added when opening a source file.
const openSourceFlags = 0

// dstFile is a destination file.
type dstFile struct{ *os.File }

// createDst creates the new file name with permission bits perm (subject to
// the umask).
func createDst(name string, perm fs.FileMode) (dstFile, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	return dstFile{f}, err
}

// SetModTime sets the modification time, leaving the access time.
func (d dstFile) SetModTime(mtime time.Time) error {
	return os.Chtimes(d.Name(), time.Time{}, mtime)
}

// cloneFrom reports errUnsupported: reflinks are only tried on Linux.
func (d dstFile) cloneFrom(src *os.File) error { return errUnsupported }

func (d dstFile) cloneFromDst(s dstFile) error { return errUnsupported }
