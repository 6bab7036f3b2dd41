package approval

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"
)

// TestFileStoreConcurrentUse has several stores on the same directory (as
// several processes would) use one grant concurrently: the use count is
// never exceeded.
func TestFileStoreConcurrentUse(t *testing.T) {
	paths := testPaths(t)
	ctx := context.Background()
	now := time.Now()
	first, err := OpenFileStore(paths, &FileStoreOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.AddGrant(ctx, Grant{Version: 1, ID: "g", Scope: ScopeWorkspace, Digest: "d", MaxUses: 7}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ok := 0
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		s, err := OpenFileStore(paths, &FileStoreOptions{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				err := s.UseGrant(ctx, "g", now)
				if err == nil {
					mu.Lock()
					ok++
					mu.Unlock()
				} else if !errors.Is(err, ErrGrantUsedUp) {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if ok != 7 {
		t.Errorf("%d uses, want 7", ok)
	}
	if gs, _ := first.Grants(ctx, now); len(gs) != 0 {
		t.Errorf("used-up grant still listed: %+v", gs)
	}
}

func TestFileStoreCorrupt(t *testing.T) {
	s := mustFileStore(t)
	if err := os.WriteFile(s.Path(), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListPending(context.Background()); err == nil {
		t.Error("corrupt state file read without an error")
	}
	if _, err := s.Pending(context.Background(), "nope"); err == nil {
		t.Error("corrupt state file read without an error")
	}
	os.Remove(s.Path())
	if _, err := s.Pending(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("err = %v, want ErrNotFound", err)
	}
}

// TestTakePending: taking a pending record returns it and removes it in
// one step; a second take of the same id finds nothing.
func TestTakePending(t *testing.T) {
	ctx := context.Background()
	for name, s := range map[string]Store{"memory": NewMemoryStore(), "file": mustFileStore(t)} {
		t.Run(name, func(t *testing.T) {
			for _, id := range []string{"a", "b"} {
				if err := s.PutPending(ctx, Pending{Version: 1, ID: id, Tool: "bash", Digest: "d-" + id}); err != nil {
					t.Fatal(err)
				}
			}
			p, err := s.TakePending(ctx, "a")
			if err != nil || p.ID != "a" || p.Digest != "d-a" {
				t.Fatalf("take = %+v, %v", p, err)
			}
			if _, err := s.TakePending(ctx, "a"); !errors.Is(err, ErrNotFound) {
				t.Errorf("second take: err = %v, want ErrNotFound", err)
			}
			if _, err := s.Pending(ctx, "a"); !errors.Is(err, ErrNotFound) {
				t.Errorf("taken record still readable: %v", err)
			}
			if ps, err := s.ListPending(ctx); err != nil || len(ps) != 1 || ps[0].ID != "b" {
				t.Errorf("left = %+v, %v; want only b", ps, err)
			}
		})
	}
}
