//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// linkCount returns the number of hard links of the file fi describes, or
// 0 when the system does not say.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
