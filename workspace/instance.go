package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/paddockdev/paddock/internal/jsonl"
	"github.com/paddockdev/paddock/internal/vfs"
)

// ErrPendingTurn is returned by [Instance.BeginTurn] while a turn that never
// committed is waiting: resume it with [Instance.ResumeTurn] or drop it with
// [Instance.DiscardPendingTurn].
var ErrPendingTurn = errors.New("workspace: a turn from an earlier run is pending; resume or discard it first")

// ErrTurnActive is returned by [Instance.BeginTurn] when a turn is already
// running on the instance.
var ErrTurnActive = errors.New("workspace: a turn is already running on this instance")

// ErrBroken is returned by every write to an instance after a write to its
// files failed part way: the instance must be closed and opened again, which
// runs recovery. It wraps the original error.
var ErrBroken = errors.New("workspace: instance needs recovery after a failed write; close and reopen it")

// OpenOptions are the optional settings of [Store.Open]. A nil *OpenOptions
// means all defaults.
type OpenOptions struct {
	// AgentName is recorded in metadata.json when the instance is created.
	AgentName string
}

// Recovery reports what [Store.Open] found and repaired. The zero value
// means the instance was closed cleanly last time.
type Recovery struct {
	// Crashed is true when the last run ended without finishing its turn:
	// metadata said "processing", or events were left behind.
	Crashed bool
	// FinishedCommit is the id of a turn whose commit had reached the
	// base log but not finished cleaning up; Open completed it.
	FinishedCommit string
	// Pending is the turn that never committed, if any. Its events are
	// not in [Instance.Messages]: the host decides whether to resume it
	// ([Instance.ResumeTurn]) or to discard it.
	Pending *PendingTurn
	// Repairs lists torn tails that were cut off the logs.
	Repairs []Repair
	// Corrupt lists damaged records in the middle of the logs. They are
	// reported and copied aside, never silently dropped.
	Corrupt []CorruptRecord
	// MetadataRebuilt is true when metadata.json was missing or unreadable
	// and was written anew.
	MetadataRebuilt bool
}

// Clean reports whether nothing needed recovering.
func (r Recovery) Clean() bool {
	return !r.Crashed && r.FinishedCommit == "" && r.Pending == nil && len(r.Repairs) == 0 && len(r.Corrupt) == 0 && !r.MetadataRebuilt
}

// Repair is a torn tail cut off a log at open: the bytes after the last good
// record, kept in SavedAs.
type Repair struct {
	File    string // the log's path
	Offset  int64  // the log's length after the repair
	Bytes   int    // how many bytes were cut
	SavedAs string // where the cut bytes were kept
	Reason  string
}

// CorruptRecord is a damaged record in the middle of a log. The log is left
// as it is; the record's bytes are also copied to SavedAs.
type CorruptRecord struct {
	File    string
	Line    int
	Offset  int64
	Err     string
	SavedAs string
}

// PendingTurn is a turn whose events reached the event log but that never
// committed.
type PendingTurn struct {
	ID     string
	Events []Event
	// Extensions holds extension states the turn had staged, by name.
	Extensions map[string]json.RawMessage
}

// Instance is one open instance: its committed messages, the turn in
// progress, its extension state and its runtime event log. It holds the
// instance's cross-process lock until [Instance.Close].
//
// An Instance is safe for concurrent use; at most one turn runs at a time.
type Instance struct {
	s       *Store
	key     string
	dir     string
	unlock  func() error
	durable Durability

	mu       sync.Mutex
	closed   bool
	broken   error
	md       Metadata
	recovery Recovery

	base     msgList
	baseF    vfs.File
	baseSize int64
	lastSeq  uint64 // last event sequence folded into base
	nextSeq  uint64

	eventsF    vfs.File
	eventsSize int64

	ext     map[string]extFile // committed extension states
	pending *PendingTurn
	turn    *Turn

	rtF    vfs.File
	rtSize int64
}

