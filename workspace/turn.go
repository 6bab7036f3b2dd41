package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"

	"github.com/paddockdev/paddock/internal/jsonl"
	"github.com/paddockdev/paddock/internal/vfs"
)

// Turn is one turn of an instance: the events it appends go to the event log
// as they come, and [Turn.Commit] folds them into the base log.
//
// A Turn's methods are safe for concurrent use (they lock the instance).
// Context cancellation is checked before a method writes anything; once a
// write has started the method finishes it, so a cancelled context never
// leaves a half-written commit.
type Turn struct {
	in   *Instance
	id   string
	done bool

	// While the turn only appends, its view of the messages is the base
	// plus appended, and the commit appends them to the base log. The
	// first replace, remove or truncate makes view a full copy, and the
	// commit rewrites the base log.
	appended    []Message
	appendedIDs map[string]struct{}
	view        *msgList

	ext      map[string]json.RawMessage // staged extension states
	logged   map[string]json.RawMessage // staged states already in the event log
	unsynced bool                       // events written since the last sync
}

// ID returns the turn's id (a ULID).
func (t *Turn) ID() string { return t.id }

func (t *Turn) usable() error {
	if err := t.in.check(); err != nil {
		return err
	}
	if t.done {
		return fmt.Errorf("workspace: turn %s is finished: %w", t.id, ErrClosed)
	}
	return nil
}

