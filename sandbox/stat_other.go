//go:build !unix

package sandbox

import "io/fs"

// linkCount returns 0: this system's FileInfo does not carry a link count,
// so hard links cannot be detected here.
func linkCount(fs.FileInfo) uint64 { return 0 }
