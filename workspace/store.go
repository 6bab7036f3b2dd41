package workspace

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/paddockdev/paddock/internal/jsonl"
	"github.com/paddockdev/paddock/internal/vfs"
)

// ErrLocked is returned by [Store.Open] and [Store.Delete] when another
// process (or another open in this process) holds the instance.
var ErrLocked = errors.New("workspace: instance locked by another opener")

// ErrClosed is returned by the methods of a closed [Instance] or a finished
// [Turn].
var ErrClosed = errors.New("workspace: instance closed")

// Durability says when the store forces writes to stable storage (fdatasync
// on Linux, fsync elsewhere, and a sync of the directory after a rename).
// A process crash never loses a write that returned; Durability is about
// losing power or the kernel.
type Durability int

// The durability levels, from the default.
const (
	// DurabilityStep (the default) syncs the event log at every
	// [Turn.EndStep] and at commit: a power loss loses at most the
	// current step.
	DurabilityStep Durability = iota
	// DurabilityTurn syncs only at [Turn.Commit]: a power loss loses at
	// most the current turn.
	DurabilityTurn
	// DurabilityEvent syncs after every [Turn.Append].
	DurabilityEvent
	// DurabilityNone never syncs. Writes are still ordered and atomic
	// against process crashes, but a power loss may lose anything.
	DurabilityNone
)

