// Package sandboxtest is the conformance suite that defines a sandbox:
// every backend runs it, through the portable *sandbox.Sandbox.
//
//	func TestConformance(t *testing.T) {
//		sandboxtest.Run(t, harness{}, sandboxtest.Options{Isolated: true})
//	}
//
// It covers exec semantics (exit codes, signals, environment, working
// directory, stdin, streaming, output truncation), timeouts and
// cancellation (no process of the tree may survive), the file tools with an
// escape corpus whose traps are laid by commands run in the sandbox, as a
// hostile worker would lay them, and, for isolating backends, that the host
// and the network stay out of reach.
package sandboxtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox"
)

// Harness makes sandboxes of the backend under test.
type Harness interface {
	// New returns a sandbox with the given spec over a new, empty work
	// directory, and registers its cleanup with t. It skips t (with the
	// reason) when the backend cannot run here.
	New(t *testing.T, spec sandbox.Spec) *sandbox.Sandbox
}

// Options say what the backend promises beyond the common contract.
type Options struct {
	// Isolated is true for a backend that isolates its commands from the
	// host (bwrapsandbox, dockersandbox): the suite then checks that the
	// host's files and network are out of reach.
	Isolated bool
	// SignalsAsExitCodes is true for a backend that cannot tell a
	// command killed by signal N from one that exited with status 128+N
	// (bubblewrap and container runtimes report only the latter): the
	// suite then accepts that form for a signal.
	SignalsAsExitCodes bool
	// PIDs is true for a backend that honours Spec.PIDs: the suite then
	// runs a fork bomb under a small limit and checks that it stays under
	// it, that the host can still start processes, and that the timeout
	// kills it all. A backend that cannot limit processes skips the bomb:
	// without a limit it would take the host down with it.
	PIDs bool
	// Memory is true for a backend that honours Spec.MemoryBytes: the
	// suite then runs a memory bomb and expects the reason OutOfMemory.
	Memory bool
}

var bg = context.Background()

// Run runs the suite. For a backend that is not Isolated, the suite asks
// for Spec{Network: true}, the only network setting such a backend can
// honour; otherwise for the zero Spec.
func Run(t *testing.T, h Harness, opts Options) {
	if !opts.Isolated {
		h = networked{h}
	}
	t.Run("Exec", func(t *testing.T) { testExec(t, h, opts) })
	t.Run("SpecEnv", func(t *testing.T) { testSpecEnv(t, h) })
	t.Run("Streaming", func(t *testing.T) { testStreaming(t, h) })
	t.Run("Truncation", func(t *testing.T) { testTruncation(t, h) })
	t.Run("InvalidRequests", func(t *testing.T) { testInvalid(t, h) })
	t.Run("TimeoutKillsTree", func(t *testing.T) { testKill(t, h, false) })
	t.Run("CancelKillsTree", func(t *testing.T) { testKill(t, h, true) })
	t.Run("OutputFlood", func(t *testing.T) { testFlood(t, h) })
	t.Run("ForkBomb", func(t *testing.T) {
		if !opts.PIDs {
			t.Skip("the backend does not limit processes (Options.PIDs is false): a fork bomb would not be contained")
		}
		testForkBomb(t, h)
	})
	t.Run("MemoryBomb", func(t *testing.T) {
		if !opts.Memory {
			t.Skip("the backend does not limit memory (Options.Memory is false): a memory bomb would not be contained")
		}
		testMemoryBomb(t, h)
	})
	t.Run("FileTools", func(t *testing.T) { testFileTools(t, h) })
	t.Run("EscapeCorpus", func(t *testing.T) { testEscapes(t, h) })
	if opts.Isolated {
		t.Run("HostHidden", func(t *testing.T) { testHostHidden(t, h) })
		t.Run("NoNetwork", func(t *testing.T) { testNoNetwork(t, h) })
	}
}

// networked asks the harness for network access whenever the suite asks
// for the zero Spec.
type networked struct{ Harness }

