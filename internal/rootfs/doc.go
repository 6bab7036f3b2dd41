// Package rootfs provides traversal-proof file tools over one directory: the
// work directory of a worker sandbox. It is the mechanism behind the file
// tools of sandbox.Sandbox (read, write, edit by exact string replacement,
// list, stat, remove, mkdir) and its host-to-sandbox path mapping.
//
// An [FS] is opened on a directory with [Open]. Every method takes a path
// relative to that directory ("" and "." are the directory itself); an
// absolute path is accepted only when it lies inside the directory, as
// [FS.Resolve] maps it. Every file is reached through an [os.Root], so no
// symbolic link, ".." or absolute path can leave the directory, and symbolic
// links that stay inside it work as usual.
//
// Beyond what os.Root does, the tools refuse to read or replace anything
// but plain regular files: hard-linked files, devices, named pipes and
// sockets are refused. Writes are atomic (a temporary file beside the
// target, then a rename) and keep the mode of the file they replace.
//
// # Errors
//
// Errors are [*fs.PathError] values naming the path as the caller gave it,
// never the host directory, so they can be shown to a model. Their causes
// satisfy errors.Is with:
//
//   - [ErrPathEscape] for any path that leaves the root: lexically (".."),
//     absolutely, or through a symbolic link (os.Root's own escape error is
//     turned into ErrPathEscape);
//   - [ErrSpecialFile] for hard-linked files, devices, named pipes, sockets;
//   - [fs.ErrNotExist] for missing files;
//   - [fs.ErrInvalid] for a path with a NUL byte, one longer than [MaxPath]
//     bytes or with an element longer than [MaxName] bytes, an empty edit,
//     and removing the root;
//   - [ErrTooLarge] for files over the read limit;
//   - syscall.EISDIR when a file operation names a directory.
//
// [FS.Edit] returns an [*EditError] when its old string does not occur
// exactly once.
//
// # Concurrency
//
// An FS is safe for concurrent use by multiple goroutines. Writes and edits
// of one file through one FS are serialized; everything else runs in
// parallel.
//
// # Security
//
// The package keeps the tools' paths inside the directory. It does not
// protect against:
//
//   - other processes, including a sandboxed agent's own commands, changing
//     the tree at any time. Races with such changes cannot make a tool reach
//     outside the root, because every step goes through file descriptors
//     opened beneath it (openat with O_NOFOLLOW, as os.Root does), but they can
//     make a tool fail, or act on a different file inside the root than a
//     previous check saw. An [FS.Edit] may lose a change another process made
//     between its read and its write;
//   - mount points inside the directory: bind mounts and other file systems
//     are crossed like directories, so a bind mount of a host directory
//     exposes that directory;
//   - a /proc or /sys mounted or bound inside the directory: their files
//     (a process's environ, mem, maps) are readable like any other. Their
//     magic links (/proc/self/root, /proc/self/fd/N) read as absolute
//     symbolic links and are refused, as is a symbolic link to /proc;
//   - hard links that stay inside the tree: the other names of a hard-linked
//     file cannot be found, so every hard-linked file is refused;
//   - opening a device or named pipe that replaced a regular file between
//     the type check and the open: the file is opened non-blocking and
//     without becoming a controlling terminal, checked again and refused,
//     but opening some devices has effects of its own;
//   - disk usage: a write may fill the file system;
//   - absolute symbolic links that point back inside the directory: os.Root
//     refuses them as escapes, and so does this package.
//
// Hard-link detection, non-blocking opens and the limits on path length are
// Unix-specific; on other systems hard links are not detected. The package
// is tested on Linux.
package rootfs
