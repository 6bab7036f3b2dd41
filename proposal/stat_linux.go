package proposal

import (
	"syscall"
	"time"
)

// lstatQuick returns a file's size, modification time and permission bits
// without allocating a FileInfo: Create stats every file of work/.
func lstatQuick(name string) (size int64, mtime time.Time, perm uint32, err error) {
	var st syscall.Stat_t
	for {
		err = syscall.Lstat(name, &st)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, time.Time{}, 0, err
	}
	return st.Size, time.Unix(st.Mtim.Sec, st.Mtim.Nsec), st.Mode & 0o7777, nil
}

// openNonblock keeps Create's open of a file a worker swapped for a FIFO
// from blocking.
const openNonblock = syscall.O_NONBLOCK
