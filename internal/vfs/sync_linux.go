//go:build linux

package vfs

import (
	"os"
	"syscall"
)

// syncFile is fdatasync(2): it makes the file's data and the metadata
// needed to read it (its size) durable, skipping timestamps, which is all
// the stores need and cheaper than fsync.
func syncFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		// Control fails only on a closed file; say so as os.File.Sync
		// would.
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: os.ErrClosed}
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
