//go:build !unix

package rootfs

import "io/fs"

const (
	openFlags = 0
	dirFlags  = 0
)

// nlink returns 1: hard links are not detected on this system.
func nlink(fs.FileInfo) uint64 { return 1 }
