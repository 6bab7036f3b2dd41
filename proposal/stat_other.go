//go:build !linux

package proposal

import (
	"os"
	"time"
)

// lstatQuick returns a file's size, modification time and permission bits.
func lstatQuick(name string) (size int64, mtime time.Time, perm uint32, err error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return 0, time.Time{}, 0, err
	}
	return fi.Size(), fi.ModTime(), uint32(fi.Mode().Perm()), nil
}

// openNonblock is 0 where O_NONBLOCK is not portable.
const openNonblock = 0
