// Package proposal is how a worker's change comes back to the project: a
// diff of a sandbox's input/ against its work/ as a git-compatible patch
// with a verifiable description, reviewed and then applied to the project
// atomically, with drift detection and a path policy.
//
// # Create
//
// Create diffs a prepared sandbox (see package sandbox) and writes its
// proposal/ directory:
//
//	changes.patch   a git patch (paths relative to the project) that real
//	                git apply accepts: modified, added and deleted files,
//	                exact and similarity renames, executable-bit changes,
//	                symbolic links, binary files as GIT binary patches (up
//	                to a cap), non-ASCII names quoted as git quotes them,
//	                CRLF and missing final newlines kept byte for byte
//	proposal.json   what changed, with before/after SHA-256 per file, line
//	                stats, the base commit, and a content-addressed id
//	summary.md      the same for a human reviewer
//	test.log        the worker's test output, when given
//
// The patch is produced in Go (the line diff is internal/diff); no git
// binary runs and no git configuration can change it. The sandbox manifest
// means only files whose size, modification time or executable bit changed
// are read. Files the worker added where the sandbox policy excludes them
// (.git, node_modules, dist), special files, links Apply would refuse
// and binary files over the cap are listed in Proposal.Excluded, never
// silently dropped.
//
// # Review, Apply, Reject
//
// Review loads a proposal and checks it: schema, id, the patch's and
// test log's hashes, that the patch parses, passes the Policy and matches
// changedFiles. Apply reviews, then:
//
//  1. checks every path, link target and mode against the Policy;
//  2. compares each file's before-image hash with the project (and
//     base.gitHead with HEAD), giving each file a Verdict: Clean,
//     AlreadyApplied, Merged (a three-way merge in memory of input/, work/
//     and the project's file) or a conflict;
//  3. applies every hunk in memory and checks every result against its
//     after-image hash;
//  4. stages every new file beside its target;
//  5. journals the plan under the state root and renames the staged files
//     into place. A crash at any point is rolled back, or after the commit
//     record forward, by the next Apply or by Recover.
//
// ApplyPatch does the same for a bare git patch (say from git diff
// --binary), with exact matching like git apply. Reject records a
// rejection and its reason. Handoff is the worker's closing message.
//
// # Events
//
// proposal_created, proposal_reviewed, proposal_applied,
// proposal_rejected, proposal_conflicted and proposal_apply_failed are
// recorded with the proposal id and patch hash: as runtime events of a
// workspace.Instance when one is given in the options, otherwise in
// events.jsonl in the proposal directory (ReadEvents).
//
// # Errors
//
// Apply's errors say which file and why. A path, link target or mode the
// policy refuses gives a *PolicyError (errors.Is ErrPathPolicy); a file the
// project changed that cannot be merged gives a *ConflictError, with the
// conflicting regions (never markers in the project), or an error wrapping
// ErrDrift (a *ConflictError is ErrDrift too); a malformed patch or one over
// a limit wraps ErrPatch; a proposal that does not hold together (edited
// proposal.json, patch or test log) wraps ErrInvalid. On every error the
// project is byte-identical to before.
//
// # Concurrency
//
// Create, Review, Apply and Reject may run concurrently for different
// proposals and projects. Two Applies (or Recovers) to the same project
// must not run at once: the host serialises them, as it serialises turns.
//
// # Security
//
// The Policy refuses absolute paths, "..", the .git directory in every
// spelling that some file system takes for it (case, trailing dots and
// spaces, HFS+ ignorable code points, 8.3 short names, NTFS streams),
// internal directories, control characters, link targets that leave the
// project or enter .git, and modes other than 100644, 100755 and 120000. The
// patch parser (github.com/bluekeyes/go-gitdiff) is never trusted with
// paths: its names go through the policy, and Apply refuses a path below a
// symbolic link, in the project or made by the same patch. Files are
// replaced by renaming over them, so nothing is written through a link.
// Link targets are resolved as the kernel would, following the project's
// links and those the patch adds: a link that leaves the project through
// another link (x/up -> "..", esc -> "x/up/../secret") is refused, as is a
// target with ".." after a name that does not exist, and a patch that makes
// one of the project's links leave it. Create applies the same checks to
// work/ and reads work/ and input/ through os.Root, requiring the file it
// opens to be the regular file at that path, so a worker still running
// cannot swap a file for a link to a host file between the walk and the
// read.
//
// What this package does NOT protect against: a process that changes the
// project while Apply runs (the checks and the renames are not one atomic
// step, so a directory swapped for a symbolic link in between is followed);
// and the content of the change, which is the reviewer's to judge.
//
// # On-disk format
//
// proposal.json is a JSON object with "schema": "paddock.proposal" and
// "version": "1", "id", "runId", "agentId", "createdAt", "base"
// ({"gitHead"}), "paths" (relative to the sandbox directory),
// "changedFiles" (each {"path", "oldPath", "status", "oldMode",
// "newMode", "beforeSha256", "afterSha256", "linesAdded", "linesDeleted",
// "binary", "similarity"}), "excluded", "patchSha256", "testLogSha256" and
// "notes". The id is "sha256:" and the SHA-256 of the document's JSON
// encoding with "id" empty. Proposal round-trips it. The apply journal,
// <stateRoot>/workspaces/<wsId>/proposal-apply.json, has "schema":
// "paddock.proposal.journal".
package proposal
