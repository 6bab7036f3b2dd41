//go:build unix

package rootfs

import (
	"io/fs"
	"syscall"
)

// openFlags are added when opening an existing file: never block on a named
// pipe, never make a terminal the controlling one.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY

// dirFlags are added when opening a directory to list it.
const dirFlags = syscall.O_DIRECTORY

// nlink returns the number of hard links to the file fi describes.
func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
