// Package workspace is where an agent host's state lives: a 2-root layout
// (the user's project, which the runtime never writes state into, and a state
// root), and per-instance message logs that survive a crash at any byte.
//
// # Layout
//
// [NewPaths] resolves the state root (an option, then $PADDOCK_STATE_ROOT,
// then ~/.paddock) and the workspace id. Under the state root:
//
//	config.json
//	packages/
//	secrets.json, secrets.key               (SecretStore)
//	workspaces/<workspaceId>/
//	  audit.jsonl                           instance lifecycle events
//	  trash/                                instances being deleted
//	  sandboxes/<runId>/<agentId>/          worker sandboxes (package sandbox)
//	  instances/<instanceKey>/
//	    lock                                the cross-process lock (flock)
//	    metadata.json                       status, agent, key, times
//	    messages/base.jsonl                 committed messages
//	    messages/events.jsonl               the running turn's events
//	    messages/runtime-events.jsonl       observability, never read back
//	    extensions/<name>.json              extension state
//
// Instance keys become directory names through [DirName], injectively and
// validly on every OS.
//
// # Turns and fold-commit
//
// [Store.Open] opens an instance under an exclusive lock. A host runs each
// turn with [Instance.BeginTurn]: [Turn.Append] writes message events (append,
// replace, remove, truncate) to events.jsonl, each with a sequence number and
// the turn id; [Turn.EndStep] marks step boundaries; [Turn.Commit] folds the
// turn into base.jsonl. A turn that only appended is folded by appending its
// messages and a commit mark, so a commit's cost does not grow with history;
// a turn that replaced, removed or truncated rewrites base.jsonl through a
// synced temporary file and a rename. Only then is events.jsonl cleared.
//
// # Recovery
//
// Open repairs what a crash left: a torn last line is cut off (its bytes kept
// in a .broken-<time> file beside the log), messages of a fold that never
// wrote its commit mark are cut, a commit that reached base.jsonl but not the
// clearing of events.jsonl is finished (base records the last folded sequence,
// so nothing is applied twice), and the events of a turn that never committed
// come back as [Recovery.Pending] for the host to resume or discard. A
// corrupt record in the middle of a log is reported in [Recovery.Corrupt] and
// copied aside, never silently dropped. [Instance.Recovery] says what
// happened.
//
// # Durability
//
// [Durability] says when writes are synced: per step (the default), per turn,
// per event, or never. Whatever the level, no write is ever half-applied.
//
// # On-disk format
//
// Every JSONL line is valid JSON carrying a CRC-32C of its record:
// {"c":"<crc>","r":<record>}. Each log starts with a header record naming its
// schema and version; metadata.json and extension files carry the same
// fields. Readers accept every version up to their own. The testdata/golden
// directory holds the format as written today.
//
// # Secrets
//
// [SecretStore] keeps secrets encrypted at rest (AES-256-GCM, each value
// bound to its name). [Secret] never prints its value. A [Masker] given as
// [StoreOptions.Masker] masks known secrets (raw, base64 and URL-encoded) in
// the runtime event log and the audit log.
//
// # Errors
//
// [ErrLocked] when another opener holds an instance; [ErrPendingTurn] and
// [ErrTurnActive] for turn misuse; [ErrInvalidEvent] for events that do not
// fit the message list; [ErrBroken] after a failed write (close and reopen to
// recover); [ErrInvalidKey] for unusable keys; fs.ErrNotExist where a thing is
// missing.
//
// # Concurrency
//
// A [Store], an [Instance] and a [Turn] are safe for concurrent use. An
// instance is open in at most one place at a time, across processes.
//
// # Security
//
// The store does not protect against a user who can read the state root:
// messages and extension state are stored in plain text (only secrets are
// encrypted, and only logs are masked). The key file is refused when group or
// others can read it, but anyone with the key file or $PADDOCK_SECRET_KEY can
// read every secret. Masking recognises only values it was given, and not
// values shorter than 6 bytes.
package workspace
