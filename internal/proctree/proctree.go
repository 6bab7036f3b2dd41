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
// a cgroup contains that. Run never waits for such a process: once the
// leader has exited it closes the output pipes after WaitDelay.
package proctree

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// DefaultWaitDelay bounds how long Run waits for the output pipes to close
// after the leader exits, when the caller sets no cmd.WaitDelay.
const DefaultWaitDelay = 250 * time.Millisecond

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
// cmd's Stdout and Stderr are the caller's; if they are not *os.File, exec
// copies into them from goroutines, and Run returns once those are done or
// cmd.WaitDelay (default DefaultWaitDelay) has passed.
func Run(ctx context.Context, cmd *exec.Cmd) (*Result, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true // leader of a new session and process group
	cmd.SysProcAttr.Setpgid = false
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
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
