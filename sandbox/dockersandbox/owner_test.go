package dockersandbox_test

import (
	"io/fs"
	"syscall"
)

func owner(fi fs.FileInfo) (uid, gid int) {
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}