func (n networked) New(t *testing.T, spec sandbox.Spec) *sandbox.Sandbox {
	spec.Network = true
	return n.Harness.New(t, spec)
}

func exec(t *testing.T, s *sandbox.Sandbox, req sandbox.ExecRequest) *sandbox.ExecResult {
	t.Helper()
	res, err := s.Exec(bg, req)
	if err != nil {
		t.Fatalf("Exec(%q %q): %v", req.Argv, req.Command, err)
	}
	return res
}

func mustSucceed(t *testing.T, s *sandbox.Sandbox, command string) string {
	t.Helper()
	res := exec(t, s, sandbox.ExecRequest{Command: command})
	if err := res.Err(); err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", command, err, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

func testExec(t *testing.T, h Harness, opts Options) {
	s := h.New(t, sandbox.Spec{})
	mustSucceed(t, s, "mkdir -p sub/deeper")
	tests := []struct {
		name string
		req  sandbox.ExecRequest
		want string
		code int
		why  sandbox.ExitReason
		sig  syscall.Signal
	}{
		{"argv", sandbox.ExecRequest{Argv: []string{"echo", "a b", "c"}}, "a b c\n", 0, sandbox.Exited, 0},
		{"shell", sandbox.ExecRequest{Command: "echo one; echo two"}, "one\ntwo\n", 0, sandbox.Exited, 0},
		{"exit code", sandbox.ExecRequest{Command: "exit 3"}, "", 3, sandbox.Exited, 0},
		{"signal", sandbox.ExecRequest{Command: "kill -TERM $$"}, "", -1, sandbox.Signaled, syscall.SIGTERM},
		{"env", sandbox.ExecRequest{Command: `echo "$A-$B"`, Env: map[string]string{"A": "x", "B": "y z"}}, "x-y z\n", 0, sandbox.Exited, 0},
		{"dir", sandbox.ExecRequest{Command: "basename $(pwd)", Dir: "sub/deeper"}, "deeper\n", 0, sandbox.Exited, 0},
		{"dir via host path", sandbox.ExecRequest{Command: "basename $(pwd)", Dir: filepath.Join(s.WorkDir(), "sub")}, "sub\n", 0, sandbox.Exited, 0},
		{"stdin", sandbox.ExecRequest{Command: "tr a-z A-Z", Stdin: strings.NewReader("hello")}, "HELLO", 0, sandbox.Exited, 0},
		{"no stdin reads EOF", sandbox.ExecRequest{Command: "cat; echo end"}, "end\n", 0, sandbox.Exited, 0},
		{"stderr apart", sandbox.ExecRequest{Command: "echo out; echo err >&2"}, "out\n", 0, sandbox.Exited, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := exec(t, s, tt.req)
			if tt.sig != 0 && opts.SignalsAsExitCodes {
				tt.code, tt.why, tt.sig = 128+int(tt.sig), sandbox.Exited, 0
			}
			if string(res.Stdout) != tt.want || res.ExitCode != tt.code || res.Reason != tt.why || res.Signal != tt.sig {
				t.Errorf("stdout %q code %d reason %s signal %v, want %q %d %s %v (stderr %q)",
					res.Stdout, res.ExitCode, res.Reason, res.Signal, tt.want, tt.code, tt.why, tt.sig, res.Stderr)
			}
		})
	}
	res := exec(t, s, sandbox.ExecRequest{Command: "echo err >&2; exit 2"})
	var exitErr *sandbox.ExitError
	if string(res.Stderr) != "err\n" || !errors.As(res.Err(), &exitErr) || exitErr.Result.ExitCode != 2 {
		t.Errorf("stderr %q, Err() = %v", res.Stderr, res.Err())
	}
}

// syncWriter is a Writer that records when it first saw a string.
type syncWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	seen  time.Time
	token string
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen.IsZero() && strings.Contains(w.buf.String(), w.token) {
		w.seen = time.Now()
	}
	return len(p), nil
}

