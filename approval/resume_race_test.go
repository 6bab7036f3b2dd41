package approval

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// lockstepStore makes every Pending call wait until n callers have read
// the record (or a second has passed), the widest possible window between
// reading a pending record and deleting it. A Resume that takes the record
// atomically never calls Pending and is not slowed.
type lockstepStore struct {
	Store
	mu      *sync.Mutex
	cond    *sync.Cond
	readers *int
	n       int
}

func newLockstep(n int, stores ...Store) []Store {
	mu := new(sync.Mutex)
	cond := sync.NewCond(mu)
	readers := new(int)
	out := make([]Store, len(stores))
	for i, s := range stores {
		out[i] = &lockstepStore{Store: s, mu: mu, cond: cond, readers: readers, n: n}
	}
	return out
}

func (l *lockstepStore) Pending(ctx context.Context, id string) (Pending, error) {
	p, err := l.Store.Pending(ctx, id)
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.readers++
	l.cond.Broadcast()
	deadline := time.AfterFunc(time.Second, func() { l.mu.Lock(); l.cond.Broadcast(); l.mu.Unlock() })
	defer deadline.Stop()
	start := time.Now()
	for *l.readers < l.n && time.Since(start) < time.Second {
		l.cond.Wait()
	}
	return p, err
}

// resumeRace has n goroutines resume the one pending call of the first
// hook at once, spread over hooks; it returns how many were told to run the
// call.
func resumeRace(t *testing.T, n int, hooks []*Hook, cwd string) int {
	t.Helper()
	ctx := context.Background()
	c := bash("t1", "git push origin main")
	b, err := hooks[0].Process(ctx, []ToolCall{c}, cwd)
	if err != nil || len(b.Pending) != 1 {
		t.Fatalf("%v %+v", err, b)
	}
	id := b.Pending[0].ID
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		runs int
	)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			o, err := hooks[i%len(hooks)].Resume(ctx, id, c, cwd, Response{Kind: Approve})
			switch {
			case err == nil && o.Action == Run:
				mu.Lock()
				runs++
				mu.Unlock()
			case errors.Is(err, ErrNotFound):
			default:
				t.Errorf("resume %d = %+v, %v; want Run or ErrNotFound", i, o, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if ps, err := hooks[0].ListPending(ctx); err != nil || len(ps) != 0 {
		t.Errorf("pending after the race = %+v, %v; want none", ps, err)
	}
	return runs
}

func raceHooks(t *testing.T, stores []Store) ([]*Hook, string) {
	t.Helper()
	e := NewEvaluator(&Options{Home: "/home/dev"})
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	var hooks []*Hook
	for _, s := range stores {
		hooks = append(hooks, NewHook(e, &HookOptions{Store: s, Session: "s1", Now: now}))
	}
	return hooks, t.TempDir()
}

// TestResumeOnce: one approval runs the call once, however many Resumes
// of the same pending id race, in one process (goroutines sharing a store)
// or across stores on one directory (as processes would).
func TestResumeOnce(t *testing.T) {
	const n = 8
	t.Run("memory store", func(t *testing.T) {
		for _, lockstep := range []bool{false, true} {
			stores := []Store{NewMemoryStore()}
			if lockstep {
				stores = newLockstep(n, stores...)
			}
			hooks, cwd := raceHooks(t, stores)
			if runs := resumeRace(t, n, hooks, cwd); runs != 1 {
				t.Errorf("lockstep=%v: %d of %d concurrent resumes ran the call, want 1", lockstep, runs, n)
			}
		}
	})
	t.Run("two file stores on one directory", func(t *testing.T) {
		for _, lockstep := range []bool{false, true} {
			paths := testPaths(t)
			var stores []Store
			for range 2 {
				s, err := OpenFileStore(paths, &FileStoreOptions{NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				stores = append(stores, s)
			}
			if lockstep {
				stores = newLockstep(n, stores...)
			}
			hooks, cwd := raceHooks(t, stores)
			if runs := resumeRace(t, n, hooks, cwd); runs != 1 {
				t.Errorf("lockstep=%v: %d of %d concurrent resumes ran the call, want 1", lockstep, runs, n)
			}
		}
	})
}
