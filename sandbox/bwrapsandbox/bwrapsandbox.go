// Package bwrapsandbox is the bubblewrap sandbox backend: every command
// runs under bwrap(1) in fresh user, PID, IPC, UTS and network namespaces,
// with the system read-only, the work directory read-write at /workspace, a
// fresh /proc and /dev, and a private /tmp.
//
// [Probe] says, with bubblewrap's own words, when bubblewrap cannot run on
// this machine (not installed, user namespaces disabled, no permission).
// [New] runs the probe and fails rather than fall back to running without
// isolation.
//
// # Security
//
// The sandbox sees the host's /usr, /bin, /lib, /lib64, /sbin and a few
// files of /etc read-only, and nothing else of the host file system but the
// work directory and Spec.Writable. Without Spec.Network it has only a
// loopback interface. Every process of a command lives in the command's own
// PID namespace; bwrap runs with --die-with-parent, so killing bwrap (which
// Exec does when its context is done) kills them all.
//
// A command killed by signal N inside the sandbox is reported as exit
// status 128+N: bubblewrap's init reports it so, as a shell does.
//
// Spec.PIDs limits the processes and threads of a command (a fork bomb
// stops there): the command starts under prlimit(1) with RLIMIT_NPROC set,
// soft and hard, inside its own user namespace, where Linux (5.14 and
// later) counts only that namespace's tasks and no process has the
// capability to raise the limit. The kernel exempts uid 0 from that limit,
// so New refuses PIDs, with the reason, when the host runs as root, when
// prlimit is missing, or when the kernel is older.
//
// It does not limit memory or CPU: a Spec that asks for those is refused
// with errors.ErrUnsupported (use dockersandbox). It does not hide
// the kernel: a kernel exploit escapes it. Files the host can read in /usr
// and /etc are readable inside.
package bwrapsandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paddockdev/paddock/internal/proctree"
	"github.com/paddockdev/paddock/sandbox/driver"
)

// Workdir is where the work directory appears inside the sandbox.
const Workdir = "/workspace"

// Options are the optional settings of [New]. A nil *Options means the
// defaults.
type Options struct {
	// Bwrap is the bubblewrap binary; empty means "bwrap" on PATH.
	Bwrap string
}

// ErrUnavailable is returned by [Probe] and [New] when bubblewrap cannot run
// here; the error says why.
var ErrUnavailable = errors.New("bwrapsandbox: bubblewrap cannot run here")

var probeCache sync.Map // bwrap path -> error (nil when it works)

// Probe checks that bubblewrap can create the namespaces the sandbox uses,
// by running it once (the result is cached per binary). The error wraps
// ErrUnavailable and carries bubblewrap's own message.
func Probe(ctx context.Context, bwrap string) error {
	if bwrap == "" {
		bwrap = "bwrap"
	}
	if v, ok := probeCache.Load(bwrap); ok {
		err, _ := v.(error)
		return err
	}
	err := probe(ctx, bwrap)
	probeCache.Store(bwrap, err)
	return err
}

