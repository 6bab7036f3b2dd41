package dockersandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/paddockdev/paddock/sandbox/driver"
)

// Options are the optional settings of [New]. A nil *Options means the
// defaults.
type Options struct {
	// Key names the sandbox and so its container; empty means one derived
	// from the work directory's absolute path, so that the same directory
	// finds the same container.
	Key string
	// PathPrepend is put before PATH in every command's environment.
	PathPrepend []string
	// RemoveOnClose removes the container when the sandbox is closed;
	// by default it stays, running, for the next sandbox of the same key,
	// until Prune or Remove.
	RemoveOnClose bool
	Settings
}

// ExecMarker is the environment variable every command of a sandbox runs
// with; its value identifies the Exec, so that a timed-out command's
// processes can be found and killed inside the container.
const ExecMarker = "PADDOCK_EXEC"

// Sandbox runs commands in one long-lived container with Exec of the
// Engine API. It implements driver.Sandbox and is safe for concurrent use.
type Sandbox struct {
	eng       *Engine
	dir       string
	cfg       Config
	name      string
	mu        sync.Mutex // guards id
	id        string
	env       map[string]string
	prepend   []string
	remove    bool
	closeOnce sync.Once
	closeErr  error
}

// New returns a sandbox over the host work directory dir, in a container of
// image made (or reused: see [Engine.EnsureContainer]) with the rights of
// spec: Spec.Network attaches the container to Options.Network (default
// "bridge"); Spec.Writable binds each directory read-write at its own path
// (each must lie inside Options.AllowedRoots); Spec.Env is the container's
// environment; MemoryBytes, PIDs and CPUs replace the defaults. It fails
// with an error wrapping ErrInvalidConfig for settings it refuses,
// ErrImageNotFound for a missing image, ErrUnavailable when no engine
// answers.
func New(ctx context.Context, eng *Engine, image, dir string, spec driver.Spec, opts *Options) (*Sandbox, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("dockersandbox: %w", err)
	}
	if o.Key == "" {
		o.Key = "dir-" + filepath.Base(abs) + "-" + shortHash(abs)
	}
	set := o.Settings
	switch {
	case spec.Network && (set.Network == "" || set.Network == "none"):
		set.Network = "bridge"
	case !spec.Network && set.Network != "" && set.Network != "none":
		return nil, fmt.Errorf("%w: Options.Network is %q but the Spec allows no network", ErrInvalidConfig, set.Network)
	}
	set.Binds = append([]Bind(nil), set.Binds...)
	for _, w := range spec.Writable {
		set.Binds = append(set.Binds, Bind{Source: w, Target: filepath.Clean(w)})
	}
	for _, p := range o.PathPrepend {
		if !path.IsAbs(p) || strings.ContainsAny(p, ":\x00") {
			return nil, fmt.Errorf("%w: PATH entry %q: want an absolute container path without ':'", ErrInvalidConfig, p)
		}
	}
	cfg := Config{Key: o.Key, Image: image, WorkDir: abs, Env: spec.Env,
		MemoryBytes: spec.MemoryBytes, PIDs: int64(spec.PIDs), CPUs: spec.CPUs, Settings: set}
	c, err := eng.EnsureContainer(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &Sandbox{eng: eng, dir: abs, cfg: cfg, name: c.Name, id: c.ID, env: spec.Env, prepend: o.PathPrepend, remove: o.RemoveOnClose}, nil
}

func (s *Sandbox) containerID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

// reensure makes the container exist and run again, after Prune, Remove or
// someone else removed or stopped it.
func (s *Sandbox) reensure(ctx context.Context) error {
	c, err := s.eng.EnsureContainer(ctx, s.cfg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.id = c.ID
	s.mu.Unlock()
	return nil
}

func shortHash(s string) string {
	return ContainerName(s)[len(ContainerName(s))-8:]
}

// Name returns the container's name.
func (s *Sandbox) Name() string { return s.name }

// WorkDir returns the host work directory.
func (s *Sandbox) WorkDir() string { return s.dir }

// ContainerPath maps a host path inside the work directory to its path in
// the container; a path outside the work directory is an error wrapping
// ErrPathOutside.
func (s *Sandbox) ContainerPath(host string) (string, error) {
	rel, err := filepath.Rel(s.dir, filepath.Clean(host))
	if err != nil || !filepath.IsAbs(host) || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%w: %s is not inside %s", ErrPathOutside, host, s.dir)
	}
	return path.Join(Workdir, filepath.ToSlash(rel)), nil
}