// testSpecEnv checks that Spec.Env reaches every command and that the
// request's Env wins over it for a key in both.
func testSpecEnv(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{Env: map[string]string{"PADDOCK_A": "spec-a", "PADDOCK_B": "spec-b"}})
	res := exec(t, s, sandbox.ExecRequest{Command: `echo "$PADDOCK_A $PADDOCK_B"`, Env: map[string]string{"PADDOCK_B": "req-b"}})
	if got := string(res.Stdout); got != "spec-a req-b\n" {
		t.Errorf("environment %q, want %q", got, "spec-a req-b\n")
	}
}

func testStreaming(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{})
	w := &syncWriter{token: "ready"}
	e := &syncWriter{token: "warn"}
	res := exec(t, s, sandbox.ExecRequest{Command: "echo ready; echo warn >&2; sleep 1; echo done", Stdout: w, Stderr: e})
	end := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen.IsZero() || end.Sub(w.seen) < 500*time.Millisecond {
		t.Errorf("stdout was not streamed as it came (seen %v before the end)", end.Sub(w.seen))
	}
	if e.seen.IsZero() {
		t.Error("stderr was not streamed")
	}
	if w.buf.String() != "ready\ndone\n" || string(res.Stdout) != "ready\ndone\n" {
		t.Errorf("streamed %q, result %q", w.buf.String(), res.Stdout)
	}
}

func testTruncation(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{})
	res := exec(t, s, sandbox.ExecRequest{Command: "seq 1 100000", MaxOutput: 1000})
	out := string(res.Stdout)
	if !res.Truncated || !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "99999\n100000\n") || len(out) > 1100 {
		t.Errorf("truncated=%v, %d bytes, head %q", res.Truncated, len(out), out[:min(20, len(out))])
	}
	res = exec(t, s, sandbox.ExecRequest{Command: "seq 1 10"})
	if res.Truncated || string(res.Stdout) != "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n" {
		t.Errorf("short output: truncated=%v %q", res.Truncated, res.Stdout)
	}
}

func testInvalid(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{})
	mustSucceed(t, s, "touch file; ln -s /etc etc-link")
	tests := []struct {
		name string
		req  sandbox.ExecRequest
		want error
	}{
		{"nothing to run", sandbox.ExecRequest{}, sandbox.ErrInvalidRequest},
		{"argv and command", sandbox.ExecRequest{Argv: []string{"true"}, Command: "true"}, sandbox.ErrInvalidRequest},
		{"NUL in argv", sandbox.ExecRequest{Argv: []string{"echo", "a\x00b"}}, sandbox.ErrInvalidRequest},
		{"bad env name", sandbox.ExecRequest{Command: "true", Env: map[string]string{"A=B": "x"}}, sandbox.ErrInvalidRequest},
		{"dir ..", sandbox.ExecRequest{Command: "true", Dir: ".."}, sandbox.ErrPathEscape},
		{"dir ../..", sandbox.ExecRequest{Command: "true", Dir: "sub/../../.."}, sandbox.ErrPathEscape},
		{"dir absolute outside", sandbox.ExecRequest{Command: "true", Dir: "/etc"}, sandbox.ErrPathEscape},
		{"dir symlink out", sandbox.ExecRequest{Command: "true", Dir: "etc-link"}, sandbox.ErrPathEscape},
		{"dir missing", sandbox.ExecRequest{Command: "true", Dir: "missing"}, fs.ErrNotExist},
		{"dir is a file", sandbox.ExecRequest{Command: "true", Dir: "file"}, sandbox.ErrInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Exec(bg, tt.req); !errors.Is(err, tt.want) {
				t.Errorf("Exec = %v, want an error wrapping %v", err, tt.want)
			}
		})
	}
}

