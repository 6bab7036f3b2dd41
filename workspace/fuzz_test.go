package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/internal/crashfs"
	"github.com/paddockdev/paddock/internal/jsonl"
)

// FuzzRecover feeds arbitrary base.jsonl and events.jsonl to Open. Open must
// never panic; when it succeeds, a second Open must find nothing more to
// repair and the same state, and a new turn must commit on top.
func FuzzRecover(f *testing.F) {
	base, _ := os.ReadFile(filepath.Join(goldenDir, "messages", "base.jsonl"))
	events, _ := os.ReadFile(filepath.Join(goldenDir, "messages", "events.jsonl"))
	f.Add(base, events)
	f.Add(base[:len(base)/2], events)
	f.Add([]byte{}, events)
	f.Add(base, append(events, 0, 0, 0))
	m := msg("dup", "")
	dup, _ := jsonl.Marshal(nil, baseRecord{Msg: &m})
	f.Add(append(append(base, dup...), dup...), []byte{})
	f.Fuzz(func(t *testing.T, base, events []byte) {
		fsys := crashfs.New()
		dir, _ := crashPaths.InstanceDir("k")
		fsys.WriteFile(filepath.Join(dir, "messages", "base.jsonl"), base, 0o600)
		fsys.WriteFile(filepath.Join(dir, "messages", "events.jsonl"), events, 0o600)
		first, in, _, err := recoverState(fsys, DurabilityStep)
		if err != nil {
			return // a clear error is fine; a panic is not
		}
		in.Close()
		second, in, _, err := recoverState(fsys, DurabilityStep)
		if err != nil {
			t.Fatalf("second open failed after the first succeeded: %v", err)
		}
		if diff := cmp.Diff(first, second); diff != "" {
			t.Fatalf("second open differs (-first +second):\n%s", diff)
		}
		if r := in.Recovery(); len(r.Repairs) > 0 {
			t.Fatalf("second open repaired again: %+v", r.Repairs)
		}
		if in.PendingTurn() != nil {
			if err := in.DiscardPendingTurn(ctx); err != nil {
				t.Fatal(err)
			}
		}
		before := len(in.Messages())
		if err := runOne(in, Append(msg("fuzz-new-message", ""))); err != nil {
			t.Fatalf("turn after recovery: %v", err)
		}
		in.Close()
		third, in, _, err := recoverState(fsys, DurabilityStep)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if len(third.Msgs) != before+1 {
			t.Fatalf("after a committed turn: %d messages, want %d", len(third.Msgs), before+1)
		}
	})
}
