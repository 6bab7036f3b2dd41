package proposal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/paddockdev/paddock/internal/vfs"
	"github.com/paddockdev/paddock/workspace"
)

// RejectionSchema identifies rejection.json.
const RejectionSchema = "paddock.proposal.rejection"

// A Rejection is the content of rejection.json: a reviewer's decision not
// to apply a proposal, with the reason.
type Rejection struct {
	Schema     string    `json:"schema"`
	Version    string    `json:"version"`
	ProposalID string    `json:"proposalId"`
	Reason     string    `json:"reason"`
	RejectedAt time.Time `json:"rejectedAt"`
}

// RejectOptions are the optional inputs of Reject. A nil *RejectOptions
// means all defaults.
type RejectOptions struct {
	// Instance, when set, receives the proposal_rejected event; otherwise
	// it goes to events.jsonl in the proposal directory.
	Instance *workspace.Instance
	// Now returns the time of the rejection; nil means time.Now.
	Now func() time.Time
}

// Reject records that the proposal in dir is rejected, and why: it writes
// rejection.json beside proposal.json (atomically, replacing an earlier
// rejection) and records a proposal_rejected event. The reason must not be
// empty: the worker reads it to try again.
func Reject(ctx context.Context, dir, reason string, opts *RejectOptions) (*Rejection, error) {
	if opts == nil {
		opts = &RejectOptions{}
	}
	if strings.TrimSpace(reason) == "" {
		return nil, errors.New("proposal: Reject needs a reason, for the worker to act on")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("proposal: reject: %w", err)
	}
	p, err := Load(dir)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	rj := &Rejection{Schema: RejectionSchema, Version: Version, ProposalID: p.ID, Reason: reason, RejectedAt: now().UTC()}
	b, err := json.MarshalIndent(rj, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := vfs.WriteFileAtomic(vfs.OS, filepath.Join(dir, RejectedFile), append(b, '\n'), 0o644, false); err != nil {
		return nil, fmt.Errorf("proposal: %w", err)
	}
	if err := emit(ctx, opts.Instance, dir, EventRejected, p, map[string]any{"reason": reason}); err != nil {
		return nil, err
	}
	return rj, nil
}
