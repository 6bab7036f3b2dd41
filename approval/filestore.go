package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/paddockdev/paddock/internal/vfs"
	"github.com/paddockdev/paddock/workspace"
)

// FileStoreOptions configure a [FileStore].
type FileStoreOptions struct {
	// Dir replaces the default directory, <workspace state dir>/approval.
	Dir string
	// NoSync skips fsync (tests, benchmarks). Default: every write is
	// durable before it returns.
	NoSync bool
	// LockTimeout bounds the wait for another process's lock when ctx has
	// no deadline; zero means 10 seconds.
	LockTimeout time.Duration
}

// FileStore is a [Store] in one JSON file, approval/state.json under the
// workspace's state directory. Every change reads, modifies and atomically
// replaces the file (write to a temporary file, fsync, rename) while
// holding an exclusive lock on approval/state.lock, so processes sharing
// the workspace see each other's changes and a crash leaves the old or the
// new file, never a mix.
//
// A FileStore is safe for concurrent use by goroutines and processes.
type FileStore struct {
	dir, file, lock string
	sync            bool
	timeout         time.Duration
	mu              sync.Mutex // serializes this process's operations
}

// OpenFileStore returns the file store of the workspace at paths, creating
// its directory.
func OpenFileStore(paths workspace.Paths, opts *FileStoreOptions) (*FileStore, error) {
	var o FileStoreOptions
	if opts != nil {
		o = *opts
	}
	if o.Dir == "" {
		if paths.StateRoot == "" || paths.WorkspaceID == "" {
			return nil, errors.New("approval: workspace paths without a state root or workspace id; use workspace.NewPaths")
		}
		o.Dir = filepath.Join(paths.WorkspaceDir(), "approval")
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = 10 * time.Second
	}
	if err := vfs.OS.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("approval: %w", err)
	}
	return &FileStore{dir: o.Dir, file: filepath.Join(o.Dir, "state.json"), lock: filepath.Join(o.Dir, "state.lock"),
		sync: !o.NoSync, timeout: o.LockTimeout}, nil
}

// Path returns the state file's path.
func (s *FileStore) Path() string { return s.file }

// update runs f on the state under the lock and writes the state back if
// f reports a change.
func (s *FileStore) update(ctx context.Context, f func(*state) (bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout)
		defer cancel()
	}
	unlock, err := lockFile(ctx, s.lock)
	if err != nil {
		return fmt.Errorf("approval: lock %s: %w", s.lock, err)
	}
	defer unlock()
	st := state{Version: stateVersion}
	data, err := vfs.ReadFile(vfs.OS, s.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("approval: %w", err)
	default:
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("approval: %s is corrupt (%v); move it aside to start over", s.file, err)
		}
		if st.Version != stateVersion {
			return fmt.Errorf("approval: %s has version %d, this program reads version %d", s.file, st.Version, stateVersion)
		}
	}
	changed, ferr := f(&st)
	if !changed {
		return ferr
	}
	out, err := json.MarshalIndent(&st, "", "  ")
	if err != nil {
		return fmt.Errorf("approval: encode state: %w", err)
	}
	if err := vfs.WriteFileAtomic(vfs.OS, s.file, append(out, '\n'), 0o600, s.sync); err != nil {
		return fmt.Errorf("approval: write %s: %w", s.file, err)
	}
	return ferr
}

// PutPending implements [Store].
func (s *FileStore) PutPending(ctx context.Context, p Pending) error {
	return s.update(ctx, func(st *state) (bool, error) { st.putPending(p); return true, nil })
}

// Pending implements [Store].
func (s *FileStore) Pending(ctx context.Context, id string) (Pending, error) {
	var p Pending
	err := s.update(ctx, func(st *state) (bool, error) {
		var err error
		p, err = st.pending(id)
		return false, err
	})
	return p, err
}

// ListPending implements [Store].
func (s *FileStore) ListPending(ctx context.Context) ([]Pending, error) {
	var out []Pending
	err := s.update(ctx, func(st *state) (bool, error) { out = st.Pending; return false, nil })
	return out, err
}

// TakePending implements [Store]. The record is read and removed under
// the lock, so two processes never both take it.
func (s *FileStore) TakePending(ctx context.Context, id string) (Pending, error) {
	var p Pending
	err := s.update(ctx, func(st *state) (bool, error) {
		var err error
		p, err = st.takePending(id)
		return err == nil, err
	})
	return p, err
}

// DeletePending implements [Store].
func (s *FileStore) DeletePending(ctx context.Context, id string) error {
	return s.update(ctx, func(st *state) (bool, error) { return st.deletePending(id), nil })
}

// AddGrant implements [Store].
func (s *FileStore) AddGrant(ctx context.Context, g Grant) error {
	return s.update(ctx, func(st *state) (bool, error) { st.Grants = append(st.Grants, g); return true, nil })
}

// Grants implements [Store].
func (s *FileStore) Grants(ctx context.Context, now time.Time) ([]Grant, error) {
	var out []Grant
	err := s.update(ctx, func(st *state) (bool, error) { out = st.live(now); return false, nil })
	return out, err
}

// UseGrant implements [Store].
func (s *FileStore) UseGrant(ctx context.Context, id string, now time.Time) error {
	return s.update(ctx, func(st *state) (bool, error) {
		err := st.use(id, now)
		return true, err
	})
}