// Open opens the instance with the given key, creating it when it does not
// exist, and takes its exclusive lock: a second opener, in this process or
// another, gets ErrLocked until Close. Open runs recovery: it repairs torn
// log tails, finishes a commit that a crash interrupted, and returns the
// events of a turn that never committed as [Recovery.Pending]; see
// [Instance.Recovery].
func (s *Store) Open(ctx context.Context, key string, opts *OpenOptions) (*Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := s.paths.InstanceDir(key)
	if err != nil {
		return nil, err
	}
	var unlock func() error
	for attempt := 0; ; attempt++ {
		for _, d := range []string{dir, filepath.Join(dir, "messages"), filepath.Join(dir, "extensions")} {
			if err := s.mkdirAll(d); err != nil {
				return nil, fmt.Errorf("workspace: open instance %q: %w", key, err)
			}
		}
		unlock, err = s.lockInstance(dir)
		if err == nil {
			break
		}
		// A concurrent Delete may have moved the directory away between
		// creating it and locking it: create it again, once.
		if attempt > 0 || !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("workspace: open instance %q: %w", key, err)
		}
	}
	in := &Instance{s: s, key: key, dir: dir, unlock: unlock, durable: s.opts.Durability, ext: map[string]extFile{}}
	if opts != nil {
		in.md.AgentName = opts.AgentName
	}
	if err := in.load(); err != nil {
		return nil, errors.Join(fmt.Errorf("workspace: open instance %q: %w", key, err), in.closeFiles(), unlock())
	}
	return in, nil
}

func (in *Instance) path(elem ...string) string {
	return filepath.Join(append([]string{in.dir}, elem...)...)
}

func (in *Instance) basePath() string    { return in.path("messages", "base.jsonl") }
func (in *Instance) eventsPath() string  { return in.path("messages", "events.jsonl") }
func (in *Instance) runtimePath() string { return in.path("messages", "runtime-events.jsonl") }

// load runs recovery and opens the logs for appending.
func (in *Instance) load() error {
	s := in.s
	fsys := s.fsys
	agent := in.md.AgentName
	for _, tmp := range []string{in.path("metadata.json.tmp"), in.basePath() + ".tmp", in.eventsPath() + ".tmp"} {
		fsys.Remove(tmp) // an interrupted atomic write; the real file is intact
	}
	md, err := s.readMetadata(in.dir)
	switch {
	case err == nil && md.InstanceKey != in.key:
		return fmt.Errorf("directory %s belongs to instance %q", in.dir, md.InstanceKey)
	case err != nil:
		if !errors.Is(err, fs.ErrNotExist) {
			// Unreadable: keep the bytes aside, then write it anew.
			in.recovery.MetadataRebuilt = true
			name := in.path("metadata.json")
			if raw, rerr := vfs.ReadFile(fsys, name); rerr == nil {
				aside, serr := in.saveAside(name, "corrupt", raw)
				if serr != nil {
					return serr
				}
				in.recovery.Corrupt = append(in.recovery.Corrupt, CorruptRecord{File: name, Err: err.Error(), SavedAs: aside})
			}
		}
		now := s.opts.Now().UTC()
		md = Metadata{Status: StatusIdle, AgentName: agent, InstanceKey: in.key, CreatedAt: now, UpdatedAt: now}
	}
	in.md = md
	wasProcessing := md.Status == StatusProcessing
	writeMD := err != nil
	created := errors.Is(err, fs.ErrNotExist)

	if err := in.loadBase(); err != nil {
		return err
	}
	committed, err := in.loadEvents()
	if err != nil {
		return err
	}
	if err := in.loadExtensions(); err != nil {
		return err
	}
	if len(committed) > 0 {
		if err := in.finishCommit(committed); err != nil {
			return err
		}
	}
	in.recovery.Pending = in.pending
	in.recovery.Crashed = wasProcessing || in.pending != nil || in.recovery.FinishedCommit != ""
	if in.pending == nil && wasProcessing {
		in.md.Status, writeMD = StatusIdle, true
	}
	if in.pending != nil && !wasProcessing {
		in.md.Status, writeMD = StatusProcessing, true
	}
	if writeMD {
		if err := in.writeMetadata(); err != nil {
			return err
		}
	}
	_, baseErr := fsys.Stat(in.basePath())
	_, eventsErr := fsys.Stat(in.eventsPath())
	if in.baseF, err = fsys.OpenFile(in.basePath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
		return err
	}
	if in.eventsF, err = fsys.OpenFile(in.eventsPath(), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600); err != nil {
		return err
	}
	if (baseErr != nil || eventsErr != nil) && in.durable.syncTurn() {
		// New log files: make their names durable before anything in
		// them is acknowledged.
		if err := fsys.SyncDir(in.path("messages")); err != nil {
			return err
		}
	}
	fi, err := in.eventsF.Stat()
	if err != nil {
		return err
	}
	in.eventsSize = fi.Size()
	switch {
	case created:
		return s.audit("instance.created", in.key, in.dir, "")
	case !in.recovery.Clean():
		return s.audit("instance.recovered", in.key, in.dir, in.recovery.summary())
	}
	return nil
}