func (d Durability) String() string {
	switch d {
	case DurabilityStep:
		return "step"
	case DurabilityTurn:
		return "turn"
	case DurabilityEvent:
		return "event"
	case DurabilityNone:
		return "none"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

func (d Durability) syncTurn() bool  { return d != DurabilityNone }
func (d Durability) syncStep() bool  { return d == DurabilityStep || d == DurabilityEvent }
func (d Durability) syncEvent() bool { return d == DurabilityEvent }

// DefaultRuntimeEventsMaxBytes is the size at which runtime-events.jsonl is
// rotated when [StoreOptions.RuntimeEventsMaxBytes] is zero.
const DefaultRuntimeEventsMaxBytes = 16 << 20

// StoreOptions are the optional settings of [NewStore]. A nil *StoreOptions
// means all defaults.
type StoreOptions struct {
	// Durability is when writes are synced; the zero value is
	// DurabilityStep.
	Durability Durability
	// Masker masks secrets in everything the store writes to logs (runtime
	// events and the audit log). Nil masks nothing; pass
	// [SecretStore.Masker] to mask every stored secret.
	Masker *Masker
	// RuntimeEventsMaxBytes rotates runtime-events.jsonl when it would
	// grow past this size; zero means DefaultRuntimeEventsMaxBytes.
	RuntimeEventsMaxBytes int64
	// RuntimeEventsKeep is how many rotated runtime event files are kept
	// (runtime-events.1.jsonl is the newest); zero means 3.
	RuntimeEventsKeep int
	// Now replaces time.Now, for tests. Nil means time.Now.
	Now func() time.Time
}

// Store holds the instances of one workspace under a state root.
//
// A Store is safe for concurrent use. Instances are locked across
// processes, so two Stores (in one process or two) can share a state root.
type Store struct {
	paths Paths
	opts  StoreOptions
	fsys  vfs.FS
	lock  lockFunc
	newID func() string // turn ids and trash names; ULIDs unless a test sets it

	auditMu sync.Mutex
}

// lockFunc takes an exclusive, non-blocking lock on the file at path,
// creating it if needed, or fails with ErrLocked. The lock must be on the
// file that is at path when it returns (not one a concurrent Delete moved
// away).
type lockFunc func(path string) (unlock func() error, err error)

// NewStore creates the state root's layout for paths (config.json,
// packages/, workspaces/<id>/instances/) when it is missing and returns the
// workspace's Store. It also finishes deletions that a crash interrupted.
func NewStore(paths Paths, opts *StoreOptions) (*Store, error) {
	return newStore(paths, opts, vfs.OS, flockFile)
}

func newStore(paths Paths, opts *StoreOptions, fsys vfs.FS, lock lockFunc) (*Store, error) {
	if paths.StateRoot == "" || paths.WorkspaceID == "" {
		return nil, errors.New("workspace: Paths has no state root; build it with NewPaths")
	}
	s := &Store{paths: paths, fsys: fsys, lock: lock}
	if opts != nil {
		s.opts = *opts
	}
	s.newID = func() string { return ulid.MustNew(ulid.Timestamp(s.opts.Now()), rand.Reader).String() }
	if s.opts.Durability < DurabilityStep || s.opts.Durability > DurabilityNone {
		return nil, fmt.Errorf("workspace: unknown durability %d", s.opts.Durability)
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	if s.opts.RuntimeEventsMaxBytes <= 0 {
		s.opts.RuntimeEventsMaxBytes = DefaultRuntimeEventsMaxBytes
	}
	if s.opts.RuntimeEventsKeep <= 0 {
		s.opts.RuntimeEventsKeep = 3
	}
	for _, dir := range []string{paths.PackagesDir(), paths.InstancesDir(), paths.TrashDir()} {
		if err := s.mkdirAll(dir); err != nil {
			return nil, fmt.Errorf("workspace: create state layout: %w", err)
		}
	}
	if _, err := fsys.Stat(paths.ConfigFile()); errors.Is(err, fs.ErrNotExist) {
		cfg, _ := json.MarshalIndent(fileHeader{Schema: schemaConfig, Version: formatVersion}, "", "  ")
		if err := vfs.WriteFileAtomic(fsys, paths.ConfigFile(), append(cfg, '\n'), 0o600, s.opts.Durability.syncTurn()); err != nil {
			return nil, fmt.Errorf("workspace: create config.json: %w", err)
		}
	}
	s.sweepTrash()
	return s, nil
}

// Paths returns the store's paths.
func (s *Store) Paths() Paths { return s.paths }

// mkdirAll creates dir and any missing parents, syncing each new entry's
// parent so the new directories survive a crash.
func (s *Store) mkdirAll(dir string) error {
	if _, err := s.fsys.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := s.mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := s.fsys.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if s.opts.Durability.syncTurn() {
		return s.fsys.SyncDir(parent)
	}
	return nil
}

// InstanceInfo describes one instance found by [Store.List].
type InstanceInfo struct {
	Key      string
	Dir      string
	Metadata Metadata
	// Problem is set when the instance's metadata could not be read; Key
	// is then empty and Dir says where the instance is.
	Problem string
}

// List returns the workspace's instances sorted by key. It does not lock
// them, so the metadata of an instance that is open elsewhere may be a turn
// out of date.
func (s *Store) List(ctx context.Context) ([]InstanceInfo, error) {
	entries, err := s.fsys.ReadDir(s.paths.InstancesDir())
	if err != nil {
		return nil, fmt.Errorf("workspace: list instances: %w", err)
	}
	var out []InstanceInfo
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(s.paths.InstancesDir(), e.Name())
		info := InstanceInfo{Dir: dir}
		md, err := s.readMetadata(dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			info.Problem = "no metadata.json: the instance was never fully created"
		case err != nil:
			info.Problem = err.Error()
		default:
			info.Key, info.Metadata = md.InstanceKey, md
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].Dir < out[j].Dir
	})
	return out, nil
}

func (s *Store) readMetadata(dir string) (Metadata, error) {
	var md Metadata
	b, err := vfs.ReadFile(s.fsys, filepath.Join(dir, "metadata.json"))
	if err != nil {
		return md, err
	}
	if err := json.Unmarshal(b, &md); err != nil {
		return md, fmt.Errorf("workspace: %s: %w", filepath.Join(dir, "metadata.json"), err)
	}
	if md.Schema != "" || md.Version != 0 {
		if err := (fileHeader{md.Schema, md.Version}).check("metadata.json", schemaMetadata); err != nil {
			return md, err
		}
	}
	return md, nil
}

// Delete removes an instance: its messages, extension state and metadata.
// It fails with ErrLocked while the instance is open anywhere, and with an
// error satisfying errors.Is(err, fs.ErrNotExist) when there is no such
// instance. The instance is first moved to the workspace's trash (so a crash
// never leaves a half-deleted instance in place), the deletion is recorded in
// the audit log, and then the trash copy is removed.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := s.paths.InstanceDir(key)
	if err != nil {
		return err
	}
	if _, err := s.fsys.Stat(dir); err != nil {
		return fmt.Errorf("workspace: delete instance %q: %w", key, err)
	}
	unlock, err := s.lockInstance(dir)
	if err != nil {
		return fmt.Errorf("workspace: delete instance %q: %w", key, err)
	}
	trash := filepath.Join(s.paths.TrashDir(), filepath.Base(dir)+"."+s.newID())
	err = s.fsys.Rename(dir, trash)
	if err == nil && s.opts.Durability.syncTurn() {
		err = errors.Join(s.fsys.SyncDir(s.paths.InstancesDir()), s.fsys.SyncDir(s.paths.TrashDir()))
	}
	err = errors.Join(err, unlock())
	if err != nil {
		return fmt.Errorf("workspace: delete instance %q: %w", key, err)
	}
	if err := s.audit("instance.deleted", key, dir, ""); err != nil {
		return err
	}
	if err := s.fsys.RemoveAll(trash); err != nil {
		return fmt.Errorf("workspace: delete instance %q: remove %s: %w", key, trash, err)
	}
	return nil
}

