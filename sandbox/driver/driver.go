// Package driver defines the interface that sandbox backends implement.
//
// Hosts do not use this package: they use the portable *sandbox.Sandbox,
// which validates requests, applies timeouts and output caps, maps paths,
// and wraps errors, once, for every backend. A backend (dirsandbox,
// bwrapsandbox, dockersandbox) implements [Sandbox] and nothing more; the
// conformance suite in sandboxtest defines what that means.
package driver

import (
	"context"
	"io"
	"strings"
	"syscall"
)

// Sandbox is one sandbox of a backend: a place where commands run with the
// sandbox's work directory as their file system view of the project.
//
// Implementations must be safe for concurrent use: several Execs may run at
// once.
type Sandbox interface {
	// Exec runs cmd and waits for it.
	//
	// cmd has been validated by the portable layer: Argv is non-empty,
	// Dir is a clean, slash-separated path relative to the work
	// directory ("." for the work directory itself) that exists, and Env
	// is the complete environment. Exec writes the command's output to
	// cmd.Stdout and cmd.Stderr as it comes; it must not buffer all of
	// it.
	//
	// When ctx is done, Exec must kill every process the command started
	// (not only the first) and return promptly, with Result.Killed set.
	// A non-zero exit or a signal is a Result, not an error: the error is
	// for a command that could not be run at all, and must then satisfy
	// errors.Is(err, errors.ErrUnsupported) when the backend cannot do
	// what cmd asks.
	Exec(ctx context.Context, cmd *Command) (*Result, error)

	// WorkDir returns the host directory that is the sandbox's work
	// directory. The portable layer's file tools operate on it through
	// os.Root; a backend that has no host directory (a remote engine)
	// returns "" and the file tools report errors.ErrUnsupported.
	WorkDir() string

	// Close releases the sandbox's resources (a container, a mount). It
	// does not remove the work directory. Close is idempotent.
	Close(ctx context.Context) error
}

// Command is what Exec runs.
type Command struct {
	Argv   []string
	Dir    string   // relative to the work directory; "." is the work directory
	Env    []string // KEY=VALUE, the complete environment
	Stdin  io.Reader
	Stdout io.Writer // never nil
	Stderr io.Writer // never nil
}

// Result is how a command ended.
type Result struct {
	// ExitCode is the exit status, or -1 when a signal ended the command.
	ExitCode int
	// Signal is the signal that ended the command, or 0.
	Signal syscall.Signal
	// Killed is true when Exec killed the command because ctx was done.
	Killed bool
	// OOM is true when the backend knows the command was killed for using
	// too much memory.
	OOM bool
}

// Spec describes what a sandbox may do. Its zero value is the most
// restrictive sandbox: no network, only the work directory writable, no
// extra environment, the backend's default limits.
//
// A backend that cannot honour a field set to a non-zero value must refuse
// the spec with an error wrapping errors.ErrUnsupported; it never ignores a
// field.
type Spec struct {
	// Network allows the sandbox to reach the network.
	Network bool
	// Writable lists extra host directories the sandbox may write, mounted
	// at the same path inside.
	Writable []string
	// Env is added to every command's environment, under the command's
	// own Env: a key in both takes the command's value (see Environ).
	Env map[string]string
	// MemoryBytes caps the memory of the sandbox's processes; zero means
	// the backend's default.
	MemoryBytes int64
	// PIDs caps the number of processes; zero means the backend's default.
	PIDs int
	// CPUs caps CPU time in cores (1.5 = one and a half); zero means the
	// backend's default.
	CPUs float64
}

// Environ is a command's environment as a backend builds it: spec's Env,
// then the command's Env over it (a key in both takes the command's value).
func Environ(spec map[string]string, cmd []string) map[string]string {
	env := make(map[string]string, len(spec)+len(cmd))
	for k, v := range spec {
		env[k] = v
	}
	for _, kv := range cmd {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env
}