func testKill(t *testing.T, h Harness, cancel bool) {
	s := h.New(t, sandbox.Spec{})
	marker := fmt.Sprintf("31%d.5", time.Now().UnixNano()%1e9)
	// A child, a grandchild, and one that ignores SIGTERM and holds
	// stdout. (A process that leaves the group with setsid is beyond what
	// a non-isolating backend can kill; bwrapsandbox tests that case.)
	script := fmt.Sprintf(`sleep %[1]s & ( sleep %[1]s & ( trap '' TERM; sleep %[1]s ) & wait ) & echo started; wait`, marker)
	ctx, stop := context.WithCancel(bg)
	defer stop()
	req := sandbox.ExecRequest{Command: script}
	want := sandbox.TimedOut
	if cancel {
		// Cancel once the tree is up (a loaded machine may take a while
		// to start the sandbox).
		want = sandbox.Cancelled
		req.Stdout = &triggerWriter{token: "started", fire: func() { time.AfterFunc(200*time.Millisecond, stop) }}
	} else {
		req.Timeout = 1500 * time.Millisecond
	}
	start := time.Now()
	res, err := s.Exec(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Exec returned %v after the kill", took)
	}
	if res.Reason != want || res.ExitCode != -1 {
		t.Errorf("reason %s code %d, want %s", res.Reason, res.ExitCode, want)
	}
	if cancel && !strings.Contains(string(res.Stdout), "started") {
		t.Errorf("output before the kill lost: %q", res.Stdout)
	}
	waitGone(t, marker)
}

// triggerWriter calls fire once, when token has been written.
type triggerWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	token string
	fire  func()
	fired bool
}

func (w *triggerWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.fired && strings.Contains(w.buf.String(), w.token) {
		w.fired = true
		w.fire()
	}
	return len(p), nil
}

func testFlood(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{})
	var streamed countWriter
	marker := fmt.Sprintf("flood%d", time.Now().UnixNano()%1e9)
	res := exec(t, s, sandbox.ExecRequest{Command: "yes " + marker, Timeout: time.Second, MaxOutput: 4096, Stdout: &streamed})
	if res.Reason != sandbox.TimedOut || !res.Truncated || len(res.Stdout) > 4096+64 {
		t.Errorf("reason %s truncated %v kept %d bytes", res.Reason, res.Truncated, len(res.Stdout))
	}
	if streamed.n.Load() < 64<<10 {
		t.Errorf("only %d bytes streamed in a second of flood", streamed.n.Load())
	}
	waitGone(t, marker)
}

