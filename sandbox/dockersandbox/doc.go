// Package dockersandbox is the Docker sandbox backend: each sandbox is a
// hardened, long-lived container, and every command runs in it through the
// Engine API's exec (github.com/moby/moby/client; no docker CLI).
//
// # Engine and containers
//
// [Open] connects to the engine the environment names (DOCKER_HOST and the
// TLS variables, or the local socket), negotiating the API version, and
// opens the registry of the state root. [Engine.EnsureContainer] makes the
// container of a [Config], or reuses it: the config's settings, normalized
// and sorted, with [SchemaEpoch] and the image's digest (its ID, never its
// tag), hash to a value kept in the container's labels. A matching
// container is reused (started if it was stopped); a mismatch recreates it,
// never while a command runs in it ([ErrBusy]). Images are never pulled.
//
// Every container is created hardened, with no way to turn it off: a
// read-only root, tmpfs on /tmp, /var/tmp and /run, no network unless
// asked, all capabilities dropped, no-new-privileges, docker-init as PID 1,
// limits on pids, memory (with memory+swap equal to it: no swap) and CPUs,
// and a nofile ulimit. The work directory is bound at /workspace and the
// container runs as the uid:gid that owns it, so files written inside keep
// their owner and mode on the host.
//
// # Registry and management
//
// The registry ([RegistryPath], in the state root) records each
// container's name, key, creation, last use, image digest and config hash.
// [Engine.Reconcile], [Engine.List], [Engine.Remove], [Engine.Recreate] and
// [Engine.Prune] give hosts the seed's `sandbox list/remove/recreate` and
// idle/age pruning; every one first reconciles the registry with the
// engine by label query, so a container the registry lost is still found.
//
// # Sandboxes
//
// [New] returns a [Sandbox], a driver.Sandbox for sandbox.New, over a work
// directory and a driver.Spec. On timeout or cancellation Exec kills the
// command's process tree inside the container, from inside the container:
// killing the client side of an exec leaves the command running
// (moby/moby#9098).
//
// # On-disk format
//
// The registry is one JSON file, [RegistryFile] with schema
// "paddock.dockersandbox.registry" and version 1, written atomically
// (temporary file, fsync, rename) under an flock of a lock file beside it.
//
// # Security
//
// The container shares the host's kernel: a kernel exploit escapes it. The
// seccomp profile is Docker's default limited to the native system-call
// ABI: a 32-bit program's calls (i386 or x32 on x86-64, 32-bit ARM on
// arm64) are refused, which closes entry points with a history of kernel
// bugs and makes each exec faster, since runc compiles the filter for every
// process it starts (about 47 ms instead of 55 per exec on the test
// machine). [SeccompEngineDefault] keeps the engine's own profile. The
// engine's default AppArmor profile applies unless another is named.
// "unconfined" is refused for both, as are the host and container:
// networks, and binds of the Docker socket, /etc, /proc, /sys, /dev, / or
// anything outside [Settings.AllowedRoots].
//
// The kill of a timed-out command runs inside the container and finds the
// command's processes by an environment marker, by the exec's session, and
// by parentage, stopping each as it is found and then killing all. When it
// cannot run (a fork bomb has taken every pid the container may have), the
// container is restarted instead, which kills every process in it,
// including other commands running at the time. A process that both
// clears its environment and calls setsid, after its parent has died, is
// not found: it lives on in the container (within its limits) until the
// container is removed. Use RemoveOnClose, or Remove, for untrusted work
// that must leave nothing behind.
//
// # Concurrency
//
// Engine and Sandbox are safe for concurrent use; several Execs may run in
// one container at once.
package dockersandbox
