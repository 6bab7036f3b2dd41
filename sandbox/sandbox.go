package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddockdev/paddock/internal/headtail"
	"github.com/paddockdev/paddock/internal/rootfs"
	"github.com/paddockdev/paddock/sandbox/driver"
)

// Spec describes what a sandbox may do; see [driver.Spec]. Backends take it
// when they create a sandbox and refuse, with errors.ErrUnsupported, a field
// they cannot honour.
type Spec = driver.Spec

// Defaults of [Options].
const (
	DefaultTimeout   = 10 * time.Minute
	DefaultMaxOutput = 1 << 20
)

// Options are the optional settings of [New]. A nil *Options means the
// defaults.
type Options struct {
	// Timeout applies to an Exec whose request sets none; zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxOutput caps the bytes kept of stdout and of stderr of an Exec
	// whose request sets none; zero means DefaultMaxOutput.
	MaxOutput int
	// Env is added to every command's environment (under the request's
	// own Env). [Prepared.Env] belongs here.
	Env map[string]string
}

// Sandbox is a place where a worker's commands and file tools run: the
// portable type over a backend (dirsandbox, bwrapsandbox, dockersandbox).
// It validates requests, applies timeouts and output caps, maps paths, and
// wraps errors, the same way for every backend.
//
// A Sandbox is safe for concurrent use.
type Sandbox struct {
	drv  driver.Sandbox
	opts Options

	filesOnce sync.Once
	files     *rootfs.FS
	filesErr  error
}

// New returns the portable Sandbox over a backend's sandbox.
func New(drv driver.Sandbox, opts *Options) *Sandbox {
	s := &Sandbox{drv: drv}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Timeout <= 0 {
		s.opts.Timeout = DefaultTimeout
	}
	if s.opts.MaxOutput == 0 {
		s.opts.MaxOutput = DefaultMaxOutput
	}
	return s
}

// WorkDir returns the host directory that is the sandbox's work directory,
// or "" for a backend without one.
func (s *Sandbox) WorkDir() string { return s.drv.WorkDir() }

// Close releases the backend's resources; the work directory stays.
func (s *Sandbox) Close(ctx context.Context) error {
	var err error
	s.filesOnce.Do(func() {}) // wait for a concurrent first use of the file tools
	if s.files != nil {
		err = s.files.Close()
	}
	return errors.Join(s.drv.Close(ctx), err)
}

// ExecRequest is a command to run.
type ExecRequest struct {
	// Argv is the program and its arguments. Exactly one of Argv and
	// Command must be set.
	Argv []string
	// Command is a shell command line, run as /bin/sh -c Command.
	Command string
	// Dir is the working directory: a path relative to the work
	// directory, or a host path inside it. "" is the work directory. A
	// path outside the sandbox is an error wrapping ErrPathEscape, never
	// a silent fallback to the work directory.
	Dir string
	// Env is added to the environment, over Options.Env.
	Env map[string]string
	// Stdin is the command's input; nil means empty.
	Stdin io.Reader
	// Timeout kills the command's whole process tree after this long;
	// zero means Options.Timeout.
	Timeout time.Duration
	// MaxOutput caps the bytes kept of stdout and of stderr, each (the
	// first and last halves are kept); zero means Options.MaxOutput,
	// negative means no cap.
	MaxOutput int
	// Stdout and Stderr, when set, receive all output as it comes.
	Stdout, Stderr io.Writer
}

// ExitReason says why a command ended.
type ExitReason string

// The exit reasons.
const (
	Exited      ExitReason = "exited"        // it exited by itself, with ExitCode
	Signaled    ExitReason = "signaled"      // a signal it did not get from the sandbox ended it
	TimedOut    ExitReason = "timed out"     // the timeout passed; the sandbox killed it
	Cancelled   ExitReason = "cancelled"     // the context was done; the sandbox killed it
	OutOfMemory ExitReason = "out of memory" // the backend killed it for its memory
)

// ExecResult is how a command ended and what it printed.
type ExecResult struct {
	Reason   ExitReason
	ExitCode int            // -1 unless Reason is Exited
	Signal   syscall.Signal // the ending signal, or 0
	Duration time.Duration
	Stdout   []byte
	Stderr   []byte
	// Truncated is true when the middle of Stdout or Stderr was dropped
	// by the output cap.
	Truncated bool
}

