// Package diff is the line diff engine behind paddock's proposals: it writes
// the hunks of a git-compatible unified diff, git binary patches, git's
// rename similarity score, and a three-way line merge like
// `git merge-file`, all in Go, with no git binary and no git configuration.
//
// # Line diff
//
// [Unified] splits both sides into lines (each with its terminator, so
// CRLF, a missing final newline and arbitrary bytes are kept exactly),
// strips the common prefix and suffix, sets aside the lines that cannot
// match (as git does: those found on one side only, and frequent ones
// among them), and runs Myers' O(ND) algorithm in linear space on what is
// left, visiting diagonals in git's order and with git's cost bound, so
// that very different large inputs stay fast. Change groups are then slid
// as git slides them (to line up with a change on the other side, or where
// git's indent heuristic puts them), and hunks are cut and merged with
// git's context rules. The output is what `git diff` prints after the file
// header, function context in the "@@" line included, byte for byte for
// nearly every input (the tests measure it against real git, with and
// without the heuristic's cost bounds at work); where it is not, it is
// still a diff that `git apply` accepts and that gives the same bytes.
//
// # Binary files
//
// [IsBinary] is git's test (a NUL byte in the first 8000 bytes);
// [BinaryPatch] writes a "GIT binary patch" body with zlib and base85
// "literal" hunks in both directions, and [BlobID] gives the object ids
// that the "index" line of a binary patch must carry in full.
//
// # Similarity and merge
//
// [Similarity] is git's rename score (the share of bytes, in chunks of a
// line or 64 bytes, that the two sides have in common). [Merge3] merges two
// descendants of a base line by line with git's rules for what conflicts.
//
// # Concurrency
//
// Every function is safe for concurrent use; none keeps state between
// calls.
package diff
