// Package crashfs is an in-memory, fault-injecting implementation of
// [vfs.FS] for crash-matrix tests of durable stores.
//
// A test runs a workload against an [FS], arms a crash at the n-th mutating
// operation with [FS.CrashAt], and, once the crash has happened, re-opens the
// store on a fresh file system built from each of the possible disk images
// ([FS.Images], [Image.FS]), checking its invariants there. Running the
// workload once without a crash and reading [FS.Ops] gives the number of
// crash points to try; [FS.CrashNow] models power loss after the workload.
//
// # Model
//
// A regular file is an inode with two contents: current, what the running
// process sees, and durable, what is on stable storage. [vfs.File.Sync] sets
// durable to current. A new file's durable content is empty.
//
// A directory is an inode too, holding two tables of entries (name to
// inode): the current entries and the durable ones. Creating a file
// (OpenFile with O_CREATE), Rename, Remove, RemoveAll and MkdirAll change
// only current entries. [FS.SyncDir] of a directory sets its durable entries
// to its current ones: it persists which names exist in that directory and
// which inode each names, not the inodes' data, which only File.Sync makes
// durable. A new directory has no durable entries, and it becomes durable
// itself only when its parent is synced, so a store that creates directories
// must sync each new directory's parent as well (the strict POSIX reading;
// some file systems, ext4 among them, are more forgiving). The root always
// exists. Directories have no separate data; syncing a directory whose
// entries were synced already is a no-op.
//
// Syncing a file does not sync its name: a file created, written and synced
// but whose directory was never synced is lost when names are dropped.
// Handles point at inodes, so after a Rename or Remove an open handle keeps
// reading and writing the same file, as on POSIX.
//
// # Operations and crashes
//
// These operations are mutating and counted, whether they succeed or fail:
// File.Write, File.Sync, File.Truncate, Rename, Remove, RemoveAll, MkdirAll,
// SyncDir, and OpenFile with O_CREATE or O_TRUNC. Reads, Seek, Stat, ReadDir,
// Close and OpenFile without those flags are not counted, nor is anything
// done with a closed handle, nor a Write or Truncate through a handle not
// opened for writing. [FS.WriteFile], [FS.ReadFile] and [FS.Walk] are for
// the test itself and are not counted either.
//
// When the armed operation is about to run, it does not run; a Write first
// applies the first half of its buffer (len/2 bytes) to the file's current
// content, modelling a torn write. The file system then records the crash
// images and from then on every operation, reads included, returns
// [ErrCrashed].
//
// # Images
//
// A crash leaves eight images: each combination of one data mode, applied to
// every file, and one namespace mode. With p the length of the longest
// common prefix of a file's durable and current contents, the data modes
// are:
//
//   - keep: the current content.
//   - drop: the durable content.
//   - cut: current[:k], where k = roundDown(p+(len(current)-p)/2, 512) but
//     at least p, so a partly persisted append never loses data that was
//     already durable; when current is no longer than p (a truncation, or
//     nothing changed) the content is current.
//   - zero: len(current) bytes, [0,p) from current and zeros after, as when
//     the size reached the disk but the data did not.
//
// Cut and zero model appends and rewrites from the start well. For an
// overwrite in the middle of a file they are cruder: cut ends the file at k
// even if that drops an unchanged tail, and zero zeroes the tail.
//
// The namespace modes are keepnames (the current entries of every
// directory) and dropnames (the durable entries, followed from the root;
// files and directories not reachable that way do not exist). Image names
// are "data/namespace", for example "cut/dropnames".
//
// Every image preserves whatever was made durable by File.Sync and SyncDir
// before the crash, so a store's durability claims can be checked against
// all eight.
//
// # Errors
//
// Errors look like the operating system's: *fs.PathError (and *os.LinkError
// for Rename) wrapping fs.ErrNotExist, fs.ErrExist, fs.ErrClosed or a
// syscall.Errno such as ENOTDIR, EISDIR or ENOTEMPTY. Paths are cleaned and
// treated as slash-separated; a relative path is taken relative to the root.
// After a crash every operation returns [ErrCrashed] itself, unwrapped.
//
// # Concurrency
//
// An FS and its files are safe for concurrent use; one mutex serialises every
// operation, so the operation count is well defined as long as the workload
// issues its operations in a deterministic order.
package crashfs