func testForkBomb(t *testing.T, h Harness) {
	const limit = 32
	s := h.New(t, sandbox.Spec{PIDs: limit})
	marker := fmt.Sprintf("bomb%d", time.Now().UnixNano()%1e9)
	// Every shell of the bomb is a fork of the first one, so all of them
	// carry the marker in their command line, seen from the host too. Each
	// forks for ever: a shell that fails to fork may exit (busybox ash
	// does), and the others fill its place, so the bomb presses on the
	// limit until the timeout. The first shell then becomes a sleep (exec
	// needs no new process, so it cannot fail for the limit), so that only
	// the timeout ends the command, and it takes no CPU from the bomb.
	script := fmt.Sprintf(`: %s; b() { while :; do b & done; }; b & exec sleep 100`, marker)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	var peak int
	var hostErr error
	go func() {
		defer close(sampled)
		for i := 0; ; i++ {
			peak = max(peak, len(testenv.ProcessesWith(marker)))
			if i%10 == 5 && hostErr == nil {
				// The host can still start processes.
				hostErr = osexec.Command("true").Run()
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	res, err := s.Exec(bg, sandbox.ExecRequest{Command: script, Timeout: 3 * time.Second, MaxOutput: 4096})
	close(stop)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the bomb's exec returned after %v", took)
	}
	if res.Reason != sandbox.TimedOut {
		t.Errorf("reason %s, want %s: %s", res.Reason, sandbox.TimedOut, res.Stderr)
	}
	if hostErr != nil {
		t.Errorf("the host could not start a process during the bomb: %v", hostErr)
	}
	// The bomb's shells are all the sandbox runs, so the peak is at most
	// the limit, plus the backend's own processes that carry the command
	// line (bubblewrap's outer process and its init: 2). Reaped-late
	// zombies count against the limit but not here. That the bomb went
	// off shows in a peak of more than a few, or in the shells' complaints
	// that they cannot fork (a sampler starved on a loaded machine can
	// miss the peak).
	hitLimit := strings.Contains(strings.ToLower(string(res.Stderr)), "fork")
	if peak > limit+2 || peak < 4 && !hitLimit {
		t.Errorf("peak of %d bomb processes under a limit of %d; stderr: %q", peak, limit, res.Stderr)
	}
	t.Logf("peak %d processes under a limit of %d", peak, limit)
	waitGone(t, marker)
}

func testMemoryBomb(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{MemoryBytes: 64 << 20})
	// The shell keeps 256 MiB in a variable.
	res := exec(t, s, sandbox.ExecRequest{Command: `x=$(head -c 268435456 /dev/zero | tr '\0' a); echo ${#x}`, Timeout: time.Minute})
	if res.Reason != sandbox.OutOfMemory {
		t.Errorf("reason %s (code %d), want %s: %s", res.Reason, res.ExitCode, sandbox.OutOfMemory, res.Stderr)
	}
	// The sandbox still works afterwards.
	mustSucceed(t, s, "true")
}

// waitGone waits until no process carries marker, killing them and
// failing the test after a few seconds.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := testenv.ProcessesWith(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("processes survived: %v", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type countWriter struct{ n atomic.Int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n.Add(int64(len(p))); return len(p), nil }

func testFileTools(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{})
	if err := s.WriteFile(bg, "dir/a.txt", []byte("hello world\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	// Commands and file tools see the same files.
	if out := mustSucceed(t, s, "cat dir/a.txt; echo made > dir/b.txt; chmod 755 dir/b.txt"); out != "hello world\n" {
		t.Errorf("command read %q", out)
	}
	if b, err := s.ReadFile(bg, "dir/b.txt", 0); err != nil || string(b) != "made\n" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if err := s.Edit(bg, "dir/b.txt", "made", "edited"); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Stat(bg, "dir/b.txt"); err != nil || e.Mode.Perm() != 0o755 || e.Size != int64(len("edited\n")) {
		t.Errorf("after Edit: %+v %v (mode must be kept)", e, err)
	}
	var editErr *sandbox.EditError
	if err := s.Edit(bg, "dir/a.txt", "o", "0"); !errors.As(err, &editErr) || editErr.Count != 2 {
		t.Errorf("ambiguous Edit = %v", err)
	}
	if err := s.Edit(bg, "dir/a.txt", "absent", "x"); !errors.As(err, &editErr) || editErr.Count != 0 {
		t.Errorf("Edit of missing text = %v", err)
	}
	entries, err := s.List(bg, "dir")
	if err != nil || len(entries) != 2 || entries[0].Name != "a.txt" || entries[1].Name != "b.txt" {
		t.Errorf("List = %+v %v", entries, err)
	}
	if err := s.Mkdir(bg, "x/y", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(bg, "dir/a.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadFile(bg, "dir/a.txt", 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile of a removed file = %v", err)
	}
	if out := mustSucceed(t, s, "ls x; ls dir"); out != "y\nb.txt\n" {
		t.Errorf("the command sees %q", out)
	}
}

// The escape corpus: a hostile worker lays each trap with a command, then
// the host's file tools are pointed at it. None may read or change anything
// outside the work directory.
func testEscapes(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{})
	// What the traps aim at: a file just outside the work directory.
	outside := filepath.Join(filepath.Dir(s.WorkDir()), "outside-"+filepath.Base(s.WorkDir()))
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("top secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(s.WorkDir(), secret)

	mustSucceed(t, s, strings.Join([]string{
		"ln -s /etc/passwd passwd",
		"ln -s / rootlink",
		"ln -s " + rel + " rel-secret",
		"ln -s rel-secret chain1 && ln -s chain1 chain2",
		"mkdir -p d && ln -s ../.. d/up",
		"ln -s /proc/self/root procroot",
		"ln -s loop1 loop2 && ln -s loop2 loop1",
		"mkfifo fifo",
		"echo inside > own && ln own own-hardlink",
		"mkdir -p real && ln -s real swapdir",
		"ln -s /tmp tmplink",
	}, " && "))
	// A hard link to a file outside, when the backend lets one be made
	// (inside an isolated sandbox the outside is not visible; made here
	// from the host, as a confused tool might).
	hardOutside := os.Link(secret, filepath.Join(s.WorkDir(), "hard-secret")) == nil

	read := func(name string) error { _, err := s.ReadFile(bg, name, 0); return err }
	write := func(name string) error { return s.WriteFile(bg, name, []byte("pwned\n"), 0o644) }
	edit := func(name string) error { return s.Edit(bg, name, "secret", "pwned") }
	list := func(name string) error { _, err := s.List(bg, name); return err }
	mkdir := func(name string) error { return s.Mkdir(bg, name, 0o755) }
	stat := func(name string) error { _, err := s.Stat(bg, name); return err }

	escape, special, missing, invalid := sandbox.ErrPathEscape, sandbox.ErrSpecialFile, fs.ErrNotExist, fs.ErrInvalid
	cases := []struct {
		name string
		op   func(string) error
		path string
		want []error // any of
	}{
		{"read symlink to /etc/passwd", read, "passwd", []error{escape}},
		{"write through symlink to /etc/passwd", write, "passwd", []error{escape}},
		{"list symlink to /", list, "rootlink", []error{escape}},
		{"read through symlink to /", read, "rootlink/etc/passwd", []error{escape}},
		{"read relative symlink out", read, "rel-secret", []error{escape}},
		{"edit relative symlink out", edit, "rel-secret", []error{escape}},
		{"read symlink chain out", read, "chain2", []error{escape}},
		{"write symlink chain out", write, "chain2", []error{escape}},
		{"read through d/up", read, "d/up/" + filepath.Base(outside) + "/secret", []error{escape}},
		{"mkdir through d/up", mkdir, "d/up/newdir", []error{escape}},
		{"read /proc/self/root link", read, "procroot/etc/passwd", []error{escape}},
		{"read symlink loop", read, "loop1", []error{escape, syscall.ELOOP}},
		{"read .. ", read, "..", []error{escape}},
		{"read ../secret", read, "../" + filepath.Base(outside) + "/secret", []error{escape}},
		{"read a/../../x", read, "d/../../" + filepath.Base(outside) + "/secret", []error{escape}},
		{"read ./../x", read, "./../x", []error{escape}},
		{"write deep ..", write, strings.Repeat("../", 30) + "tmp/pwned", []error{escape}},
		{"read absolute /etc/passwd", read, "/etc/passwd", []error{escape}},
		{"read absolute secret", read, secret, []error{escape}},
		{"read /proc/self/root/etc/passwd", read, "/proc/self/root/etc/passwd", []error{escape}},
		{"stat through tmp link", stat, "tmplink/x", []error{escape}},
		{"read fifo without blocking", read, "fifo", []error{special}},
		{"write fifo", write, "fifo", []error{special}},
		{"read hard link", read, "own-hardlink", []error{special}},
		{"edit hard link", edit, "own", []error{special}},
		{"read NUL", read, "a\x00b", []error{invalid}},
		{"read very long path", read, strings.Repeat("a/", 3000), []error{invalid}},
		{"read long name", read, strings.Repeat("n", 300), []error{invalid}},
		{"read missing", read, "no/such/file", []error{missing}},
		{"read URL-encoded dots (a name)", read, "%2e%2e/secret", []error{missing}},
	}
	if hardOutside {
		cases = append(cases,
			struct {
				name string
				op   func(string) error
				path string
				want []error
			}{"read hard link to outside", read, "hard-secret", []error{special}},
			struct {
				name string
				op   func(string) error
				path string
				want []error
			}{"write hard link to outside", write, "hard-secret", []error{special}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- c.op(c.path) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the file tool blocked")
			}
			ok := false
			for _, w := range c.want {
				ok = ok || errors.Is(err, w)
			}
			if !ok {
				t.Errorf("got %v, want one of %v", err, c.want)
			}
		})
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "top secret\n" {
		t.Errorf("the outside file changed: %q %v", b, err)
	}
	if b, _ := os.ReadFile("/etc/passwd"); bytes.Contains(b, []byte("pwned")) {
		t.Error("/etc/passwd changed")
	}
	if _, err := os.Stat("/tmp/pwned"); err == nil {
		t.Error("a file was written to /tmp")
	}
	if len(cases) < 25 {
		t.Errorf("the corpus has %d attacks, want at least 25", len(cases))
	}
}

func testHostHidden(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{})
	canary := filepath.Join(os.TempDir(), fmt.Sprintf("paddock-host-canary-%d", time.Now().UnixNano()))
	if err := os.WriteFile(canary, []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(canary)
	res := exec(t, s, sandbox.ExecRequest{Command: "cat " + canary + "; ls /root /home 2>/dev/null | wc -l; touch /usr/pwned 2>/dev/null && echo wrote-usr"})
	if strings.Contains(string(res.Stdout), "host") || strings.Contains(string(res.Stdout), "wrote-usr") || strings.TrimSpace(string(res.Stdout)) != "0" {
		t.Errorf("the sandbox sees or changes the host: %q", res.Stdout)
	}
}

func testNoNetwork(t *testing.T, h Harness) {
	s := h.New(t, sandbox.Spec{})
	res := exec(t, s, sandbox.ExecRequest{Command: `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`})
	if got := string(res.Stdout); got != "lo\n" {
		t.Errorf("interfaces without Spec.Network: %q, want only lo", got)
	}
}

// RunBenchmarks runs the benchmarks every backend shares: the round trip of
// an Exec of `true`, and a write and read back of a 1 MiB file through the
// file tools, each beside the same operation on the host without a sandbox
// (the baseline; the sandbox's sub-benchmark reports x-baseline).
func RunBenchmarks(b *testing.B, h BenchHarness) {
	// Each operation runs first on the host, unsandboxed (the baseline),
	// then through the sandbox, which reports its ratio as x-baseline.
	perOp := func(b *testing.B) float64 { return float64(b.Elapsed()) / float64(b.N) }
	var execBase float64
	b.Run("exec-true/host", func(b *testing.B) {
		for b.Loop() {
			if err := osexec.Command("true").Run(); err != nil {
				b.Fatal(err)
			}
		}
		execBase = perOp(b)
	})
	b.Run("exec-true/sandbox", func(b *testing.B) {
		s := h.NewBench(b)
		b.ReportAllocs()
		for b.Loop() {
			res, err := s.Exec(bg, sandbox.ExecRequest{Argv: []string{"true"}})
			if err != nil || !res.Success() {
				b.Fatalf("%v %+v", err, res)
			}
		}
		if execBase > 0 {
			b.ReportMetric(perOp(b)/execBase, "x-baseline")
		}
	})
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	var ioBase float64
	b.Run("write-read-1MiB/host", func(b *testing.B) {
		name := filepath.Join(b.TempDir(), "bench.bin")
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := os.WriteFile(name, data, 0o644); err != nil {
				b.Fatal(err)
			}
			if got, err := os.ReadFile(name); err != nil || len(got) != len(data) {
				b.Fatalf("%d bytes, %v", len(got), err)
			}
		}
		ioBase = perOp(b)
	})
	b.Run("write-read-1MiB/sandbox", func(b *testing.B) {
		s := h.NewBench(b)
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if err := s.WriteFile(bg, "bench.bin", data, 0o644); err != nil {
				b.Fatal(err)
			}
			got, err := s.ReadFile(bg, "bench.bin", 0)
			if err != nil || len(got) != len(data) {
				b.Fatalf("%d bytes, %v", len(got), err)
			}
		}
		if ioBase > 0 {
			b.ReportMetric(perOp(b)/ioBase, "x-baseline")
		}
	})
}

// BenchHarness makes sandboxes for benchmarks.
type BenchHarness interface {
	// NewBench returns a sandbox over a new, empty work directory with
	// the zero Spec, registering its cleanup with b, or skips b.
	NewBench(b *testing.B) *sandbox.Sandbox
}
