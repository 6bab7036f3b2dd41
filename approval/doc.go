// Package approval decides whether an agent's tool calls run: a post-model
// hook that stops risky calls for a human decision, remembers approvals at
// an explicit scope, and can pause and resume across processes.
//
// # Rules and evaluation
//
// An [Evaluator] holds allow / ask / deny [Rule]s in four layers: host,
// project, user and session. Between matching rules the strongest effect
// wins whatever the layer (deny beats ask beats allow). Shell commands are
// split into segments by the safety package's shell analyzer, and every
// segment must be allowed for the command to be allowed; a segment no rule
// covers is decided by its risk (low → allow, critical → deny, otherwise
// ask), and a critical segment is denied even if a rule allows it.
// [Evaluator.Evaluate] returns a [Decision] with the deciding rule, the
// per-segment decisions and the analyzers' verdicts.
//
// # Rule files
//
// A rule file has one rule per line; blank lines and lines starting with #
// are ignored:
//
//	<allow|ask|deny> <tool>[: <pattern>]
//	example <allow|ask|deny> <tool>: <command line, path or URL>
//
// tool is a tool name or a glob over names ("*", "mcp__github__*"). Without
// a pattern the rule covers every call of the tool. The pattern depends on
// the tool's kind (see [ToolKinds]):
//
//   - shell tools: a command prefix. Each word may list alternatives with
//     "|" and may be a glob ("*" is any word). Flags are matched as a set, in
//     any order and spelling: "rm -r -f" matches rm -rf, rm -fr,
//     rm -f -r, rm -Rf and rm --recursive --force. Words are matched against
//     the command's non-flag words, after wrappers such as timeout, env and
//     nice; a word only known at run time ($X) never matches an allow rule.
//     The value of a flag that takes one is a word too: "git status" does
//     not match git -C dir status (write "git * status" for that).
//   - file tools: "path" and one or more globs, relative to the evaluator's
//     root (or absolute); "**" matches any number of directories.
//   - network tools: "domain" and one or more host names; "*.example.com"
//     matches the subdomains of example.com.
//
// An example line states the effect the file's own rules must give a call;
// [Evaluator.Load] checks every example and refuses the file, naming the
// line, if one fails. Any error in a file is a [*ParseError] naming the file
// and line, and no rule of a bad file is added. For example:
//
//	# Read-only git is fine; pushing needs a human; no recursive forced rm.
//	allow bash: git status|log|diff|show
//	ask   bash: git push
//	deny  bash: rm -r -f
//	allow read_file: path src/** docs/*.md
//	deny  read_file: path **/.env
//	allow fetch: domain pkg.go.dev *.golang.org
//	example allow bash: git log --oneline -5
//	example deny  bash: rm --force --recursive build
//
// # The hook
//
// [Hook.Process] takes the tool calls of one model response ([ToolCall]:
// id, name, JSON input) and the cwd, and returns an [Outcome] per call id:
// [Run] (with the input to run, possibly edited), [Result] (a tool-result
// text to return to the model instead: a denial, a rejection with its
// reason, or a human's response), [Wait] (a [Pending] record was saved),
// or [Stop] (a human aborted the turn; nothing of the response runs).
// Allowed calls, read-only ones included, run in one batch without asking.
//
// A call that needs a human is asked of the [Approver] if the hook has one
// ([TerminalApprover], [ChannelApprover]); otherwise it becomes a Pending
// record in the [Store]: JSON with the call's digest (SHA-256 of tool,
// canonical input and resolved cwd, see [Digest]), the allowed responses
// and an expiry. A host can stop the process and later call
// [Hook.Resume], in another process, with the call about to run and the
// human's [Response]; Resume refuses with [ErrDigestMismatch] if the call
// is not exactly the one that was put up for approval. Resume takes the
// record out of the store atomically ([Store.TakePending]) before acting,
// so one approval runs a call at most once even when several goroutines
// or processes resume the same id; a refused Resume puts the record back.
//
// The [TerminalApprover] shows everything that comes from the call through
// [Printable], so escape sequences, carriage returns and bidi controls in
// a command are shown as escapes and cannot disguise what is approved.
//
// Responses: [Approve] once, for the session, for the workspace (both
// remember the exact call by digest), or as a new allow rule (shown exactly
// before it is saved, and checked to cover the call); [Edit] with new
// input, evaluated again; [Reject] with a reason returned to the model;
// [Respond] with a message returned in place of running the tool; [Abort].
// Remembered approvals ([Grant]) are never keyed by tool and directory
// alone; they can carry a time-to-live and a use count.
//
// # On-disk format
//
// The [FileStore] keeps pending records and grants in
// <state root>/workspaces/<id>/approval/state.json:
// {"version":1,"pending":[…],"grants":[…]}, replaced atomically under an
// exclusive lock (approval/state.lock). The audit log ([AuditLog]) is JSONL:
// one [AuditRecord] per line, each carrying the hash of the previous one,
// so [VerifyAudit] detects edited, deleted, inserted, reordered and
// half-written records.
//
// # Errors
//
// [ErrDigestMismatch], [ErrExpired], [ErrNotFound], [ErrNotAllowed],
// [ErrGrantUsedUp] and [ErrTampered] are matched with errors.Is;
// [*ParseError] and [*AuditError] carry the line.
//
// # Concurrency
//
// Evaluator, Hook, MemoryStore, FileStore, AuditLog and the approvers are
// safe for concurrent use. The FileStore is also safe across processes.
//
// # Security
//
// Approval narrows what an agent does; it does not contain it. It does not
// protect against a program that an approved call runs doing more than its
// command line shows (a Makefile, a test, a script), nor against a human
// approving something they did not read. The audit chain shows tampering
// within the log, but cutting whole records off its end is only visible
// against a last hash kept elsewhere. Run agents in a sandbox as well.
package approval