// ErrPathOutside is returned by [Sandbox.ContainerPath] for a host path
// outside the work directory.
var ErrPathOutside = errors.New("dockersandbox: path outside the work directory")

// Close forgets the sandbox; with Options.RemoveOnClose it removes the
// container. It is idempotent.
func (s *Sandbox) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.closeErr = s.eng.flush(false)
		if s.remove {
			s.closeErr = errors.Join(s.closeErr, s.eng.Remove(ctx, s.name))
		}
	})
	return s.closeErr
}

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// environ returns the command's environment: the spec's Env with cmd.Env
// over it, PATH (with PathPrepend) and HOME when missing, and the exec
// marker.
func (s *Sandbox) environ(cmd *driver.Command, marker string) []string {
	env := driver.Environ(s.env, cmd.Env)
	if _, ok := env["PATH"]; !ok {
		env["PATH"] = defaultPath
	}
	if len(s.prepend) > 0 {
		env["PATH"] = strings.Join(s.prepend, ":") + ":" + env["PATH"]
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = Workdir
	}
	env[ExecMarker] = marker
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Exec runs cmd in the container through the Engine API, in
// /workspace/<cmd.Dir>. When ctx is done it kills, inside the container,
// every process of the command (see killScript) and returns with
// Result.Killed set. A command killed by the kernel's OOM killer (exit 137
// while the engine reports the container OOM-killed) has Result.OOM set.
func (s *Sandbox) Exec(ctx context.Context, cmd *driver.Command) (*driver.Result, error) {
	if len(cmd.Argv) == 0 {
		return nil, errors.New("dockersandbox: empty argv")
	}
	s.eng.mu.Lock()
	s.eng.busy[s.name]++
	s.eng.mu.Unlock()
	defer func() {
		s.eng.mu.Lock()
		s.eng.busy[s.name]--
		s.eng.mu.Unlock()
		s.eng.touch(s.name)
	}()

	var rnd [16]byte
	rand.Read(rnd[:])
	marker := hex.EncodeToString(rnd[:])
	cli := s.eng.cli
	start := time.Now()
	opts := client.ExecCreateOptions{
		AttachStdin:  cmd.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Env:          s.environ(cmd, marker),
		WorkingDir:   path.Join(Workdir, filepath.ToSlash(cmd.Dir)),
		Cmd:          cmd.Argv,
	}
	id := s.containerID()
	created, err := cli.ExecCreate(ctx, id, opts)
	if (cerrdefs.IsNotFound(err) || cerrdefs.IsConflict(err)) && ctx.Err() == nil {
		// Pruned, removed or stopped since: make it again, once.
		if err := s.reensure(ctx); err != nil {
			return nil, err
		}
		id = s.containerID()
		created, err = cli.ExecCreate(ctx, id, opts)
	}
	if err != nil {
		if ctx.Err() != nil {
			return &driver.Result{ExitCode: -1, Killed: true}, nil
		}
		return nil, fmt.Errorf("dockersandbox: exec create in %s: %w", s.name, err)
	}
	att, err := cli.ExecAttach(ctx, created.ID, client.ExecAttachOptions{})
	if err != nil {
		if ctx.Err() != nil {
			// The exec may have started before the attach failed.
			s.kill(id, marker)
			return &driver.Result{ExitCode: -1, Killed: true}, nil
		}
		return nil, fmt.Errorf("dockersandbox: exec start in %s: %w", s.name, err)
	}
	defer att.Close()

	stdinDone := make(chan struct{})
	if cmd.Stdin != nil {
		go func() {
			defer close(stdinDone)
			io.Copy(att.Conn, cmd.Stdin)
			att.CloseWrite()
		}()
	} else {
		close(stdinDone)
	}
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(cmd.Stdout, cmd.Stderr, att.Reader)
		copied <- err
	}()

	killed := false
	select {
	case <-copied:
	case <-ctx.Done():
		killed = true
		s.kill(id, marker)
		select {
		case <-copied:
		case <-time.After(5 * time.Second):
			// Something outside the command's tree holds the stream
			// open: stop reading it.
			att.Close()
			<-copied
		}
	}
	att.Close()
	// Closing the connection ends a stdin copy blocked on writing; one
	// blocked reading a caller's Stdin that never ends is left to end
	// with that reader rather than hold Exec.
	select {
	case <-stdinDone:
	case <-time.After(100 * time.Millisecond):
	}
	if killed {
		return &driver.Result{ExitCode: -1, Killed: true}, nil
	}
	code, err := s.exitCode(context.WithoutCancel(ctx), created.ID)
	if err != nil {
		return nil, err
	}
	res := &driver.Result{ExitCode: code}
	if code == 137 {
		res.OOM = s.oomDuring(context.WithoutCancel(ctx), id, start, time.Now())
	}
	return res, nil
}

