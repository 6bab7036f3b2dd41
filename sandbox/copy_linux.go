package sandbox

import (
	"io/fs"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// ficlone is the FICLONE ioctl request (_IOW(0x94, 9, int)), which makes dst
// share src's extents on file systems with reflinks (Btrfs, XFS, bcachefs).
const ficlone = 0x40049409

// openSourceFlags are added when opening a source file: O_NONBLOCK so that
// a FIFO swapped in after the walk cannot block the open (for regular files
// it means nothing).
const openSourceFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// dstFile is a destination file. On Linux it is a bare descriptor: package
// os would try to register every new file with the poller, which costs a
// failing epoll_ctl per file, and Prepare creates two files per file.
type dstFile struct {
	fd   int
	name string
}

// createDst creates the new file name with permission bits perm (subject to
// the umask).
func createDst(name string, perm fs.FileMode) (dstFile, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDWR|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, uint32(perm))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return dstFile{fd: -1}, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return dstFile{fd: fd, name: name}, nil
	}
}

func (d dstFile) err(op string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: d.name, Err: err}
}

func (d dstFile) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := syscall.Write(d.fd, b[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, d.err("write", err)
		}
		n += m
	}
	return n, nil
}

func (d dstFile) Close() error { return d.err("close", syscall.Close(d.fd)) }

func (d dstFile) Chmod(mode fs.FileMode) error {
	return d.err("fchmod", syscall.Fchmod(d.fd, uint32(mode)))
}

func (d dstFile) Truncate(size int64) error {
	return d.err("ftruncate", syscall.Ftruncate(d.fd, size))
}

// utimeOmit is UTIME_OMIT: leave that time as it is.
const utimeOmit = (1 << 30) - 2

// SetModTime sets the modification time, leaving the access time, through
// utimensat(fd, NULL, …), which needs no path lookup.
func (d dstFile) SetModTime(mtime time.Time) error {
	ts := [2]syscall.Timespec{{Nsec: utimeOmit}, syscall.NsecToTimespec(mtime.UnixNano())}
	_, _, errno := syscall.Syscall6(syscall.SYS_UTIMENSAT, uintptr(d.fd), 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	if errno != 0 {
		return d.err("utimensat", errno)
	}
	return nil
}

// cloneFrom makes d a reflink copy of src. It returns errUnsupported when
// the file system cannot.
func (d dstFile) cloneFrom(src *os.File) error {
	rc, err := src.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(sfd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, uintptr(d.fd), ficlone, sfd)
	}); err != nil {
		return err
	}
	return d.cloneErr(errno)
}

// cloneFromDst makes d a reflink copy of the destination file s.
func (d dstFile) cloneFromDst(s dstFile) error {
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(d.fd), ficlone, uintptr(s.fd))
	return d.cloneErr(errno)
}

func (d dstFile) cloneErr(errno syscall.Errno) error {
	switch errno {
	case 0:
		return nil
	case syscall.EOPNOTSUPP, syscall.ENOTTY, syscall.EXDEV, syscall.EINVAL, syscall.ENOSYS:
		return errUnsupported
	}
	return d.err("ioctl FICLONE", errno)
}
