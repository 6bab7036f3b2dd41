package proposal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/paddockdev/paddock/internal/jsonl"
	"github.com/paddockdev/paddock/workspace"
)

// The event types, appended to the workspace instance's runtime events or,
// without an instance, to events.jsonl in the proposal directory.
const (
	EventCreated     = "proposal_created"
	EventReviewed    = "proposal_reviewed"
	EventApplied     = "proposal_applied"
	EventRejected    = "proposal_rejected"
	EventConflicted  = "proposal_conflicted"
	EventApplyFailed = "proposal_apply_failed"
)

// An Event is one record of a proposal's events.jsonl (framed by
// internal/jsonl: each line carries a CRC-32C of its record).
type Event struct {
	Type        string         `json:"type"`
	Time        time.Time      `json:"timestamp"`
	ProposalID  string         `json:"proposalId"`
	PatchSHA256 string         `json:"patchSha256,omitempty"`
	Data        map[string]any `json:"data,omitempty"`
}

// emit records one event: to inst when it is set, else appended to
// dir/events.jsonl.
func emit(ctx context.Context, inst *workspace.Instance, dir, typ string, p *Proposal, data map[string]any) error {
	id, ph := "", ""
	if p != nil {
		id, ph = p.ID, p.PatchSHA256
	}
	if inst != nil {
		d := map[string]any{"proposalId": id, "patchSha256": ph}
		for k, v := range data {
			d[k] = v
		}
		if err := inst.Emit(ctx, workspace.RuntimeEvent{Type: typ, Data: d}); err != nil {
			return fmt.Errorf("proposal: event %s: %w", typ, err)
		}
		return nil
	}
	if dir == "" {
		return nil
	}
	line, err := jsonl.Marshal(nil, Event{Type: typ, Time: time.Now().UTC(), ProposalID: id, PatchSHA256: ph, Data: data})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, EventsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("proposal: event %s: %w", typ, err)
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("proposal: event %s: %w", typ, err)
	}
	return nil
}

// ReadEvents returns the events recorded in dir/events.jsonl, oldest
// first. A torn last line is ignored; a corrupt record in the middle is an
// error.
func ReadEvents(dir string) ([]Event, error) {
	b, err := os.ReadFile(filepath.Join(dir, EventsFile))
	if err != nil {
		return nil, fmt.Errorf("proposal: %w", err)
	}
	res := jsonl.Parse(b)
	if len(res.Corrupt) > 0 {
		return nil, fmt.Errorf("proposal: %s: %w", EventsFile, res.Corrupt[0])
	}
	evs := make([]Event, 0, len(res.Records))
	for _, r := range res.Records {
		var e Event
		if err := json.Unmarshal(r.Payload, &e); err != nil {
			return nil, fmt.Errorf("proposal: %s line %d: %w", EventsFile, r.Line, err)
		}
		evs = append(evs, e)
	}
	return evs, nil
}
