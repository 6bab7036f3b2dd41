// Package proctree runs a command as the leader of its own session and
// process group, so that the whole tree it starts can be killed at once, and
// collects its output with a head+tail cap.
//
// It is the process mechanism under the sandbox backends: a backend builds
// the command (bare, or wrapped in bubblewrap) and Run does the rest.
//
// # Security
//
// Killing the process group reaches every descendant that stays in it. A
// descendant that calls setsid(2) or setpgid(2) leaves the group and is not
// killed; only a PID namespace (bubblewrap's --unshare-pid, a container) or
// a cgroup contains that. Run never waits for such a process: once the
// group is killed it closes the output pipes after [Options.WaitDelay].
package proctree

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Reason says why a process ended.
type Reason string

// The reasons.
const (
	Exited    Reason = "exited"    // it exited by itself
	Signaled  Reason = "signaled"  // a signal it did not expect killed it
	TimedOut  Reason = "timed out" // the timeout passed and Run killed it
	Cancelled Reason = "cancelled" // the context was cancelled and Run killed it
)

// Options are Run's optional settings. A nil *Options means the defaults.
type Options struct {
	// Timeout kills the tree after this long; zero means no timeout
	// beyond ctx's.
	Timeout time.Duration
	// MaxOutput caps the bytes kept of stdout and of stderr, each: the
	// first half and the last half are kept, the middle dropped. Zero
	// means DefaultMaxOutput; negative means no cap.
	MaxOutput int
	// Stdout and Stderr, when set, also receive all output as it comes
	// (uncapped). They are written from Run's goroutines.
	Stdout, Stderr io.Writer
	// WaitDelay bounds how long Run waits for the output pipes to close
	// after the process exits or is killed (a descendant that left the
	// group may hold them). Zero means 250ms.
	WaitDelay time.Duration
}

// DefaultMaxOutput is the output cap when Options.MaxOutput is zero.
const DefaultMaxOutput = 1 << 20

// Result is what happened.
type Result struct {
	Reason   Reason
	ExitCode int            // -1 when killed by a signal
	Signal   syscall.Signal // the killing signal, or 0
	Duration time.Duration
	Stdout   []byte
	Stderr   []byte
	// Truncated is true when the middle of stdout or stderr was dropped.
	Truncated bool
}

// Run starts cmd (which must not have been started, and whose Stdout,
// Stderr, SysProcAttr.Setsid/Setpgid, Cancel and WaitDelay Run sets) in a
// new session and waits for it. When the timeout passes or ctx is done it
// sends SIGKILL to the whole process group and returns promptly with
// Reason TimedOut or Cancelled; the error is nil then, as for any exit. An
// error is returned only when the command could not be started.
func Run(ctx context.Context, cmd *exec.Cmd, opts *Options) (*Result, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxOutput == 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	if o.WaitDelay == 0 {
		o.WaitDelay = 250 * time.Millisecond
	}
	runCtx := ctx
	var cancelTimeout context.CancelFunc = func() {}
	if o.Timeout > 0 {
		runCtx, cancelTimeout = context.WithTimeout(ctx, o.Timeout)
	}
	defer cancelTimeout()

	stdout := &capped{max: o.MaxOutput, tee: o.Stdout}
	stderr := &capped{max: o.MaxOutput, tee: o.Stderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true // leader of a new session and process group
	cmd.SysProcAttr.Setpgid = false
	cmd.WaitDelay = o.WaitDelay

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	done := make(chan struct{})
	var killed sync.Once
	killTree := func() { killed.Do(func() { syscall.Kill(-pid, syscall.SIGKILL) }) }
	go func() {
		select {
		case <-runCtx.Done():
			killTree()
		case <-done:
		}
	}()
	waitErr := cmd.Wait()
	close(done)
	// The leader is gone; anything left in its group is killed too, so no
	// process of the tree outlives Run.
	killTree()

	res := &Result{Duration: time.Since(start), ExitCode: -1}
	res.Stdout, res.Truncated = stdout.bytes()
	var errTrunc bool
	res.Stderr, errTrunc = stderr.bytes()
	res.Truncated = res.Truncated || errTrunc
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Exited():
			res.ExitCode = ws.ExitStatus()
		case ws.Signaled():
			res.Signal = ws.Signal()
		}
	}
	switch {
	case ctx.Err() != nil && res.Signal == syscall.SIGKILL:
		res.Reason = Cancelled
	case runCtx.Err() != nil && res.Signal == syscall.SIGKILL:
		res.Reason = TimedOut
	case res.Signal != 0:
		res.Reason = Signaled
	default:
		res.Reason = Exited
	}
	if waitErr != nil && !errors.As(waitErr, new(*exec.ExitError)) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return res, waitErr
	}
	return res, nil
}

// capped keeps the first and last max/2 bytes written to it.
type capped struct {
	mu      sync.Mutex
	max     int
	tee     io.Writer
	head    []byte
	tail    []byte // ring of the last max-max/2 bytes
	tailPos int
	dropped bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tee != nil {
		c.tee.Write(p) // a failing observer must not stop the process
	}
	if c.max < 0 {
		c.head = append(c.head, p...)
		return len(p), nil
	}
	headMax := c.max / 2
	n := len(p)
	if room := headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tailMax := c.max - headMax
	for len(p) > 0 && tailMax > 0 {
		if len(c.tail) < tailMax {
			k := min(tailMax-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		// Full: overwrite the oldest bytes.
		c.dropped = true
		if len(p) >= tailMax {
			copy(c.tail, p[len(p)-tailMax:])
			c.tailPos = 0
			p = nil
			break
		}
		k := copy(c.tail[c.tailPos:], p)
		c.tailPos = (c.tailPos + k) % tailMax
		p = p[k:]
	}
	if len(p) > 0 {
		c.dropped = true
	}
	return n, nil
}

// bytes returns the kept output, with a marker where the middle was
// dropped, and whether it was.
func (c *capped) bytes() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := bytes.Clone(c.head)
	if c.dropped {
		out = append(out, "\n… [output truncated] …\n"...)
	}
	out = append(out, c.tail[c.tailPos:]...)
	out = append(out, c.tail[:c.tailPos]...)
	return out, c.dropped
}