// sweepTrash removes what an interrupted Delete left in the trash.
func (s *Store) sweepTrash() {
	entries, _ := s.fsys.ReadDir(s.paths.TrashDir())
	for _, e := range entries {
		s.fsys.RemoveAll(filepath.Join(s.paths.TrashDir(), e.Name()))
	}
}

// lockInstance locks the instance directory dir.
func (s *Store) lockInstance(dir string) (func() error, error) {
	return s.lock(filepath.Join(dir, "lock"))
}

// audit appends a lifecycle record to the workspace's audit log, masked and
// synced.
func (s *Store) audit(action, key, dir, detail string) error {
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	rec := auditRecord{Time: s.opts.Now().UTC(), Action: action, InstanceKey: key, Dir: dir, Detail: detail}
	if err := s.appendLog(s.paths.AuditLog(), schemaAudit, rec, s.opts.Durability.syncTurn()); err != nil {
		return fmt.Errorf("workspace: audit log: %w", err)
	}
	return nil
}

// appendLog appends one masked record to a log file, writing the file's
// header first when the file is new.
func (s *Store) appendLog(name, schema string, rec any, sync bool) error {
	f, err := s.fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return errors.Join(err, f.Close())
	}
	created := fi.Size() == 0
	buf, err := s.frameLog(nil, created, schema, rec)
	if err == nil {
		_, err = f.Write(buf)
	}
	if err == nil && sync {
		err = f.Sync()
	}
	if err == nil && sync && created {
		err = s.fsys.SyncDir(filepath.Dir(name))
	}
	return errors.Join(err, f.Close())
}

// frameLog appends rec, masked, to buf as a framed line, preceded by a
// header line when header is true.
func (s *Store) frameLog(buf []byte, header bool, schema string, rec any) ([]byte, error) {
	if header {
		buf, _ = jsonl.Marshal(buf, struct {
			Header fileHeader `json:"header"`
		}{fileHeader{schema, formatVersion}})
	}
	payload, err := json.Marshal(rec)
	if err != nil {
		return buf, err
	}
	if s.opts.Masker != nil {
		payload = s.opts.Masker.maskJSON(payload)
	}
	return jsonl.Append(buf, payload), nil
}
