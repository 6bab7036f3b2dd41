// Package sandbox is where a worker agent runs: a snapshot of files chosen
// from the user's project, copied into a read-only baseline (input/) and a
// working copy (work/), with a manifest; and the portable [Sandbox] that runs
// the worker's commands and file tools there through a backend.
//
// # Sandbox and backends
//
// A [Sandbox] wraps a backend's [driver.Sandbox] (sandbox/dirsandbox: a
// plain directory, no isolation; sandbox/bwrapsandbox: bubblewrap
// namespaces; dockersandbox to come). It does, once for every backend, what
// the backends must not each get wrong: it validates each [ExecRequest], maps the
// working directory into the work directory (a path outside is an error
// wrapping [ErrPathEscape], never a fallback to the root), applies the
// timeout, caps output head+tail, and classifies how a command ended
// ([ExitReason]). On timeout or cancellation the backend kills the command's
// whole process tree and Exec returns promptly. The file tools (ReadFile,
// WriteFile, Edit, List, Stat, Remove, Mkdir) work on the work directory
// through os.Root: no symbolic link, ".." or absolute path leaves it, and
// hard links, devices, FIFOs and sockets are refused ([ErrSpecialFile]).
// sandbox/sandboxtest is the conformance suite every backend passes.
//
// # Preparing
//
// [Prepare] builds
//
//	<stateRoot>/workspaces/<wsId>/sandboxes/<runId>/<agentId>/
//	  manifest.json
//	  input/      the baseline, read-only
//	  work/       the worker's copy and working directory
//	  proposal/   where the worker's proposal goes
//
// [Paths] names those directories, [Load] reopens a prepared sandbox, and
// [Destroy] removes one. [Prepared] is only the file snapshot; a backend
// over its work directory, wrapped in a [Sandbox], runs processes in it,
// with [Prepared.Env] in [Options.Env].
//
// # Selection policy
//
// A [Selection] holds relative paths, directories and globs (see its doc for
// the exact syntax). Prepare refuses, with a [*SelectionError]: absolute
// paths, ".." elements and NUL bytes; paths inside .git, node_modules and
// dist unless [PrepareOptions.Allow] allows them; the state directory when
// it is inside the project (always); symbolic links, unless
// [CopySymlinksInside] is set and the link resolves within the selection;
// regular files with more than one hard link; devices, FIFOs and sockets.
// Caps on the number of files and bytes ([PrepareOptions.MaxFiles],
// [PrepareOptions.MaxBytes]) are checked before anything is copied.
//
// # Errors
//
// Escapes wrap [ErrPathEscape]; blocked paths wrap [ErrBlocked]; unsafe
// files wrap [ErrUnsafeFile]; caps give a [*LimitError] wrapping [ErrLimit];
// preparing an existing sandbox wraps fs.ErrExist. A failed Prepare leaves
// nothing behind.
//
// # Concurrency
//
// Prepare, Load and Destroy may be called concurrently for different
// sandboxes. Two Prepares of the same sandbox never mix: one of them fails
// with fs.ErrExist. Destroy of a sandbox being prepared or used is the
// host's mistake to avoid. Prepare copies with a bounded number of
// goroutines ([PrepareOptions.Workers]), all finished when it returns.
//
// # Performance
//
// Prepare walks the selection once, then copies files in parallel. Each
// source file is read once: on file systems with reflinks (Btrfs, XFS) both
// copies are clones made with the FICLONE ioctl and the file is only read to
// be hashed; elsewhere the bytes read are hashed and written to both trees.
// copy_file_range is not used: the bytes must reach user space for the hash
// anyway, so an in-kernel copy would add a second read, and its reflinking
// is what FICLONE already does. Destination files are bare descriptors on
// Linux and get their times through the descriptor, and the workers make
// the directories as they reach them. The cost that remains is creating
// two files per selected file and hashing every byte: on 2 cores without
// SHA extensions Prepare takes about 1.6 times a `cp -a` of the selection
// (BenchmarkPrepare prints both, with their CPU time and the hashing
// alone); more cores, SHA extensions or reflinks bring it below.
//
// # Security
//
// The project is read through an [os.Root], so no selected path and no
// symbolic link can make Prepare read outside the project, even if the
// project changes while it is prepared; files that change between the walk
// and the copy (another inode, size or time) fail the Prepare.
//
// Hard-linked files are refused because a hard link inside the project may
// be the same file as one outside it (say ~/.ssh/id_ed25519): copying it
// would not let a worker write to it, but it would put secrets from outside
// the project into the sandbox.
//
// Symbolic links are copied verbatim, as links, only when their target
// stays inside the selection, so a link in work/ never leads out of work/.
// Absolute link targets are always refused: they would name the project
// itself, or anything, rather than the sandbox copy.
//
// What this package does NOT protect against: a process in work/ is only
// contained by the backend that runs it. With a plain directory backend it
// can write anywhere its user can, manifest.json and input/ included (input/
// is read-only to discourage mistakes, not to stop an attacker, and root
// ignores permission bits). GIT_CEILING_DIRECTORIES ([Prepared.Env]) stops
// git's repository discovery only; it is not a security boundary. The
// check that the state directory is inside the project is lexical.
//
// # On-disk format
//
// manifest.json is a JSON object with "schema": "paddock.sandbox.manifest"
// and "version": 1, the run and agent ids, "createdAt", "base"
// ({"projectRoot", "gitHead"}), the "selection" as given, "files" sorted by
// path (each {"path", "size", "mode" (the permission bits as a number),
// "mtime" (RFC 3339), "sha256" (hex)}), "symlinks" sorted by path (each
// {"path", "link"}) and "totalBytes". [Manifest] round-trips it.
package sandbox
