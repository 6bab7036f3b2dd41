//go:build unix

package workspace

import (
	"errors"
	"os"
	"syscall"
)

// flockFile takes a non-blocking exclusive flock(2) on path. The lock is
// held by the open file description, so it conflicts with another open of
// the same file in this process too, and the kernel drops it when the
// process dies: a crashed holder never leaves a stale lock.
func flockFile(path string) (func() error, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, &os.PathError{Op: "flock", Path: path, Err: err}
	}
	// A Delete may have moved the directory between our open and our
	// lock: then the file we locked is no longer the one at path.
	held, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, ErrLocked
	}
	return f.Close, nil
}
