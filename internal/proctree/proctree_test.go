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
		code   int
		sig    syscall.Signal
	}{
		{"exit 0", 0, 0},
		{"exit 3", 3, 0},
		{"kill -TERM $$", -1, syscall.SIGTERM},
		{"kill -KILL $$", -1, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			res, err := Run(ctx, sh(tt.script))
			if err != nil {
				t.Fatal(err)
			}
			if res.Killed || res.ExitCode != tt.code || res.Signal != tt.sig {
				t.Errorf("got killed=%v code=%d sig=%v, want code=%d sig=%v", res.Killed, res.ExitCode, res.Signal, tt.code, tt.sig)
			}
		})
	}
	if _, err := Run(ctx, exec.Command("/nonexistent/binary")); err == nil {
		t.Error("starting a missing binary did not fail")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

func TestCancelKillsTheWholeTree(t *testing.T) {
	c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	var pids bytes.Buffer
	var mu sync.Mutex
	cmd := sh(`sleep 100 & echo $!; ( sleep 100 & echo $!; ( trap '' TERM; sleep 100 ) & echo $!; wait ) & wait`)
	// A child, a grandchild in a subshell, and a great-grandchild that
	// ignores SIGTERM and holds the output pipe.
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return pids.Write(p) })
	start := time.Now()
	res, err := Run(c, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Run took %v to return after the kill", d)
	}
	if !res.Killed || res.Signal != syscall.SIGKILL {
		t.Errorf("killed=%v signal=%v, want killed by SIGKILL", res.Killed, res.Signal)
	}
	mu.Lock()
	fields := strings.Fields(pids.String())
	mu.Unlock()
	if len(fields) < 3 {
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
}

func TestLeftoverGroupKilledAfterExit(t *testing.T) {
	// The leader exits at once, leaving a background child in its group.
	cmd := sh(`sleep 100 & echo $!`)
	var out bytes.Buffer
	cmd.Stdout = &out
	res, err := Run(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if res.Killed || res.ExitCode != 0 {
		t.Errorf("killed=%v code=%d", res.Killed, res.ExitCode)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(out.String()))
	deadline := time.Now().Add(2 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("background child %d outlived Run", pid)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func TestEscapedDescendantDoesNotBlockRun(t *testing.T) {
	// setsid leaves the group: Run cannot kill it, but must not wait for it.
	script := `setsid sh -c 'echo $$; exec sleep 100' & sleep 0.2; exit 0`
	start := time.Now()
	cmd := sh(script)
	var out bytes.Buffer
	cmd.Stdout = writerFunc(out.Write)
	cmd.WaitDelay = 100 * time.Millisecond
	res, err := Run(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Run waited %v for a process outside its group", d)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(out.String())); err == nil {
		syscall.Kill(pid, syscall.SIGKILL) // clean up what proctree documents it cannot reach
	}
	if res.Killed || res.ExitCode != 0 {
		t.Errorf("killed=%v code=%d", res.Killed, res.ExitCode)
	}
}

// slowWriter takes its time over every write, as a consumer on a loaded
// machine may.
type slowWriter struct{ n int }

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(50 * time.Millisecond)
	w.n += len(p)
	return len(p), nil
}

func TestSlowConsumerLosesNothing(t *testing.T) {
	// The leader writes 256 KiB and exits once the last 64 KiB are in the
	// pipe; copying those takes longer than WaitDelay, and nothing may be
	// cut.
	cmd := sh(`head -c 262144 /dev/zero; head -c 4096 /dev/zero >&2`)
	var stdout, stderr slowWriter
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 20 * time.Millisecond
	res, err := Run(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || stdout.n != 1<<18 || stderr.n != 4096 {
		t.Errorf("exit %d, %d bytes of stdout (want %d), %d of stderr (want 4096)", res.ExitCode, stdout.n, 1<<18, stderr.n)
	}
}

func TestSharedWriterAndFiles(t *testing.T) {
	// One writer for both streams shares a pipe, as with exec; an
	// *os.File is given to the child as it is.
	cmd := sh(`echo out; echo err >&2`)
	var both bytes.Buffer
	cmd.Stdout, cmd.Stderr = &both, &both
	if _, err := Run(ctx, cmd); err != nil {
		t.Fatal(err)
	}
	if got := both.String(); !strings.Contains(got, "out\n") || !strings.Contains(got, "err\n") {
		t.Errorf("combined output %q", got)
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	cmd = sh(`echo to-file`)
	cmd.Stdout = f
	if _, err := Run(ctx, cmd); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if b, _ := os.ReadFile(f.Name()); string(b) != "to-file\n" {
		t.Errorf("file got %q", b)
	}
}

func TestEscapedFloodingWriterDoesNotBlockRun(t *testing.T) {
	// A process that left the group keeps writing to stdout without end:
	// Run returns about WaitDelay after the leader, not when it stops.
	script := `setsid sh -c 'echo $$; exec yes' & sleep 0.2; exit 0`
	cmd := sh(script)
	var mu sync.Mutex
	var first []byte
	cmd.Stdout = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(first) < 64 {
			first = append(first, p[:min(len(p), 64)]...)
		}
		return len(p), nil
	})
	cmd.WaitDelay = 200 * time.Millisecond
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := Run(ctx, cmd); err != nil {
			t.Error(err)
		}
	}()
	var pid int
	defer func() {
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		mu.Lock()
		pid, _ = strconv.Atoi(strings.SplitN(string(first), "\n", 2)[0])
		mu.Unlock()
		syscall.Kill(pid, syscall.SIGKILL)
		<-done
		t.Fatal("Run did not return while a process outside its group kept writing")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Run took %v", d)
	}
	mu.Lock()
	pid, _ = strconv.Atoi(strings.SplitN(string(first), "\n", 2)[0])
	mu.Unlock()
}