// Success reports whether the command exited with status 0.
func (r *ExecResult) Success() bool { return r.Reason == Exited && r.ExitCode == 0 }

// Err returns nil for a successful command and an *ExitError otherwise.
func (r *ExecResult) Err() error {
	if r.Success() {
		return nil
	}
	return &ExitError{Result: r}
}

// ExitError is a command that did not succeed.
type ExitError struct{ Result *ExecResult }

func (e *ExitError) Error() string {
	r := e.Result
	switch r.Reason {
	case Exited:
		return fmt.Sprintf("sandbox: command exited with status %d", r.ExitCode)
	case Signaled:
		return fmt.Sprintf("sandbox: command killed by %v", r.Signal)
	}
	return fmt.Sprintf("sandbox: command %s after %v", r.Reason, r.Duration.Round(time.Millisecond))
}

// ErrInvalidRequest is wrapped by Exec's errors for a malformed request.
var ErrInvalidRequest = errors.New("sandbox: invalid exec request")

// Exec runs a command in the sandbox and waits for it. A command that runs
// returns a result, whatever its exit; use [ExecResult.Err] to treat
// failure as an error. The error is for a request that is invalid (wrapping
// ErrInvalidRequest or ErrPathEscape) or a command the backend could not
// start.
//
// When the timeout passes or ctx is done, the command's whole process tree
// is killed and Exec returns promptly with Reason TimedOut or Cancelled.
func (s *Sandbox) Exec(ctx context.Context, req ExecRequest) (*ExecResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	argv := req.Argv
	switch {
	case len(argv) > 0 && req.Command != "":
		return nil, fmt.Errorf("%w: set Argv or Command, not both", ErrInvalidRequest)
	case req.Command != "":
		argv = []string{"/bin/sh", "-c", req.Command}
	case len(argv) == 0:
		return nil, fmt.Errorf("%w: no command: set Argv or Command", ErrInvalidRequest)
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("%w: an argument contains a NUL byte", ErrInvalidRequest)
		}
	}
	dir, err := s.workdir(req.Dir)
	if err != nil {
		return nil, err
	}
	env, err := s.env(req.Env)
	if err != nil {
		return nil, err
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = s.opts.Timeout
	}
	maxOut := req.MaxOutput
	if maxOut == 0 {
		maxOut = s.opts.MaxOutput
	}
	stdout := headtail.New(maxOut, req.Stdout)
	stderr := headtail.New(maxOut, req.Stderr)

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	dr, err := s.drv.Exec(runCtx, &driver.Command{Argv: argv, Dir: dir, Env: env, Stdin: req.Stdin, Stdout: stdout, Stderr: stderr})
	if err != nil {
		return nil, fmt.Errorf("sandbox: exec %s: %w", argv[0], err)
	}
	res := &ExecResult{ExitCode: dr.ExitCode, Signal: dr.Signal, Duration: time.Since(start)}
	var t1, t2 bool
	res.Stdout, t1 = stdout.Bytes()
	res.Stderr, t2 = stderr.Bytes()
	res.Truncated = t1 || t2
	switch {
	case dr.OOM:
		res.Reason = OutOfMemory
	case dr.Killed && ctx.Err() != nil:
		res.Reason = Cancelled
	case dr.Killed:
		res.Reason = TimedOut
	case dr.Signal != 0:
		res.Reason = Signaled
	default:
		res.Reason = Exited
	}
	if res.Reason != Exited {
		res.ExitCode = -1
	}
	return res, nil
}

