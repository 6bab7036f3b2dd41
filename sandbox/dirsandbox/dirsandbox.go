// Package dirsandbox is the plain-directory sandbox backend: commands run
// directly on the host, in the sandbox's work directory.
//
// # Security
//
// dirsandbox provides NO isolation. A command it runs has the host user's
// full rights: it can read and write any file the user can (including the
// project itself and ~/.ssh), reach the network, and see every process. It
// only sets the working directory, scrubs the environment to an allow-list
// (so the host's secrets in environment variables do not leak by default),
// runs the command in a new session and kills that session's process group
// on timeout or cancellation. A process that leaves the group (setsid) is
// not killed. Use it for trusted commands, tests and development; use
// bwrapsandbox or dockersandbox for an untrusted worker.
package dirsandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/paddockdev/paddock/internal/proctree"
	"github.com/paddockdev/paddock/sandbox/driver"
)

// DefaultEnvAllow is the environment allow-list when Options.EnvAllow is
// nil: what a typical build or test command needs, and no credentials.
var DefaultEnvAllow = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "TMPDIR", "GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "CGO_ENABLED"}

// Options are the optional settings of [New]. A nil *Options means the
// defaults.
type Options struct {
	// EnvAllow lists the host environment variables a command inherits
	// (when the command's own environment does not set them). Nil means
	// DefaultEnvAllow; an empty non-nil list inherits nothing.
	EnvAllow []string
	// Getenv replaces os.Getenv, for tests.
	Getenv func(string) string
}

// Sandbox runs commands in a work directory. It implements
// driver.Sandbox and is safe for concurrent use.
type Sandbox struct {
	dir  string
	base []string // the allowed host environment, KEY=VALUE
}

// New returns a sandbox whose work directory is dir, which must be an
// existing directory. Since it isolates nothing, it honours only a spec
// that asks for nothing it cannot give: spec.Network must be true (the
// host's network is always reachable) and resource limits must be zero;
// otherwise the error wraps errors.ErrUnsupported. spec.Env is added to
// every command's environment; spec.Writable needs nothing (everything the
// user can write is writable).
func New(dir string, spec driver.Spec, opts *Options) (*Sandbox, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if !spec.Network {
		return nil, fmt.Errorf("dirsandbox: cannot keep commands off the network (it isolates nothing); use bwrapsandbox or dockersandbox, or set Spec.Network: %w", errors.ErrUnsupported)
	}
	if spec.MemoryBytes != 0 || spec.PIDs != 0 || spec.CPUs != 0 {
		return nil, fmt.Errorf("dirsandbox: resource limits (memory, pids, cpus): %w", errors.ErrUnsupported)
	}
	if o.EnvAllow == nil {
		o.EnvAllow = DefaultEnvAllow
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("dirsandbox: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("dirsandbox: work directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("dirsandbox: work directory %s is not a directory", abs)
	}
	s := &Sandbox{dir: abs}
	for _, k := range o.EnvAllow {
		if v := o.Getenv(k); v != "" {
			s.base = append(s.base, k+"="+v)
		}
	}
	for _, k := range sortedKeys(spec.Env) {
		s.base = append(s.base, k+"="+spec.Env[k])
	}
	return s, nil
}

// WorkDir returns the work directory.
func (s *Sandbox) WorkDir() string { return s.dir }

// Close does nothing: a directory sandbox holds no resources.
func (s *Sandbox) Close(context.Context) error { return nil }

// Exec runs cmd in the work directory, with the allowed host environment
// overlaid by cmd.Env, in a new session whose process group is killed when
// ctx is done.
func (s *Sandbox) Exec(ctx context.Context, cmd *driver.Command) (*driver.Result, error) {
	if len(cmd.Argv) == 0 {
		return nil, errors.New("dirsandbox: empty argv")
	}
	dir := filepath.Join(s.dir, filepath.FromSlash(cmd.Dir))
	if dir != s.dir && !strings.HasPrefix(dir, s.dir+string(filepath.Separator)) {
		return nil, fmt.Errorf("dirsandbox: working directory %q is outside the work directory", cmd.Dir)
	}
	c := exec.Command(cmd.Argv[0], cmd.Argv[1:]...)
	c.Dir = dir
	c.Env = mergeEnv(s.base, cmd.Env)
	c.Stdin, c.Stdout, c.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr // a nil Stdin reads /dev/null
	// Resolve the program with the command's PATH, not the host's.
	if !strings.Contains(cmd.Argv[0], "/") {
		path, err := lookPath(cmd.Argv[0], c.Env)
		if err != nil {
			return nil, fmt.Errorf("dirsandbox: %w", err)
		}
		c.Path = path
		c.Err = nil
	}
	res, err := proctree.Run(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("dirsandbox: %w", err)
	}
	return &driver.Result{ExitCode: res.ExitCode, Signal: res.Signal, Killed: res.Killed}, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mergeEnv returns base overlaid by over (later entries win), without
// duplicate keys.
func mergeEnv(base, over []string) []string {
	index := map[string]int{}
	var out []string
	for _, kv := range append(append([]string(nil), base...), over...) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := index[k]; ok {
			out[i] = kv
			continue
		}
		index[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// lookPath finds file in the PATH of env.
func lookPath(file string, env []string) (string, error) {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue // never the current directory
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found in the command's PATH: %w", file, exec.ErrNotFound)
}