// stage checks that evs apply, in order, to the turn's current view,
// without changing anything. Message data is not checked here: encoding
// checks it (see Append).
func (t *Turn) stage(evs []Event) error {
	for i, e := range evs {
		if err := e.validateFields(); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	if t.view == nil && allAppends(evs) {
		var seen map[string]struct{} // ids earlier in this batch
		for i, e := range evs {
			id := e.Message.ID
			_, inBase := t.in.base.index[id]
			_, inTurn := t.appendedIDs[id]
			_, inBatch := seen[id]
			if inBase || inTurn || inBatch {
				return fmt.Errorf("event %d: %w: append: message id %q already exists", i, ErrInvalidEvent, id)
			}
			if len(evs) > 1 {
				if seen == nil {
					seen = make(map[string]struct{}, len(evs))
				}
				seen[id] = struct{}{}
			}
		}
		return nil
	}
	trial := t.materialize()
	for i, e := range evs {
		if err := trial.apply(e); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	return nil
}

// commitEvents applies staged events to the turn's view.
func (t *Turn) commitEvents(evs []Event) {
	if t.view == nil && allAppends(evs) {
		if t.appendedIDs == nil {
			t.appendedIDs = map[string]struct{}{}
		}
		for _, e := range evs {
			t.appended = append(t.appended, *e.Message)
			t.appendedIDs[e.Message.ID] = struct{}{}
		}
		return
	}
	if t.view == nil {
		t.view = t.materialize()
	}
	for _, e := range evs {
		t.view.apply(e) // cannot fail: stage checked it
	}
}

// materialize returns a fresh copy of the turn's view.
func (t *Turn) materialize() *msgList {
	if t.view != nil {
		return t.view.clone()
	}
	l := &msgList{}
	l.reset(append(append(make([]Message, 0, len(t.in.base.msgs)+len(t.appended)), t.in.base.msgs...), t.appended...))
	return l
}

func allAppends(evs []Event) bool {
	for _, e := range evs {
		if e.Type != EventAppend {
			return false
		}
	}
	return true
}

// Append records events in the turn, in order, after checking that each
// applies (a replace or remove names an existing message, an append's id is
// new). The events reach the event log before Append returns; with
// DurabilityEvent they are also synced. Either every event is recorded or,
// with an error wrapping ErrInvalidEvent, none is.
func (t *Turn) Append(ctx context.Context, evs ...Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in := t.in
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if len(evs) == 0 {
		return nil
	}
	if err := t.stage(evs); err != nil {
		return err
	}
	size := 0
	for _, e := range evs {
		size += 256
		if e.Message != nil {
			size += len(e.Message.Data) + len(e.Message.ID)
		}
	}
	buf := make([]byte, 0, size)
	if in.eventsSize == 0 {
		buf, _ = jsonl.Marshal(buf, eventRecord{Header: &fileHeader{schemaEvents, formatVersion}})
	}
	for i := range evs {
		var err error
		if buf, err = appendEventRecord(buf, in.nextSeq+uint64(i), t.id, &evs[i]); err != nil {
			if m := evs[i].Message; m != nil && len(m.Data) > 0 && !json.Valid(m.Data) {
				err = evs[i].invalidData()
			} else {
				err = fmt.Errorf("%w: %s: %w", ErrInvalidEvent, evs[i].Type, err) // e.g. a time encoding/json refuses
			}
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	if err := t.writeEvents(buf); err != nil {
		return err
	}
	in.nextSeq += uint64(len(evs))
	t.commitEvents(evs)
	if in.durable.syncEvent() {
		return t.sync()
	}
	return nil
}

func (t *Turn) writeEvents(buf []byte) error {
	in := t.in
	n, err := in.eventsF.Write(buf)
	in.eventsSize += int64(n)
	if err != nil {
		return in.fail(err)
	}
	t.unsynced = true
	return nil
}

func (t *Turn) sync() error {
	if !t.unsynced {
		return nil
	}
	if err := t.in.eventsF.Sync(); err != nil {
		return t.in.fail(err)
	}
	t.unsynced = false
	return nil
}

// EndStep marks the end of a step of the turn (a model call and its tool
// calls). It writes the extension states staged since the last step to the
// event log, so a turn recovered after a crash has them (a host can keep the
// state it needs to resume there), and with DurabilityStep, the default, it
// syncs the event log, so the step survives a power loss.
func (t *Turn) EndStep(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.in.mu.Lock()
	defer t.in.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if err := t.logExtensions(); err != nil {
		return err
	}
	if t.in.durable.syncStep() {
		return t.sync()
	}
	return nil
}

// logExtensions writes the staged extension states that changed since they
// were last logged to the event log, so that a turn recovered after a crash
// has them (see [Instance.ResumeTurn]).
func (t *Turn) logExtensions() error {
	in := t.in
	var buf []byte
	for _, name := range sortedKeys(t.ext) {
		v := t.ext[name]
		if old, ok := t.logged[name]; ok && string(old) == string(v) {
			continue
		}
		if len(buf) == 0 && in.eventsSize == 0 {
			buf, _ = jsonl.Marshal(buf, eventRecord{Header: &fileHeader{schemaEvents, formatVersion}})
		}
		buf, _ = jsonl.Marshal(buf, eventRecord{Seq: in.nextSeq, Turn: t.id, Ext: &extRecord{name, v}})
		in.nextSeq++
		if t.logged == nil {
			t.logged = map[string]json.RawMessage{}
		}
		t.logged[name] = v
	}
	if len(buf) == 0 {
		return nil
	}
	return t.writeEvents(buf)
}

// Messages returns the messages as the turn sees them: the committed base
// with the turn's events applied.
func (t *Turn) Messages() []Message {
	t.in.mu.Lock()
	defer t.in.mu.Unlock()
	if t.view != nil {
		return append([]Message(nil), t.view.msgs...)
	}
	return append(append([]Message(nil), t.in.base.msgs...), t.appended...)
}

var extNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// ErrInvalidExtensionState is returned by [Turn.SetExtension] for a value
// that is not plain JSON data (a func, a channel, a cyclic value, …).
var ErrInvalidExtensionState = errors.New("workspace: extension state must be JSON-serializable data")

// SetExtension stages the named extension's state. The value is encoded as
// JSON now (a func or channel anywhere in it is an error wrapping
// ErrInvalidExtensionState), logged with the turn's events at the next
// [Turn.EndStep] (so a recovered turn has it), and written to its file
// when the turn commits, atomically with the turn's messages; a discarded
// turn drops it. A value equal to the
// current state is not written at all. Names are 1 to 100 characters of
// [A-Za-z0-9._-], starting with a letter or digit; the state lives in
// extensions/<name>.json.
func (t *Turn) SetExtension(name string, v any) error {
	if !extNameRE.MatchString(name) {
		return fmt.Errorf("workspace: extension name %q: use 1 to 100 characters of [A-Za-z0-9._-], starting with a letter or digit", name)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: extension %q: %w", ErrInvalidExtensionState, name, err)
	}
	t.in.mu.Lock()
	defer t.in.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if t.ext == nil {
		t.ext = map[string]json.RawMessage{}
	}
	if cur, ok := t.in.ext[name]; ok && jsonEqual(cur.Value, b) {
		if _, logged := t.logged[name]; !logged {
			delete(t.ext, name) // back to the committed value: nothing to write
			return nil
		}
		// A different state is in the event log: log this one over it.
	}
	t.ext[name] = b
	return nil
}

func jsonEqual(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// Extension decodes the named extension's state as the turn sees it (staged
// or committed) into v and reports whether there is one.
func (t *Turn) Extension(name string, v any) (bool, error) {
	t.in.mu.Lock()
	staged, ok := t.ext[name]
	t.in.mu.Unlock()
	if !ok {
		return t.in.Extension(name, v)
	}
	return true, json.Unmarshal(staged, v)
}

// Commit folds the turn into the base log and ends it. When the turn only
// appended, just the new messages are appended to base.jsonl, so the cost
// does not grow with the history; after a replace, remove or truncate the
// base log is rewritten (a temporary file, synced, renamed over it). Then
// the staged extension states are written, the event log is cleared and the
// status returns to "idle". A crash at any point is finished or rolled back
// by the next Open, never half-applied or duplicated.
func (t *Turn) Commit(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in := t.in
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	// 1. Stage extension states in the event log, so they commit with the
	// messages: the base's commit mark covers their sequence numbers.
	var extSeq map[string]uint64
	if len(t.ext) > 0 {
		extSeq = map[string]uint64{}
		var buf []byte
		if in.eventsSize == 0 {
			buf, _ = jsonl.Marshal(buf, eventRecord{Header: &fileHeader{schemaEvents, formatVersion}})
		}
		for _, name := range sortedKeys(t.ext) {
			extSeq[name] = in.nextSeq
			buf, _ = jsonl.Marshal(buf, eventRecord{Seq: in.nextSeq, Turn: t.id, Ext: &extRecord{name, t.ext[name]}})
			in.nextSeq++
		}
		if err := t.writeEvents(buf); err != nil {
			return err
		}
	}
	// 2. The event log must be durable before the base says it is folded.
	if in.durable.syncTurn() {
		if err := t.sync(); err != nil {
			return err
		}
	}
	// 3. Fold: append when the turn only appended, else rewrite. A turn
	// that changed nothing has nothing to fold.
	lastSeq := in.nextSeq - 1
	var err error
	switch {
	case t.view != nil:
		err = in.rewriteBase(t.id, lastSeq, t.view)
	case len(t.appended) > 0 || len(t.ext) > 0:
		err = in.appendBase(t.id, lastSeq, t.appended)
	default:
		lastSeq = in.lastSeq
	}
	if err != nil {
		return err
	}
	in.lastSeq = lastSeq
	// 4. Write extension states; 5. clear the event log; 6. go idle.
	for _, name := range sortedKeys(t.ext) {
		if err := in.writeExtension(name, extSeq[name], t.ext[name]); err != nil {
			return in.fail(err)
		}
	}
	if err := in.truncateEvents(in.eventsF); err != nil {
		return in.fail(err)
	}
	t.done = true
	in.turn = nil
	if err := in.setStatus(StatusIdle); err != nil {
		return in.fail(err)
	}
	return nil
}

// appendBase appends msgs and a commit mark to base.jsonl.
func (in *Instance) appendBase(turn string, lastSeq uint64, msgs []Message) error {
	var buf []byte
	if in.baseSize == 0 {
		buf, _ = jsonl.Marshal(buf, baseRecord{Header: &fileHeader{schemaBase, formatVersion}})
	}
	for i := range msgs {
		var err error
		if buf, err = appendBaseMessage(buf, &msgs[i]); err != nil {
			return err
		}
	}
	count := len(in.base.msgs) + len(msgs)
	buf, _ = jsonl.Marshal(buf, baseRecord{Commit: &commitMark{Turn: turn, Seq: lastSeq, Count: count, Time: in.s.opts.Now().UTC()}})
	n, err := in.baseF.Write(buf)
	in.baseSize += int64(n)
	if err == nil && in.durable.syncTurn() {
		err = in.baseF.Sync()
	}
	if err != nil {
		return in.fail(err)
	}
	for _, m := range msgs {
		in.base.index[m.ID] = len(in.base.msgs)
		in.base.msgs = append(in.base.msgs, m)
	}
	return nil
}

// rewriteBase replaces base.jsonl with view's messages and a commit mark.
func (in *Instance) rewriteBase(turn string, lastSeq uint64, view *msgList) error {
	buf, _ := jsonl.Marshal(nil, baseRecord{Header: &fileHeader{schemaBase, formatVersion}})
	for i := range view.msgs {
		var err error
		if buf, err = appendBaseMessage(buf, &view.msgs[i]); err != nil {
			return err
		}
	}
	buf, _ = jsonl.Marshal(buf, baseRecord{Commit: &commitMark{Turn: turn, Seq: lastSeq, Count: len(view.msgs), Time: in.s.opts.Now().UTC()}})
	if err := vfs.WriteFileAtomic(in.s.fsys, in.basePath(), buf, 0o600, in.durable.syncTurn()); err != nil {
		return in.fail(err)
	}
	// The open handle points at the replaced file; reopen.
	in.baseF.Close()
	f, err := in.s.fsys.OpenFile(in.basePath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		in.baseF = nil
		return in.fail(err)
	}
	in.baseF, in.baseSize = f, int64(len(buf))
	in.base = *view
	return nil
}

// Discard ends the turn without committing it: its events are cleared from
// the event log and its staged extension states dropped.
func (t *Turn) Discard(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	in := t.in
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if err := in.truncateEvents(in.eventsF); err != nil {
		return in.fail(err)
	}
	t.done = true
	in.turn = nil
	if err := in.setStatus(StatusIdle); err != nil {
		return in.fail(err)
	}
	return nil
}
