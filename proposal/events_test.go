package proposal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/internal/jsonl"
	"github.com/paddockdev/paddock/workspace"
)

// TestEventsToInstance checks that with a workspace instance the events go
// to its runtime events, with the proposal id and hashes, and none to the
// proposal directory.
func TestEventsToInstance(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"})
	f.edit(t, map[string]string{"a.txt": "b\n"})
	ctx := context.Background()
	store, err := workspace.NewStore(f.ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := store.Open(ctx, "orchestrator", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	p, err := Create(ctx, f.sb, &CreateOptions{Instance: inst})
	if err != nil {
		t.Fatal(err)
	}
	dir := f.sb.Dirs().Proposal
	if _, err := Review(ctx, dir, &ReviewOptions{Instance: inst}); err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(ctx, f.ws, dir, &ApplyOptions{Instance: inst}); err != nil {
		t.Fatal(err)
	}
	if _, err := Reject(ctx, dir, "changed my mind", &RejectOptions{Instance: inst}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, EventsFile)); !os.IsNotExist(err) {
		t.Errorf("events.jsonl written beside the proposal although an instance was given: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(inst.Dir(), "messages", "runtime-events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, r := range jsonl.Parse(b).Records {
		var rec struct {
			Event *workspace.RuntimeEvent `json:"event"`
		}
		if err := json.Unmarshal(r.Payload, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Event == nil {
			continue // the log's header
		}
		ev := rec.Event
		if ev.Data["proposalId"] != p.ID || ev.Data["patchSha256"] != p.PatchSHA256 {
			t.Errorf("event %s: data %v", ev.Type, ev.Data)
		}
		types = append(types, ev.Type)
	}
	if diff := cmp.Diff([]string{EventCreated, EventReviewed, EventApplied, EventRejected}, types); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