func probe(ctx context.Context, bwrap string) error {
	path, err := exec.LookPath(bwrap)
	if err != nil {
		return fmt.Errorf("%w: %s not found (install it: apt-get install bubblewrap): %v", ErrUnavailable, bwrap, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args := append(systemArgs(), "--unshare-all", "--die-with-parent", "--new-session", "--proc", "/proc", "--dev", "/dev", "--", "true")
	out, err := exec.CommandContext(ctx, path, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s %s: %v: %s", ErrUnavailable, path, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// Sandbox runs each command under bubblewrap. It implements driver.Sandbox
// and is safe for concurrent use.
type Sandbox struct {
	bwrap   string
	prlimit string // set when spec.PIDs > 0
	dir     string
	spec    driver.Spec
}

// New returns a sandbox over the work directory dir with the rights of
// spec. It fails with an error wrapping ErrUnavailable when bubblewrap
// cannot run here, and with one wrapping errors.ErrUnsupported for a spec
// it cannot honour.
func New(ctx context.Context, dir string, spec driver.Spec, opts *Options) (*Sandbox, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Bwrap == "" {
		o.Bwrap = "bwrap"
	}
	if spec.MemoryBytes != 0 || spec.CPUs != 0 {
		return nil, fmt.Errorf("bwrapsandbox: memory and CPU limits need cgroups, which this backend does not manage (use dockersandbox): %w", errors.ErrUnsupported)
	}
	if spec.PIDs < 0 {
		return nil, fmt.Errorf("bwrapsandbox: PIDs limit %d is negative", spec.PIDs)
	}
	var prlimit string
	if spec.PIDs > 0 {
		var err error
		if prlimit, err = pidsLimiter(); err != nil {
			return nil, fmt.Errorf("bwrapsandbox: PIDs limit: %w", err)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bwrapsandbox: %w", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("bwrapsandbox: work directory %s: not a directory (%v)", abs, err)
	}
	for _, w := range spec.Writable {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("bwrapsandbox: writable path %q is not absolute", w)
		}
		if fi, err := os.Stat(w); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("bwrapsandbox: writable path %s: not a directory (%v)", w, err)
		}
	}
	if err := Probe(ctx, o.Bwrap); err != nil {
		return nil, err
	}
	path, _ := exec.LookPath(o.Bwrap)
	return &Sandbox{bwrap: path, prlimit: prlimit, dir: abs, spec: spec}, nil
}

// WorkDir returns the host work directory.
func (s *Sandbox) WorkDir() string { return s.dir }

// Close does nothing: each Exec's namespaces end with it.
func (s *Sandbox) Close(context.Context) error { return nil }

// Exec runs cmd under bubblewrap, in /workspace/<cmd.Dir>, with exactly
// cmd.Env (plus the spec's Env) as its environment.
func (s *Sandbox) Exec(ctx context.Context, cmd *driver.Command) (*driver.Result, error) {
	if len(cmd.Argv) == 0 {
		return nil, errors.New("bwrapsandbox: empty argv")
	}
	args := s.args(cmd)
	c := exec.Command(s.bwrap, args...)
	c.Env = []string{} // bwrap itself needs nothing; --setenv passes the command's
	c.Stdin, c.Stdout, c.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
	res, err := proctree.Run(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("bwrapsandbox: %w", err)
	}
	return &driver.Result{ExitCode: res.ExitCode, Signal: res.Signal, Killed: res.Killed}, nil
}

// args builds bwrap's command line for cmd.
func (s *Sandbox) args(cmd *driver.Command) []string {
	args := systemArgs()
	args = append(args,
		"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent", "--new-session",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--tmpfs", "/run",
		"--hostname", "sandbox",
	)
	if !s.spec.Network {
		args = append(args, "--unshare-net")
	} else {
		for _, f := range []string{"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"} {
			args = append(args, "--ro-bind-try", f, f)
		}
	}
	for _, w := range s.spec.Writable {
		args = append(args, "--bind", w, w)
	}
	args = append(args, "--bind", s.dir, Workdir, "--chdir", filepath.Join(Workdir, filepath.FromSlash(cmd.Dir)))
	args = append(args, "--clearenv")
	env := driver.Environ(s.spec.Env, cmd.Env)
	if _, ok := env["PATH"]; !ok {
		env["PATH"] = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = Workdir
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--setenv", k, env[k])
	}
	args = append(args, "--")
	if s.prlimit != "" {
		n := strconv.Itoa(s.spec.PIDs)
		args = append(args, s.prlimit, "--nproc="+n+":"+n, "--")
	}
	return append(args, cmd.Argv...)
}

// pidsLimiter returns the prlimit(1) binary that enforces Spec.PIDs, or
// an error wrapping errors.ErrUnsupported that says why it cannot.
func pidsLimiter() (string, error) {
	if os.Geteuid() == 0 {
		return "", fmt.Errorf("the kernel exempts uid 0 from RLIMIT_NPROC, so the limit would not bind a host running as root (run it as an unprivileged user, or use dockersandbox): %w", errors.ErrUnsupported)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", err
	}
	release := unix.ByteSliceToString(u.Release[:])
	if !kernelAtLeast(release, 5, 14) {
		return "", fmt.Errorf("kernel %s counts RLIMIT_NPROC per user, not per user namespace (needs 5.14 or later): %w", release, errors.ErrUnsupported)
	}
	path, err := exec.LookPath("prlimit")
	if err != nil {
		return "", fmt.Errorf("prlimit(1) not found (install util-linux): %w", errors.ErrUnsupported)
	}
	if path, err = filepath.EvalSymlinks(path); err != nil {
		return "", err
	}
	for _, d := range systemDirs {
		if strings.HasPrefix(path, d+"/") {
			return path, nil
		}
	}
	return "", fmt.Errorf("prlimit is %s, outside the system directories the sandbox sees: %w", path, errors.ErrUnsupported)
}

// kernelAtLeast reports whether a kernel release string such as
// "6.1.0-18-amd64" is at least major.minor.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	digits := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(parts[1])
	}
	mi, err2 := strconv.Atoi(parts[1][:digits])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// systemDirs are the host directories the sandbox sees read-only.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// systemArgs binds the host's system directories read-only, keeping the
// merged-/usr symlinks (/bin -> usr/bin) as symlinks.
func systemArgs() []string {
	var args []string
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				args = append(args, "--symlink", target, d)
			}
		default:
			args = append(args, "--ro-bind", d, d)
		}
	}
	for _, f := range []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/ssl", "/etc/ca-certificates", "/etc/passwd", "/etc/group", "/etc/localtime"} {
		args = append(args, "--ro-bind-try", f, f)
	}
	return args
}
