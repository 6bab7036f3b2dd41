package proctree

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var ctx = context.Background()

func sh(script string) *exec.Cmd { return exec.Command("/bin/sh", "-c", script) }

func TestExitCodesAndSignals(t *testing.T) {
	tests := []struct {
		script string
		reason Reason
		code   int
		sig    syscall.Signal
	}{
		{"exit 0", Exited, 0, 0},
		{"exit 3", Exited, 3, 0},
		{"kill -TERM $$", Signaled, -1, syscall.SIGTERM},
		{"kill -KILL $$", Signaled, -1, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			res, err := Run(ctx, sh(tt.script), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != tt.reason || res.ExitCode != tt.code || res.Signal != tt.sig {
				t.Errorf("got %s code=%d sig=%v, want %s code=%d sig=%v", res.Reason, res.ExitCode, res.Signal, tt.reason, tt.code, tt.sig)
			}
		})
	}
	if _, err := Run(ctx, exec.Command("/nonexistent/binary"), nil); err == nil {
		t.Error("starting a missing binary did not fail")
	}
}

func TestOutputAndStreaming(t *testing.T) {
	var streamed bytes.Buffer
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return streamed.Write(p) })
	res, err := Run(ctx, sh("echo out; echo err >&2"), &Options{Stdout: w})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" || res.Truncated {
		t.Errorf("stdout %q stderr %q truncated %v", res.Stdout, res.Stderr, res.Truncated)
	}
	if streamed.String() != "out\n" {
		t.Errorf("streamed %q", streamed.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestTruncationKeepsHeadAndTail(t *testing.T) {
	// 100,000 numbered lines; keep 1,000 bytes.
	res, err := Run(ctx, sh("seq 1 100000"), &Options{MaxOutput: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	if !res.Truncated || !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "99999\n100000\n") || !strings.Contains(out, "[output truncated]") {
		t.Errorf("truncated=%v output head %q tail %q", res.Truncated, out[:20], out[len(out)-20:])
	}
	if len(out) > 1100 {
		t.Errorf("kept %d bytes for a cap of 1000", len(out))
	}
	for _, c := range []int{1, 7, 999, 5000} {
		cp := &capped{max: 100}
		var all []byte
		for i := range c {
			b := []byte(strconv.Itoa(i) + ",")
			all = append(all, b...)
			cp.Write(b)
		}
		got, trunc := cp.bytes()
		if trunc != (len(all) > 100) {
			t.Errorf("%d writes: truncated=%v for %d bytes", c, trunc, len(all))
		}
		if !trunc && !bytes.Equal(got, all) {
			t.Errorf("%d writes: %q, want %q", c, got, all)
		}
		if trunc && (!bytes.HasPrefix(got, all[:50]) || !bytes.HasSuffix(got, all[len(all)-50:])) {
			t.Errorf("%d writes: head/tail wrong: %q", c, got)
		}
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func TestTimeoutKillsTheWholeTree(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		opts   Options
		reason Reason
	}{
		{"timeout", func() (context.Context, context.CancelFunc) { return context.WithCancel(ctx) }, Options{Timeout: 300 * time.Millisecond}, TimedOut},
		{"cancel", func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, 300*time.Millisecond) }, Options{}, Cancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, cancel := tc.ctx()
			defer cancel()
			var pids bytes.Buffer
			var mu sync.Mutex
			tc.opts.Stdout = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return pids.Write(p) })
			// A child, a grandchild in a subshell, and a great-grandchild that
			// ignores SIGTERM and holds the output pipe.
			script := `sleep 100 & echo $!; ( sleep 100 & echo $!; ( trap '' TERM; sleep 100 ) & echo $!; wait ) & wait`
			start := time.Now()
			res, err := Run(c, sh(script), &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("Run took %v to return after the kill", d)
			}
			if res.Reason != tc.reason || res.Signal != syscall.SIGKILL {
				t.Errorf("reason %s signal %v, want %s by SIGKILL", res.Reason, res.Signal, tc.reason)
			}
			mu.Lock()
			fields := strings.Fields(pids.String())
			mu.Unlock()
			if len(fields) < 2 {
				t.Fatalf("tree printed %q", fields)
			}
			deadline := time.Now().Add(2 * time.Second)
			for _, f := range fields {
				pid, _ := strconv.Atoi(f)
				for alive(pid) && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if alive(pid) {
					t.Errorf("process %d of the tree survived", pid)
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}

func TestEscapedDescendantDoesNotBlockRun(t *testing.T) {
	// setsid leaves the group: Run cannot kill it, but must not wait for it.
	script := `setsid sh -c 'echo $$; exec sleep 100' & sleep 0.2; exit 0`
	start := time.Now()
	res, err := Run(ctx, sh(script), &Options{WaitDelay: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run waited %v for a process outside its group", d)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout))); err == nil {
		syscall.Kill(pid, syscall.SIGKILL) // clean up what proctree documents it cannot reach
	}
	if res.Reason != Exited || res.ExitCode != 0 {
		t.Errorf("got %s %d", res.Reason, res.ExitCode)
	}
}
