package approval

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"
)

// ErrNotFound is returned by a [Store] for an unknown pending id or grant.
var ErrNotFound = errors.New("approval: not found")

// ErrGrantUsedUp is returned by [Store.UseGrant] when the grant has expired
// or has no uses left.
var ErrGrantUsedUp = errors.New("approval: remembered approval expired or used up")

// Scope is how far an approval reaches.
type Scope string

// The scopes.
const (
	// ScopeOnce approves this call only.
	ScopeOnce Scope = "once"
	// ScopeSession remembers the exact call (by digest) for the session.
	ScopeSession Scope = "session"
	// ScopeWorkspace remembers the exact call (by digest) in the
	// workspace, across sessions.
	ScopeWorkspace Scope = "workspace"
	// ScopeRule saves an allow rule, shown exactly before it is saved.
	ScopeRule Scope = "rule"
)

// Grant is a remembered approval: of one exact call (Digest) or of the
// calls an allow rule covers (Rule). It never covers a tool or directory as
// such.
type Grant struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Scope   Scope  `json:"scope"`
	// Session limits the grant to one session; empty means every session
	// of the workspace.
	Session string `json:"session,omitempty"`
	// Exactly one of Digest and Rule is set.
	Digest string `json:"digest,omitempty"`
	Rule   string `json:"rule,omitempty"`
	// Tool is the tool of the approved call, for display.
	Tool    string    `json:"tool"`
	Created time.Time `json:"created"`
	// Expires, if not zero, ends the grant.
	Expires time.Time `json:"expires,omitzero"`
	// MaxUses, if not zero, is how many calls the grant covers.
	MaxUses int `json:"max_uses,omitempty"`
	Uses    int `json:"uses"`
	// By is who approved.
	By string `json:"by,omitempty"`
}

// Live reports whether g may still be used at now.
func (g *Grant) Live(now time.Time) bool {
	return (g.Expires.IsZero() || now.Before(g.Expires)) && (g.MaxUses == 0 || g.Uses < g.MaxUses)
}

// Store keeps pending approvals and remembered approvals. Implementations
// must be safe for concurrent use; the file store is also safe across
// processes.
type Store interface {
	// PutPending saves a pending record (replacing one with the same ID).
	PutPending(ctx context.Context, p Pending) error
	// Pending returns a pending record or an error wrapping ErrNotFound.
	Pending(ctx context.Context, id string) (Pending, error)
	// ListPending returns all pending records, oldest first.
	ListPending(ctx context.Context) ([]Pending, error)
	// TakePending removes a pending record and returns it, in one atomic
	// step: of several concurrent calls with the same id (from goroutines
	// or, for the file store, processes) exactly one gets the record, the
	// others an error wrapping ErrNotFound.
	TakePending(ctx context.Context, id string) (Pending, error)
	// DeletePending removes a pending record; an unknown id is not an error.
	DeletePending(ctx context.Context, id string) error
	// AddGrant saves a grant.
	AddGrant(ctx context.Context, g Grant) error
	// Grants returns the grants that are live at now.
	Grants(ctx context.Context, now time.Time) ([]Grant, error)
	// UseGrant counts one use of a grant, atomically: it fails with
	// ErrGrantUsedUp if the grant is no longer live at now, and removes
	// the grant when it is used up.
	UseGrant(ctx context.Context, id string, now time.Time) error
}

// state is what a store holds; the file store writes it as JSON.
type state struct {
	Version int       `json:"version"`
	Pending []Pending `json:"pending"`
	Grants  []Grant   `json:"grants"`
}

const stateVersion = 1

func (s *state) putPending(p Pending) {
	for i := range s.Pending {
		if s.Pending[i].ID == p.ID {
			s.Pending[i] = p
			return
		}
	}
	s.Pending = append(s.Pending, p)
}

func (s *state) pending(id string) (Pending, error) {
	for _, p := range s.Pending {
		if p.ID == id {
			return p, nil
		}
	}
	return Pending{}, &notFoundError{"pending approval", id}
}

func (s *state) takePending(id string) (Pending, error) {
	i := slices.IndexFunc(s.Pending, func(p Pending) bool { return p.ID == id })
	if i < 0 {
		return Pending{}, &notFoundError{"pending approval", id}
	}
	p := s.Pending[i]
	s.Pending = slices.Delete(s.Pending, i, i+1)
	return p, nil
}

func (s *state) deletePending(id string) bool {
	n := len(s.Pending)
	s.Pending = slices.DeleteFunc(s.Pending, func(p Pending) bool { return p.ID == id })
	return n != len(s.Pending)
}

func (s *state) live(now time.Time) []Grant {
	var out []Grant
	for _, g := range s.Grants {
		if g.Live(now) {
			out = append(out, g)
		}
	}
	return out
}

func (s *state) use(id string, now time.Time) error {
	// Drop dead grants on the way.
	s.Grants = slices.DeleteFunc(s.Grants, func(g Grant) bool { return !g.Live(now) && g.ID != id })
	for i := range s.Grants {
		g := &s.Grants[i]
		if g.ID != id {
			continue
		}
		if !g.Live(now) {
			s.Grants = slices.Delete(s.Grants, i, i+1)
			return ErrGrantUsedUp
		}
		g.Uses++
		if g.MaxUses > 0 && g.Uses >= g.MaxUses {
			s.Grants = slices.Delete(s.Grants, i, i+1)
		}
		return nil
	}
	return ErrGrantUsedUp
}

type notFoundError struct{ what, id string }

func (e *notFoundError) Error() string { return "approval: no " + e.what + " " + e.id }
func (e *notFoundError) Unwrap() error { return ErrNotFound }

// MemoryStore is a [Store] in memory. The zero value is ready to use.
type MemoryStore struct {
	mu sync.Mutex
	s  state
}

// NewMemoryStore returns an empty memory store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// clone deep-copies through JSON so callers never share memory with the
// store.
func clone[T any](v T) T {
	b, _ := json.Marshal(v)
	var out T
	json.Unmarshal(b, &out)
	return out
}

// PutPending implements [Store].
func (m *MemoryStore) PutPending(ctx context.Context, p Pending) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.s.putPending(clone(p))
	return nil
}

// Pending implements [Store].
func (m *MemoryStore) Pending(ctx context.Context, id string) (Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.s.pending(id)
	return clone(p), err
}

// ListPending implements [Store].
func (m *MemoryStore) ListPending(ctx context.Context) ([]Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return clone(m.s.Pending), nil
}

// TakePending implements [Store].
func (m *MemoryStore) TakePending(ctx context.Context, id string) (Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.s.takePending(id)
	return clone(p), err
}

// DeletePending implements [Store].
func (m *MemoryStore) DeletePending(ctx context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.s.deletePending(id)
	return nil
}

// AddGrant implements [Store].
func (m *MemoryStore) AddGrant(ctx context.Context, g Grant) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.s.Grants = append(m.s.Grants, g)
	return nil
}

// Grants implements [Store].
func (m *MemoryStore) Grants(ctx context.Context, now time.Time) ([]Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.live(now), nil
}

// UseGrant implements [Store].
func (m *MemoryStore) UseGrant(ctx context.Context, id string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.s.use(id, now)
}
