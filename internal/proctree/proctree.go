// Package proctree runs a command as the leader of its own session and
// process group, so that the whole tree it starts can be killed at once.
//
// It is the process mechanism under the sandbox backends: a backend builds
// the command (bare, or wrapped in bubblewrap) and Run starts it, kills its
// tree when the context is done, and reports how it ended.
//
// # Security
//
// Killing the process group reaches every descendant that stays in it. A
// descendant that calls setsid(2) or setpgid(2) leaves the group and is not
// killed; only a PID namespace (bubblewrap's --unshare-pid, a container) or
// a cgroup contains that. Run never waits long for such a process: once the
// leader has exited and the rest of its group is killed, it waits at most
// WaitDelay for the output pipes to close, then closes them.
package proctree

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultWaitDelay bounds how long Run waits for the output pipes to close
// after the leader exits and the rest of its group is killed, when the
// caller sets no cmd.WaitDelay. Only a process that left the group can
// hold them open that long.
const DefaultWaitDelay = 2 * time.Second

// Result is how the process ended.
type Result struct {
	ExitCode int            // -1 when a signal ended it
	Signal   syscall.Signal // the signal that ended it, or 0
	// Killed is true when Run killed the tree because ctx was done.
	Killed   bool
	Duration time.Duration
}

// Run starts cmd in a new session (it sets cmd.SysProcAttr.Setsid,
// cmd.Cancel is not used) and waits for it. When ctx is done it sends
// SIGKILL to the whole process group and returns promptly with Killed set;
// the error is nil then, as for any exit. After the leader exits, whatever is
// left in its group is killed too, so no process of the group outlives Run.
// An error means the command could not be started or waited for.
//
// cmd's Stdout and Stderr are the caller's; if they are not *os.File, Run
// copies into them from its own pipes and returns once the copies are done:
// after the leader exits and the rest of the group is killed, every writer
// of the pipes is gone, so nothing is lost however slowly the copies run.
// Only a process that left the group keeps them open; Run closes them after
// cmd.WaitDelay (default DefaultWaitDelay) then.
func Run(ctx context.Context, cmd *exec.Cmd) (*Result, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true // leader of a new session and process group
	cmd.SysProcAttr.Setpgid = false
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	out, err := newOutputs(cmd)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		out.abort()
		return nil, err
	}
	out.started()
	pid := cmd.Process.Pid
	var killOnce sync.Once
	killed := false
	killTree := func(byCtx bool) {
		killOnce.Do(func() {
			killed = byCtx
			syscall.Kill(-pid, syscall.SIGKILL)
		})
	}
	done := make(chan struct{})
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		select {
		case <-ctx.Done():
			killTree(true)
		case <-done:
		}
	}()
	waitErr := cmd.Wait()
	close(done)
	<-watcher
	killTree(false) // the rest of the group, if any
	out.wait(cmd.WaitDelay)

	res := &Result{ExitCode: -1, Killed: killed, Duration: time.Since(start)}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Exited():
			res.ExitCode = ws.ExitStatus()
		case ws.Signaled():
			res.Signal = ws.Signal()
		}
	}
	if waitErr != nil && !errors.As(waitErr, new(*exec.ExitError)) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return res, waitErr
	}
	return res, nil
}

// outputs are the pipes Run copies a command's output through, in place of
// exec's: exec's copies end WaitDelay after the leader exits even when they
// are only slow (a loaded machine, a slow writer), losing output. Run's
// copies end at the end of the pipes. Once the leader has exited and the
// group is killed, a pipe whose writers are all gone is read to its end
// however slowly; a pipe still held open WaitDelay later (by a process that
// left the group) is closed, whatever that process still writes.
type outputs struct {
	readers []*os.File // Run's ends
	writers []*os.File // the child's ends, closed once it has them
	copies  sync.WaitGroup
	copy    []func()
}

func newOutputs(cmd *exec.Cmd) (*outputs, error) {
	o := &outputs{}
	pipe := func(w io.Writer) (*os.File, error) {
		r, pw, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		o.readers = append(o.readers, r)
		o.writers = append(o.writers, pw)
		o.copy = append(o.copy, func() {
			defer o.copies.Done()
			defer r.Close()
			o.drain(r, w)
		})
		return pw, nil
	}
	if w := cmd.Stdout; w != nil {
		if _, ok := w.(*os.File); !ok {
			pw, err := pipe(w)
			if err != nil {
				return nil, err
			}
			cmd.Stdout = pw
			if sameWriter(cmd.Stderr, w) {
				cmd.Stderr = pw
			}
		}
	}
	if w := cmd.Stderr; w != nil {
		if _, ok := w.(*os.File); !ok {
			pw, err := pipe(w)
			if err != nil {
				o.abort()
				return nil, err
			}
			cmd.Stderr = pw
		}
	}
	return o, nil
}

// drain copies r into w until r ends. After a write error it keeps
// reading (and drops the data), so the command never blocks on a full pipe.
func (o *outputs) drain(r *os.File, w io.Writer) {
	buf := make([]byte, 32<<10)
	var werr error
	for {
		n, err := r.Read(buf)
		if n > 0 && werr == nil {
			_, werr = w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// sameWriter reports whether a and b are the same writer, as exec decides
// to share one pipe (a writer type that cannot be compared is not).
func sameWriter(a, b io.Writer) (same bool) {
	defer func() { recover() }()
	return a != nil && a == b
}

// started closes the child's ends and starts the copies.
func (o *outputs) started() {
	for _, w := range o.writers {
		w.Close()
	}
	o.copies.Add(len(o.copy))
	for _, f := range o.copy {
		go f()
	}
}

// abort closes everything when the command did not start.
func (o *outputs) abort() {
	for _, f := range append(o.readers, o.writers...) {
		f.Close()
	}
}

// wait waits for the copies. A pipe that still has a writer after delay
// (a process outside the group) is closed; the others are read to their end.
func (o *outputs) wait(delay time.Duration) {
	deadline := time.Now().Add(delay)
	for _, r := range o.readers {
		if !hungUp(r, time.Until(deadline)) {
			r.SetReadDeadline(time.Now())
		}
	}
	o.copies.Wait()
}

// hungUp reports whether every writer of the pipe r has closed it, waiting
// up to d for that. Polling for no event waits for the hang-up alone, even
// while data is still buffered. A pipe already closed by its copy counts as
// hung up.
func hungUp(r *os.File, d time.Duration) bool {
	rc, err := r.SyscallConn()
	if err != nil {
		return true
	}
	hup := true
	cerr := rc.Control(func(fd uintptr) {
		for {
			ms := int(max(d, 0) / time.Millisecond)
			start := time.Now()
			fds := []unix.PollFd{{Fd: int32(fd)}}
			n, err := unix.Poll(fds, ms)
			if err == unix.EINTR {
				d -= time.Since(start)
				continue
			}
			hup = err != nil || n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0
			return
		}
	})
	return cerr != nil || hup
}