// env merges Options.Env and the request's, as KEY=VALUE sorted by key.
func (s *Sandbox) env(req map[string]string) ([]string, error) {
	m := map[string]string{}
	for _, src := range []map[string]string{s.opts.Env, req} {
		for k, v := range src {
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.IndexByte(v, 0) >= 0 {
				return nil, fmt.Errorf("%w: environment variable %q", ErrInvalidRequest, k)
			}
			m[k] = v
		}
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// workdir maps a request's Dir to a clean path relative to the work
// directory, checking that it is a directory inside it (the seed's
// resolveSandboxWorkdir, without its silent fallback to the root).
func (s *Sandbox) workdir(dir string) (string, error) {
	files, err := s.fs()
	if err != nil {
		// A backend without a host work directory: check lexically.
		if dir == "" {
			return ".", nil
		}
		clean := path.Clean(dir)
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return "", fmt.Errorf("sandbox: working directory %q: %w", dir, ErrPathEscape)
		}
		return clean, nil
	}
	rel, err := files.Resolve(dir)
	if err != nil {
		return "", fmt.Errorf("sandbox: working directory %q: %w", dir, err)
	}
	e, err := files.Stat(rel)
	if err != nil {
		return "", fmt.Errorf("sandbox: working directory %q: %w", dir, err)
	}
	if e.Type != rootfs.TypeDir {
		return "", fmt.Errorf("%w: working directory %q is not a directory", ErrInvalidRequest, dir)
	}
	if rel == "" {
		rel = "."
	}
	return rel, nil
}

// fs opens the file tools' root on the work directory, once.
func (s *Sandbox) fs() (*rootfs.FS, error) {
	s.filesOnce.Do(func() {
		dir := s.drv.WorkDir()
		if dir == "" {
			s.filesErr = fmt.Errorf("sandbox: this backend has no host work directory: %w", errors.ErrUnsupported)
			return
		}
		s.files, s.filesErr = rootfs.Open(dir)
	})
	return s.files, s.filesErr
}

// The file tools. Each works on the work directory through os.Root: no
// symbolic link, ".." or absolute path can leave it, and an attempt fails
// with an error wrapping ErrPathEscape. Hard-linked files, devices, named
// pipes and sockets are refused with ErrSpecialFile. Names are relative to
// the work directory (a host path inside it is accepted too).

// ErrSpecialFile is wrapped by the file tools' errors for a hard-linked
// file, a device, a named pipe or a socket, which they refuse.
var ErrSpecialFile = rootfs.ErrSpecialFile

// ErrTooLarge is wrapped by ReadFile's error for a file over its limit.
var ErrTooLarge = rootfs.ErrTooLarge

// FileInfo describes a file in the sandbox; a symbolic link is described as
// itself.
type FileInfo = rootfs.Entry

// ReadFile returns the content of a regular file, refusing files larger
// than maxBytes (zero or less means 10 MiB) with ErrTooLarge.
func (s *Sandbox) ReadFile(ctx context.Context, name string, maxBytes int64) ([]byte, error) {
	f, err := s.tools(ctx)
	if err != nil {
		return nil, err
	}
	b, err := f.ReadFile(name, maxBytes)
	return b, wrapTool("read", err)
}

// WriteFile replaces (or creates) a file atomically: a temporary file beside
// it, then a rename. An existing file keeps its mode; perm is for a new one.
func (s *Sandbox) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	f, err := s.tools(ctx)
	if err != nil {
		return err
	}
	return wrapTool("write", f.WriteFile(name, data, perm))
}

// Edit replaces the only occurrence of old in a file with new, atomically,
// keeping the file's mode. When old occurs zero or several times nothing is
// written and the error is an *EditError saying how many.
func (s *Sandbox) Edit(ctx context.Context, name, old, new string) error {
	f, err := s.tools(ctx)
	if err != nil {
		return err
	}
	_, err = f.Edit(name, old, new)
	return wrapTool("edit", err)
}

// EditError is Edit's error when the text to replace is not unique.
type EditError = rootfs.EditError

// List returns the entries of a directory, sorted by name.
func (s *Sandbox) List(ctx context.Context, dir string) ([]FileInfo, error) {
	f, err := s.tools(ctx)
	if err != nil {
		return nil, err
	}
	es, err := f.List(dir)
	return es, wrapTool("list", err)
}

// Stat describes a file without following a final symbolic link.
func (s *Sandbox) Stat(ctx context.Context, name string) (FileInfo, error) {
	f, err := s.tools(ctx)
	if err != nil {
		return FileInfo{}, err
	}
	e, err := f.Stat(name)
	return e, wrapTool("stat", err)
}

// Remove removes a file, a symbolic link (not its target) or an empty
// directory.
func (s *Sandbox) Remove(ctx context.Context, name string) error {
	f, err := s.tools(ctx)
	if err != nil {
		return err
	}
	return wrapTool("remove", f.Remove(name))
}

// Mkdir creates a directory and any missing parents.
func (s *Sandbox) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	f, err := s.tools(ctx)
	if err != nil {
		return err
	}
	return wrapTool("mkdir", f.Mkdir(name, perm))
}

func (s *Sandbox) tools(ctx context.Context) (*rootfs.FS, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.fs()
}

// wrapTool prefixes a file tool's error once; errors.Is sees through it.
func wrapTool(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sandbox: %s: %w", op, err)
}