// oomDuring reports whether the engine recorded an OOM kill in the
// container between since and until. (The engine's State.OOMKilled is only
// set when the container's main process is OOM-killed, not an exec's; its
// event stream records every OOM kill in the container's cgroup.)
func (s *Sandbox) oomDuring(ctx context.Context, id string, since, until time.Time) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stamp := func(t time.Time) string { return fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond()) }
	f := client.Filters{}.Add("type", "container").Add("container", id).Add("event", "oom")
	ev := s.eng.cli.Events(ctx, client.EventsListOptions{Since: stamp(since), Until: stamp(until.Add(500 * time.Millisecond)), Filters: f})
	for {
		select {
		case m := <-ev.Messages:
			if m.Action == "oom" {
				return true
			}
		case <-ev.Err:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// exitCode waits (briefly: the output has ended) for the exec to be
// reported finished and returns its exit code.
func (s *Sandbox) exitCode(ctx context.Context, id string) (int, error) {
	delay := 200 * time.Microsecond
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := s.eng.cli.ExecInspect(ctx, id, client.ExecInspectOptions{})
		if err != nil {
			return 0, fmt.Errorf("dockersandbox: exec inspect in %s: %w", s.name, err)
		}
		if !r.Running {
			return r.ExitCode, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("dockersandbox: exec in %s still running after its output ended", s.name)
		}
		time.Sleep(delay)
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// killScript kills, inside the container, every process of one Exec. It
// runs as the container's user, which owns the command's processes (no
// capability is needed to signal one's own processes).
//
// The Exec's processes are found three ways, until no new one appears:
// those whose environment carries the exec marker; those in the session
// of one of them (the Engine API starts each exec as a session leader, so
// the command's whole tree is in its session unless a process calls
// setsid); and the children of any process found. Each found process is
// stopped at once (SIGSTOP), so it can fork no more, and when the search
// ends all are killed with SIGKILL. It prints the pids it killed.
const killScript = `mark="$1"; self=$$; S=" "; n=0
add() { case "$S" in *" $1 "*) ;; *) S="$S$1 "; grew=1; kill -STOP "$1" 2>/dev/null;; esac; }
while [ $n -lt 50 ]; do
  n=$((n+1)); grew=0
  for f in $(grep -l -s -z -x -F "$mark" /proc/[0-9]*/environ 2>/dev/null); do
    p=${f#/proc/}; p=${p%/environ}; [ "$p" = "$self" ] || add "$p"
  done
  for d in /proc/[0-9]*; do
    p=${d#/proc/}; [ "$p" = "$self" ] && continue
    line=""; read -r line 2>/dev/null <"$d/stat" || continue
    set -- ${line##*) }
    case "$S" in *" $2 "*|*" $4 "*) add "$p";; esac
  done
  [ $grew = 0 ] && break
done
for p in $S; do kill -KILL "$p" 2>/dev/null; done
echo "killed:$S"`

// kill runs killScript for the Exec marked marker. When the script cannot
// run to its end (a fork bomb has used every pid the container may have, so
// not even the killer can start), it falls back to restarting the
// container, which kills every process in it, including other commands
// running at the time. It uses its own context: the command's is done.
func (s *Sandbox) kill(id, marker string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.killInside(ctx, id, marker); err == nil {
		return
	}
	timeout := 0
	s.eng.cli.ContainerRestart(ctx, id, client.ContainerRestartOptions{Signal: "KILL", Timeout: &timeout})
}

// killInside runs killScript and reports whether it ran to its end.
func (s *Sandbox) killInside(ctx context.Context, id, marker string) error {
	cli := s.eng.cli
	ex, err := cli.ExecCreate(ctx, id, client.ExecCreateOptions{
		AttachStdout: true,
		AttachStderr: true,
		Env:          []string{"PATH=" + defaultPath},
		Cmd:          []string{"/bin/sh", "-c", killScript, "paddock-kill", ExecMarker + "=" + marker},
	})
	if err != nil {
		return err
	}
	att, err := cli.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return err
	}
	var out strings.Builder
	stdcopy.StdCopy(&out, io.Discard, att.Reader)
	att.Close()
	code, err := s.exitCode(ctx, ex.ID)
	if err != nil {
		return err
	}
	if code != 0 || !strings.HasPrefix(out.String(), "killed:") {
		return fmt.Errorf("dockersandbox: kill in %s: exit %d: %q", s.name, code, out.String())
	}
	return nil
}