func (r Recovery) summary() string {
	var parts []string
	if r.Crashed {
		parts = append(parts, "crashed")
	}
	if r.FinishedCommit != "" {
		parts = append(parts, "finished commit of turn "+r.FinishedCommit)
	}
	if r.Pending != nil {
		parts = append(parts, fmt.Sprintf("pending turn %s with %d events", r.Pending.ID, len(r.Pending.Events)))
	}
	if n := len(r.Repairs); n > 0 {
		parts = append(parts, fmt.Sprintf("%d torn tails repaired", n))
	}
	if n := len(r.Corrupt); n > 0 {
		parts = append(parts, fmt.Sprintf("%d corrupt records", n))
	}
	if r.MetadataRebuilt {
		parts = append(parts, "metadata rebuilt")
	}
	return strings.Join(parts, "; ")
}

// loadBase reads base.jsonl: the messages up to the last commit mark. A
// torn tail, and messages of a fold that never reached its commit mark, are
// cut off and kept aside.
func (in *Instance) loadBase() error {
	name := in.basePath()
	data, err := vfs.ReadFile(in.s.fsys, name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	res := jsonl.Parse(data)
	in.reportCorrupt(name, res.Corrupt)
	msgs := make([]Message, 0, len(res.Records))
	committedMsgs, end := 0, int64(0)
	for _, r := range res.Records {
		var rec baseRecord
		if err := json.Unmarshal(r.Payload, &rec); err != nil {
			in.reportCorrupt(name, []jsonl.Problem{{Off: r.Off, Line: r.Line, Raw: r.Payload, Err: err}})
			continue
		}
		next := r.End
		switch {
		case rec.Header != nil:
			if err := rec.Header.check(name, schemaBase); err != nil {
				return err
			}
			if committedMsgs == 0 && len(msgs) == 0 {
				end = next
			}
		case rec.Msg != nil:
			msgs = append(msgs, *rec.Msg)
		case rec.Commit != nil:
			if rec.Commit.Count != len(msgs) {
				in.reportCorrupt(name, []jsonl.Problem{{Off: r.Off, Line: r.Line, Raw: r.Payload,
					Err: fmt.Errorf("commit of turn %s says %d messages, log has %d", rec.Commit.Turn, rec.Commit.Count, len(msgs))}})
			}
			committedMsgs, end = len(msgs), next
			in.lastSeq = rec.Commit.Seq
		}
	}
	msgs = msgs[:committedMsgs]
	if int64(len(data)) > end {
		reason := "torn tail"
		if end < res.End {
			reason = "messages of a fold that never committed"
		}
		if err := in.cutTail(name, data, end, reason); err != nil {
			return err
		}
	}
	in.base.reset(msgs)
	in.baseSize = end
	in.nextSeq = in.lastSeq + 1
	return nil
}

// loadEvents reads events.jsonl. Events the base already holds (a commit
// that stopped before clearing them) are returned for finishCommit; events
// after the base's last sequence become the pending turn.
func (in *Instance) loadEvents() (committed []eventRecord, err error) {
	name := in.eventsPath()
	data, err := vfs.ReadFile(in.s.fsys, name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	res := jsonl.Parse(data)
	in.reportCorrupt(name, res.Corrupt)
	if res.Tail != nil {
		if err := in.cutTail(name, data, res.End, "torn tail"); err != nil {
			return nil, err
		}
	}
	var pending []eventRecord
	for _, r := range res.Records {
		var rec eventRecord
		if err := json.Unmarshal(r.Payload, &rec); err != nil {
			in.reportCorrupt(name, []jsonl.Problem{{Off: r.Off, Line: r.Line, Raw: r.Payload, Err: err}})
			continue
		}
		switch {
		case rec.Header != nil:
			if err := rec.Header.check(name, schemaEvents); err != nil {
				return nil, err
			}
			continue
		case rec.Seq == 0 || (rec.Event == nil) == (rec.Ext == nil):
			in.reportCorrupt(name, []jsonl.Problem{{Off: r.Off, Line: r.Line, Raw: r.Payload, Err: errors.New("record is neither an event nor an extension state")}})
			continue
		}
		if rec.Event != nil {
			if err := rec.Event.validateShape(); err != nil {
				in.reportCorrupt(name, []jsonl.Problem{{Off: r.Off, Line: r.Line, Raw: r.Payload, Err: err}})
				continue
			}
		}
		if rec.Seq >= in.nextSeq {
			in.nextSeq = rec.Seq + 1
		}
		if rec.Seq <= in.lastSeq {
			committed = append(committed, rec)
			continue
		}
		if len(pending) > 0 && pending[0].Turn != rec.Turn {
			// Turns never share the event log; if they somehow do, only
			// the newest is pending and the older one is reported.
			in.reportCorrupt(name, []jsonl.Problem{{Off: r.Off, Line: r.Line, Raw: r.Payload,
				Err: fmt.Errorf("events of turn %s follow uncommitted events of turn %s, which are set aside", rec.Turn, pending[0].Turn)}})
			pending = pending[:0]
		}
		pending = append(pending, rec)
	}
	if len(pending) > 0 {
		p := &PendingTurn{ID: pending[0].Turn}
		for _, rec := range pending {
			if rec.Event != nil {
				p.Events = append(p.Events, *rec.Event)
			} else {
				if p.Extensions == nil {
					p.Extensions = map[string]json.RawMessage{}
				}
				p.Extensions[rec.Ext.Name] = rec.Ext.Value
			}
		}
		in.pending = p
	}
	return committed, nil
}

// finishCommit completes a commit that reached base.jsonl: it writes the
// turn's extension states and clears its events from the log (keeping a
// pending turn's, if any).
func (in *Instance) finishCommit(committed []eventRecord) error {
	in.recovery.FinishedCommit = committed[len(committed)-1].Turn
	for _, rec := range committed {
		if rec.Ext != nil && in.ext[rec.Ext.Name].Seq < rec.Seq {
			if err := in.writeExtension(rec.Ext.Name, rec.Seq, rec.Ext.Value); err != nil {
				return err
			}
		}
	}
	if in.pending == nil {
		return in.truncateEvents(nil)
	}
	// Rare: keep only the pending turn's records.
	var buf []byte
	buf, _ = jsonl.Marshal(buf, eventRecord{Header: &fileHeader{schemaEvents, formatVersion}})
	seq := in.lastSeq
	for _, e := range in.pending.Events {
		seq++
		buf, _ = jsonl.Marshal(buf, eventRecord{Seq: seq, Turn: in.pending.ID, Event: &e})
	}
	for _, name := range sortedKeys(in.pending.Extensions) {
		seq++
		buf, _ = jsonl.Marshal(buf, eventRecord{Seq: seq, Turn: in.pending.ID, Ext: &extRecord{name, in.pending.Extensions[name]}})
	}
	if seq >= in.nextSeq {
		in.nextSeq = seq + 1
	}
	return vfs.WriteFileAtomic(in.s.fsys, in.eventsPath(), buf, 0o600, in.durable.syncTurn())
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// truncateEvents empties the event log, through f when it is open.
func (in *Instance) truncateEvents(f vfs.File) error {
	if f == nil {
		var err error
		if f, err = in.s.fsys.OpenFile(in.eventsPath(), os.O_WRONLY|os.O_CREATE, 0o600); err != nil {
			return err
		}
		defer f.Close()
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	in.eventsSize = 0
	if in.durable.syncTurn() {
		return f.Sync()
	}
	return nil
}

// cutTail keeps data[end:] aside in a .broken file and truncates name to
// end.
func (in *Instance) cutTail(name string, data []byte, end int64, reason string) error {
	tail := data[end:]
	aside, err := in.saveAside(name, "broken", tail)
	if err != nil {
		return err
	}
	f, err := in.s.fsys.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(end)
	if err == nil && in.durable.syncTurn() {
		err = f.Sync()
	}
	if err = errors.Join(err, f.Close()); err != nil {
		return err
	}
	in.recovery.Repairs = append(in.recovery.Repairs, Repair{File: name, Offset: end, Bytes: len(tail), SavedAs: aside, Reason: reason})
	return nil
}

// saveAside writes b beside name as name.<kind>-<time>-<crc>, unless a file
// with the same content was saved already. It returns the file's path.
func (in *Instance) saveAside(name, kind string, b []byte) (string, error) {
	aside := fmt.Sprintf("%s.%s-%s-%08x", name, kind, in.s.opts.Now().UTC().Format("20060102T150405.000Z"), crc32.ChecksumIEEE(b))
	if kind == "corrupt" {
		aside = fmt.Sprintf("%s.%s-%08x", name, kind, crc32.ChecksumIEEE(b))
		if _, err := in.s.fsys.Stat(aside); err == nil {
			return aside, nil
		}
	}
	return aside, vfs.WriteFileAtomic(in.s.fsys, aside, b, 0o600, in.durable.syncTurn())
}

// reportCorrupt records bad middle records and copies their bytes aside.
func (in *Instance) reportCorrupt(name string, probs []jsonl.Problem) {
	for _, p := range probs {
		aside, err := in.saveAside(name, "corrupt", append(append([]byte(nil), p.Raw...), '\n'))
		if err != nil {
			aside = "(not saved: " + err.Error() + ")"
		}
		in.recovery.Corrupt = append(in.recovery.Corrupt, CorruptRecord{File: name, Line: p.Line, Offset: p.Off, Err: p.Err.Error(), SavedAs: aside})
	}
}

// loadExtensions reads the committed extension states.
func (in *Instance) loadExtensions() error {
	dir := in.path("extensions")
	entries, err := in.s.fsys.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasSuffix(name, ".tmp") {
			in.s.fsys.Remove(filepath.Join(dir, name)) // an interrupted atomic write
			continue
		}
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		b, err := vfs.ReadFile(in.s.fsys, filepath.Join(dir, name))
		if err != nil {
			return err
		}
		var f extFile
		if err := json.Unmarshal(b, &f); err != nil {
			// Unreadable (a crash without fsync can leave it empty or
			// zeroed): set it aside and report it; the state is absent.
			file := filepath.Join(dir, name)
			aside, serr := in.saveAside(file, "corrupt", b)
			if serr == nil {
				serr = in.s.fsys.Remove(file)
			}
			if serr != nil {
				return serr
			}
			in.recovery.Corrupt = append(in.recovery.Corrupt, CorruptRecord{File: file, Err: err.Error(), SavedAs: aside})
			continue
		}
		if err := (fileHeader{f.Schema, f.Version}).check(filepath.Join(dir, name), schemaExtension); err != nil {
			return err
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, f.Value); err == nil {
			f.Value = compact.Bytes()
		}
		in.ext[f.Name] = f
	}
	return nil
}

func (in *Instance) writeExtension(name string, seq uint64, value json.RawMessage) error {
	f := extFile{Schema: schemaExtension, Version: formatVersion, Name: name, Seq: seq, Value: value}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(in.s.fsys, in.path("extensions", name+".json"), append(b, '\n'), 0o600, in.durable.syncTurn()); err != nil {
		return err
	}
	in.ext[name] = f
	return nil
}

func (in *Instance) writeMetadata() error {
	in.md.Schema, in.md.Version = schemaMetadata, formatVersion
	b, err := json.MarshalIndent(in.md, "", "  ")
	if err != nil {
		return err
	}
	return vfs.WriteFileAtomic(in.s.fsys, in.path("metadata.json"), append(b, '\n'), 0o600, in.durable.syncTurn())
}

func (in *Instance) setStatus(st Status) error {
	in.md.Status = st
	in.md.UpdatedAt = in.s.opts.Now().UTC()
	return in.writeMetadata()
}

// Key returns the instance key.
func (in *Instance) Key() string { return in.key }

// Dir returns the instance's directory.
func (in *Instance) Dir() string { return in.dir }

// Metadata returns the instance's metadata.
func (in *Instance) Metadata() Metadata {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.md
}

// Recovery returns what Open found and repaired.
func (in *Instance) Recovery() Recovery {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.recovery
}

// Messages returns a copy of the committed messages. During a turn, use
// [Turn.Messages] to see the turn's changes too.
func (in *Instance) Messages() []Message {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Message(nil), in.base.msgs...)
}

// PendingTurn returns the turn that an earlier run left uncommitted, or nil.
func (in *Instance) PendingTurn() *PendingTurn {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.pending
}

// Extension decodes the committed state of the named extension into v and
// reports whether there was one. During a turn, [Turn.Extension] also sees
// the turn's staged changes.
func (in *Instance) Extension(name string, v any) (bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	f, ok := in.ext[name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(f.Value, v); err != nil {
		return true, fmt.Errorf("workspace: extension %q: %w", name, err)
	}
	return true, nil
}

// check returns the error for a write to a closed or broken instance.
func (in *Instance) check() error {
	if in.closed {
		return ErrClosed
	}
	if in.broken != nil {
		return fmt.Errorf("%w: %w", ErrBroken, in.broken)
	}
	return nil
}

// fail marks the instance broken after err hit a write.
func (in *Instance) fail(err error) error {
	if in.broken == nil {
		in.broken = err
	}
	return fmt.Errorf("workspace: instance %q: %w", in.key, err)
}

// BeginTurn starts a turn: the instance's status becomes "processing", and
// the turn's events go to the event log until [Turn.Commit] folds them into
// the base log. It fails with ErrTurnActive while another turn runs and with
// ErrPendingTurn while an earlier run's turn waits for a decision.
func (in *Instance) BeginTurn(ctx context.Context) (*Turn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := in.check(); err != nil {
		return nil, err
	}
	if in.turn != nil {
		return nil, ErrTurnActive
	}
	if in.pending != nil {
		return nil, ErrPendingTurn
	}
	if err := in.setStatus(StatusProcessing); err != nil {
		return nil, in.fail(err)
	}
	in.turn = &Turn{in: in, id: in.s.newID()}
	return in.turn, nil
}

// ResumeTurn continues the pending turn: its events are replayed into a new
// Turn with the same id, which the host can extend and commit or discard.
func (in *Instance) ResumeTurn(ctx context.Context) (*Turn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := in.check(); err != nil {
		return nil, err
	}
	if in.turn != nil {
		return nil, ErrTurnActive
	}
	if in.pending == nil {
		return nil, errors.New("workspace: no pending turn to resume")
	}
	t := &Turn{in: in, id: in.pending.ID, ext: map[string]json.RawMessage{}}
	if err := t.stage(in.pending.Events); err != nil {
		return nil, fmt.Errorf("workspace: pending turn %s cannot be replayed (discard it): %w", in.pending.ID, err)
	}
	t.commitEvents(in.pending.Events)
	for name, v := range in.pending.Extensions {
		if t.logged == nil {
			t.logged = map[string]json.RawMessage{}
		}
		t.logged[name] = v
		t.ext[name] = v
	}
	in.pending = nil
	in.turn = t
	return t, nil
}

// DiscardPendingTurn drops the pending turn's events from the event log.
func (in *Instance) DiscardPendingTurn(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := in.check(); err != nil {
		return err
	}
	if in.pending == nil {
		return errors.New("workspace: no pending turn to discard")
	}
	if err := in.truncateEvents(in.eventsF); err != nil {
		return in.fail(err)
	}
	in.pending = nil
	if err := in.setStatus(StatusIdle); err != nil {
		return in.fail(err)
	}
	return nil
}

// Close releases the instance's lock and files. A turn that is still open
// is neither committed nor discarded: its events come back as the pending
// turn at the next Open. Close is idempotent.
func (in *Instance) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil
	}
	in.closed = true
	if in.turn != nil {
		in.turn.done = true
		in.turn = nil
	}
	return errors.Join(in.closeFiles(), in.unlock())
}

func (in *Instance) closeFiles() error {
	var errs []error
	for _, f := range []vfs.File{in.baseF, in.eventsF, in.rtF} {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	in.baseF, in.eventsF, in.rtF = nil, nil, nil
	return errors.Join(errs...)
}
