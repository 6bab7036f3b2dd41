package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// ErrDigestMismatch is returned by [Hook.Resume] when the call about to run
// is not the call that was approved (its tool, input or cwd changed).
var ErrDigestMismatch = errors.New("approval: the call changed since it was put up for approval")

// ErrExpired is returned by [Hook.Resume] for a pending approval past its
// expiry.
var ErrExpired = errors.New("approval: pending approval expired")

// ErrNotAllowed is returned when a response's kind or scope is not among
// those the request allows.
var ErrNotAllowed = errors.New("approval: response not allowed for this call")

// ResponseKind is the kind of a human decision.
type ResponseKind string

// The response kinds.
const (
	// Approve runs the call (Scope says what is remembered).
	Approve ResponseKind = "approve"
	// Edit runs the call with changed input, after evaluating it again.
	Edit ResponseKind = "edit"
	// Reject does not run the call; the reason goes back to the model as
	// the tool result.
	Reject ResponseKind = "reject"
	// Respond does not run the call; the message goes back to the model as
	// the tool result.
	Respond ResponseKind = "respond"
	// Abort ends the turn: no call of the response runs.
	Abort ResponseKind = "abort"
)

// Response is a human decision on one call.
type Response struct {
	Kind ResponseKind `json:"kind"`
	// Scope of an Approve; empty means ScopeOnce.
	Scope Scope `json:"scope,omitempty"`
	// Rule is the exact allow rule to save for ScopeRule, as shown to the
	// human (Request.ProposedRule or their own).
	Rule string `json:"rule,omitempty"`
	// TTL and MaxUses limit a remembered approval (zero: no limit).
	TTL     time.Duration `json:"ttl,omitempty"`
	MaxUses int           `json:"max_uses,omitempty"`
	// Input is the changed input of an Edit.
	Input json.RawMessage `json:"input,omitempty"`
	// Message is the reason of a Reject or the text of a Respond.
	Message string `json:"message,omitempty"`
	// By names who decided, for the audit trail.
	By string `json:"by,omitempty"`
}

// AllResponses are the response kinds a pending call allows.
var AllResponses = []ResponseKind{Approve, Edit, Reject, Respond, Abort}

// Pending is a call waiting for a human. It is JSON-serializable so a host
// can stop the process and resume in another one.
type Pending struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Session string `json:"session"`
	// The call, as the model made it, and its digest.
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input"`
	Cwd    string          `json:"cwd"`
	Digest string          `json:"digest"`
	// Why it needs a human.
	Reason   string   `json:"reason"`
	Risk     string   `json:"risk,omitempty"`
	Segments []string `json:"segments,omitempty"`
	// What the human may answer.
	Allowed      []ResponseKind `json:"allowed"`
	Scopes       []Scope        `json:"scopes"`
	ProposedRule string         `json:"proposed_rule,omitempty"`
	Created      time.Time      `json:"created"`
	Expires      time.Time      `json:"expires"`
}

// Request is what an [Approver] is asked.
type Request struct {
	Pending
	// Decision is the evaluation that asked for a human.
	Decision Decision `json:"decision"`
}

// Approver asks a human about one call and blocks until they answer or ctx
// is done. Implementations must be safe for concurrent use.
type Approver interface {
	Decide(ctx context.Context, req Request) (Response, error)
}

// ToolCall is a tool call of a model response, as the hook receives it.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Action is what the agent loop does with a call.
type Action string

// The actions.
const (
	// Run the tool with Outcome.Input.
	Run Action = "run"
	// Return Outcome.Result to the model as the tool result, without
	// running the tool.
	Result Action = "result"
	// Wait: the call awaits a human (Outcome.PendingID); resume with
	// Hook.Resume.
	Wait Action = "pending"
	// Stop the turn: run nothing of this response.
	Stop Action = "abort"
)

// Outcome is the hook's answer for one call.
type Outcome struct {
	CallID string `json:"call_id"`
	Action Action `json:"action"`
	// Input to run with (the edited input after an Edit).
	Input json.RawMessage `json:"input,omitempty"`
	// Result is the tool-result text for Action Result; IsError marks a
	// denial or rejection.
	Result  string `json:"result,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// PendingID identifies the pending record for Action Wait.
	PendingID string `json:"pending_id,omitempty"`
	// Decision is the evaluation; By says who decided: "rule", "policy",
	// "remembered:<grant id>", or the human's name.
	Decision Decision `json:"decision"`
	By       string   `json:"by"`
}

// Batch is the hook's answer for one model response.
type Batch struct {
	// Outcomes, one per call, in the calls' order.
	Outcomes []Outcome `json:"outcomes"`
	// Pending holds the records of the calls waiting for a human.
	Pending []Pending `json:"pending,omitempty"`
	// Aborted is set when a human aborted the turn: every outcome is Stop.
	Aborted bool `json:"aborted,omitempty"`
}

// HookOptions configure a [Hook]. Nil means the defaults.
type HookOptions struct {
	// Store keeps pending records and remembered approvals; nil means a
	// new MemoryStore.
	Store Store
	// Audit, if set, records every evaluation and decision.
	Audit *AuditLog
	// Approver, if set, is asked synchronously; otherwise calls that need
	// a human become Pending.
	Approver Approver
	// Session identifies the session for session-scoped approvals; empty
	// means a new random id.
	Session string
	// PendingTTL is how long a pending record stays valid; zero means 24h.
	PendingTTL time.Duration
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// Hook is the post-model approval hook: it decides every tool call of a
// model response, by call id.
//
// A Hook is safe for concurrent use.
type Hook struct {
	ev       *Evaluator
	store    Store
	audit    *AuditLog
	approver Approver
	session  string
	ttl      time.Duration
	now      func() time.Time
}

// NewHook returns a hook deciding with ev.
func NewHook(ev *Evaluator, opts *HookOptions) *Hook {
	var o HookOptions
	if opts != nil {
		o = *opts
	}
	if o.Store == nil {
		o.Store = NewMemoryStore()
	}
	if o.Session == "" {
		o.Session = ulid.Make().String()
	}
	if o.PendingTTL <= 0 {
		o.PendingTTL = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Hook{ev: ev, store: o.Store, audit: o.Audit, approver: o.Approver, session: o.Session, ttl: o.PendingTTL, now: o.Now}
}

// Session returns the hook's session id.
func (h *Hook) Session() string { return h.session }

// Process decides the calls of one model response, run in cwd. Calls the
// rules or remembered approvals allow are Run (read-only calls in one batch,
// without asking); denied calls get a Result telling the model why; calls
// needing a human are asked of the Approver, or else saved as Pending.
// Call ids must be unique and non-empty. Cancelling ctx stops asking and
// returns an error wrapping ctx.Err().
func (h *Hook) Process(ctx context.Context, calls []ToolCall, cwd string) (Batch, error) {
	seen := map[string]bool{}
	for i, c := range calls {
		if c.ID == "" {
			return Batch{}, fmt.Errorf("approval: call %d (%s) has no id", i, c.Name)
		}
		if seen[c.ID] {
			return Batch{}, fmt.Errorf("approval: call id %q appears twice in one response", c.ID)
		}
		seen[c.ID] = true
	}
	var b Batch
	for _, c := range calls {
		o, p, err := h.one(ctx, c, cwd)
		if err != nil {
			return Batch{}, err
		}
		b.Outcomes = append(b.Outcomes, o)
		if p != nil {
			b.Pending = append(b.Pending, *p)
		}
		if o.Action == Stop {
			b.Aborted = true
			break
		}
	}
	if b.Aborted {
		out := make([]Outcome, len(calls))
		for i, c := range calls {
			out[i] = Outcome{CallID: c.ID, Action: Stop, By: "abort"}
			if i < len(b.Outcomes) {
				out[i].Decision, out[i].By = b.Outcomes[i].Decision, b.Outcomes[i].By
			}
		}
		for _, p := range b.Pending {
			h.store.DeletePending(ctx, p.ID)
		}
		b.Outcomes, b.Pending = out, nil
	}
	return b, nil
}

func (h *Hook) call(c ToolCall, cwd string) Call {
	return Call{ID: c.ID, Tool: c.Name, Input: c.Input, Cwd: ResolveCwd(cwd)}
}

// grantRules returns the live rule grants of this session as rules, and
// the grants themselves by rule text.
func (h *Hook) grants(ctx context.Context) ([]Grant, []Rule, map[string]Grant, error) {
	gs, err := h.store.Grants(ctx, h.now())
	if err != nil {
		return nil, nil, nil, err
	}
	var rules []Rule
	byText := map[string]Grant{}
	for _, g := range gs {
		if g.Rule == "" || g.Session != "" && g.Session != h.session {
			continue
		}
		r, err := ParseRule(g.Rule, h.ev.kinds)
		if err != nil {
			continue // a rule this evaluator cannot read covers nothing
		}
		r.Layer, r.Source = LayerSession, "grant:"+g.ID
		rules = append(rules, r)
		byText[r.Text] = g
	}
	return gs, rules, byText, nil
}

func (h *Hook) one(ctx context.Context, c ToolCall, cwd string) (Outcome, *Pending, error) {
	start := time.Now()
	call := h.call(c, cwd)
	digest, err := Digest(call.Tool, call.Input, call.Cwd)
	if err != nil {
		o := Outcome{CallID: c.ID, Action: Result, IsError: true, By: "policy",
			Result:   "The tool call was not run: its input is not valid JSON.",
			Decision: Decision{Effect: Deny, Reason: err.Error()}}
		return o, nil, h.record(AuditRecord{Event: "evaluate", CallID: c.ID, Tool: c.Name, Effect: Deny, Reason: err.Error(), Latency: time.Since(start)})
	}
	gs, grantRules, byText, err := h.grants(ctx)
	if err != nil {
		return Outcome{}, nil, err
	}
	d, err := h.ev.EvaluateWith(ctx, call, grantRules)
	if err != nil {
		return Outcome{}, nil, err
	}
	if err := h.record(auditOf("evaluate", call, digest, d, "", "", time.Since(start))); err != nil {
		return Outcome{}, nil, err
	}
	switch d.Effect {
	case Deny:
		by := "policy"
		if d.Rule != nil {
			by = "rule"
		}
		o, err := h.denied(call, d, by)
		return o, nil, err
	case Allow:
		by := "rule"
		if d.Rule == nil {
			by = "policy"
		}
		// Count a use of every rule grant that allowed a segment.
		used := map[string]bool{}
		for _, s := range append([]SegmentDecision{{Rule: d.Rule}}, d.Segments...) {
			if s.Rule != nil && strings.HasPrefix(s.Rule.Source, "grant:") && !used[s.Rule.Source] {
				used[s.Rule.Source] = true
				g := byText[s.Rule.Text]
				if err := h.store.UseGrant(ctx, g.ID, h.now()); err != nil {
					d.Effect, d.Reason = Ask, "remembered rule "+g.Rule+" is used up"
					break
				}
				by = "remembered:" + g.ID
			}
		}
		if d.Effect == Allow {
			o := Outcome{CallID: c.ID, Action: Run, Input: call.Input, Decision: d, By: by}
			return o, nil, h.record(auditOf("decision", call, digest, d, "run", by, time.Since(start)))
		}
	}
	// Ask: a remembered approval of this exact call?
	for _, g := range gs {
		if g.Digest != digest || g.Session != "" && g.Session != h.session {
			continue
		}
		if err := h.store.UseGrant(ctx, g.ID, h.now()); err != nil {
			continue
		}
		by := "remembered:" + g.ID
		o := Outcome{CallID: c.ID, Action: Run, Input: call.Input, Decision: d, By: by}
		return o, nil, h.record(auditOf("decision", call, digest, d, "run", by, time.Since(start)))
	}
	p := h.pending(call, digest, d)
	if h.approver == nil {
		if err := h.store.PutPending(ctx, p); err != nil {
			return Outcome{}, nil, err
		}
		o := Outcome{CallID: c.ID, Action: Wait, PendingID: p.ID, Decision: d, By: "pending"}
		return o, &p, h.record(auditOf("pending", call, digest, d, "pending "+p.ID, "", time.Since(start)))
	}
	resp, err := h.approver.Decide(ctx, Request{Pending: p, Decision: d})
	if err != nil {
		return Outcome{}, nil, fmt.Errorf("approval: approver: %w", err)
	}
	o, err := h.apply(ctx, call, digest, d, p, resp, start)
	return o, nil, err
}

func (h *Hook) pending(call Call, digest string, d Decision) Pending {
	now := h.now().UTC()
	p := Pending{Version: 1, ID: ulid.Make().String(), Session: h.session, CallID: call.ID, Tool: call.Tool,
		Input: call.Input, Cwd: call.Cwd, Digest: digest, Reason: d.Reason, Risk: string(d.Risk),
		Allowed: AllResponses, Scopes: []Scope{ScopeOnce, ScopeSession, ScopeWorkspace},
		ProposedRule: h.ev.ProposeRule(call), Created: now, Expires: now.Add(h.ttl)}
	if p.ProposedRule != "" {
		p.Scopes = append(p.Scopes, ScopeRule)
	}
	for _, s := range d.Segments {
		p.Segments = append(p.Segments, fmt.Sprintf("%s: %s (%s)", s.Effect, s.Text, s.Reason))
	}
	return p
}

func (h *Hook) denied(call Call, d Decision, by string) (Outcome, error) {
	o := Outcome{CallID: call.ID, Action: Result, IsError: true, Decision: d, By: by,
		Result: "The tool call was not run: it was denied by policy (" + d.Reason + ")."}
	return o, h.record(auditOf("decision", call, "", d, "denied", by, 0))
}

// Resume applies a human's response to a pending call. call and cwd must
// be the call that is about to run: when their digest differs from the
// pending record's, Resume refuses with ErrDigestMismatch and the call must
// not run. The call is evaluated again, so a rule added since (a deny)
// still applies.
//
// Resume takes the pending record from the store in one atomic step
// ([Store.TakePending]) before anything else, so an approval runs the call
// at most once: of several concurrent Resumes of one id (goroutines, or
// processes sharing a [FileStore]) exactly one proceeds and the others get
// an error wrapping ErrNotFound. The record stays removed once the
// response is applied (Run, Result or Stop), when policy now denies the
// call, and when it has expired (ErrExpired). When Resume refuses instead
// (ErrDigestMismatch: the real call may still come; ErrNotAllowed or
// another bad response: the human may answer again; a store or audit
// failure), it puts the record back unchanged.
func (h *Hook) Resume(ctx context.Context, pendingID string, c ToolCall, cwd string, resp Response) (_ Outcome, err error) {
	start := time.Now()
	p, err := h.store.TakePending(ctx, pendingID)
	if err != nil {
		return Outcome{}, err
	}
	if !h.now().Before(p.Expires) {
		return Outcome{}, fmt.Errorf("%w: %s expired at %s", ErrExpired, pendingID, p.Expires.Format(time.RFC3339))
	}
	answered := false
	defer func() {
		if answered {
			return
		}
		// Put the record back even if ctx was cancelled: losing it would
		// turn a refusal into a silent rejection.
		if perr := h.store.PutPending(context.WithoutCancel(ctx), p); perr != nil {
			err = errors.Join(err, fmt.Errorf("approval: put back pending %s: %w", pendingID, perr))
		}
	}()
	call := h.call(c, cwd)
	digest, err := Digest(call.Tool, call.Input, call.Cwd)
	if err != nil || digest != p.Digest || call.ID != p.CallID {
		err := fmt.Errorf("%w (pending %s, call %s)", ErrDigestMismatch, pendingID, c.ID)
		if aerr := h.record(AuditRecord{Event: "resume", Session: h.session, CallID: c.ID, Tool: c.Name, Digest: digest,
			Decision: "refused: digest mismatch", Reason: "approved digest " + p.Digest, Latency: time.Since(start)}); aerr != nil {
			err = errors.Join(err, aerr)
		}
		return Outcome{}, err
	}
	_, grantRules, _, err := h.grants(ctx)
	if err != nil {
		return Outcome{}, err
	}
	d, err := h.ev.EvaluateWith(ctx, call, grantRules)
	if err != nil {
		return Outcome{}, err
	}
	if d.Effect == Deny {
		answered = true
		return h.denied(call, d, "policy")
	}
	o, err := h.apply(ctx, call, digest, d, p, resp, start)
	if err != nil {
		return Outcome{}, err
	}
	answered = true
	return o, nil
}

// apply carries out a human response.
func (h *Hook) apply(ctx context.Context, call Call, digest string, d Decision, p Pending, resp Response, start time.Time) (Outcome, error) {
	if !slices.Contains(p.Allowed, resp.Kind) {
		return Outcome{}, fmt.Errorf("%w: kind %q (allowed: %v)", ErrNotAllowed, resp.Kind, p.Allowed)
	}
	by := resp.By
	if by == "" {
		by = "human"
	}
	o := Outcome{CallID: call.ID, Decision: d, By: by}
	what := string(resp.Kind)
	switch resp.Kind {
	case Approve:
		scope := resp.Scope
		if scope == "" {
			scope = ScopeOnce
		}
		if !slices.Contains(p.Scopes, scope) {
			return Outcome{}, fmt.Errorf("%w: scope %q (allowed: %v)", ErrNotAllowed, scope, p.Scopes)
		}
		what += " " + string(scope)
		g := Grant{Version: 1, ID: ulid.Make().String(), Scope: scope, Tool: call.Tool, Created: h.now().UTC(),
			MaxUses: resp.MaxUses, By: by}
		if resp.TTL > 0 {
			g.Expires = g.Created.Add(resp.TTL)
		}
		switch scope {
		case ScopeSession:
			g.Session, g.Digest = h.session, digest
		case ScopeWorkspace:
			g.Digest = digest
		case ScopeRule:
			r, err := ParseRule(resp.Rule, h.ev.kinds)
			if err != nil {
				return Outcome{}, fmt.Errorf("approval: the rule to save: %w", err)
			}
			if r.Effect != Allow {
				return Outcome{}, fmt.Errorf("approval: a saved approval must be an allow rule, not %q", resp.Rule)
			}
			check := NewEvaluator(&Options{Tools: h.ev.kinds, ReadOnlyTools: []string{}, Root: h.ev.root, Home: h.ev.home})
			check.Add(LayerSession, r)
			if eff, err := check.rulesOnly(call); err != nil || eff != Allow {
				return Outcome{}, fmt.Errorf("%w: the rule %q does not cover this call", ErrNotAllowed, resp.Rule)
			}
			g.Rule = r.Text
			what += ": " + r.Text
		}
		if scope != ScopeOnce {
			if err := h.store.AddGrant(ctx, g); err != nil {
				return Outcome{}, err
			}
		}
		o.Action, o.Input = Run, call.Input
	case Edit:
		if !json.Valid(resp.Input) {
			return Outcome{}, fmt.Errorf("approval: edited input is not valid JSON")
		}
		edited := call
		edited.Input = resp.Input
		_, grantRules, _, err := h.grants(ctx)
		if err != nil {
			return Outcome{}, err
		}
		d2, err := h.ev.EvaluateWith(ctx, edited, grantRules)
		if err != nil {
			return Outcome{}, err
		}
		o.Decision = d2
		if d2.Effect == Deny {
			o.Action, o.IsError = Result, true
			o.Result = "The edited tool call was not run: it was denied by policy (" + d2.Reason + ")."
		} else {
			// The human wrote the new input: that is their approval of it.
			o.Action, o.Input = Run, resp.Input
		}
		call = edited
		digest, _ = Digest(call.Tool, call.Input, call.Cwd)
	case Reject:
		o.Action, o.IsError = Result, true
		o.Result = "The user rejected this tool call; it was not run."
		if resp.Message != "" {
			o.Result += " Reason: " + resp.Message
		}
	case Respond:
		if resp.Message == "" {
			return Outcome{}, fmt.Errorf("approval: a respond decision needs a message")
		}
		o.Action, o.Result = Result, resp.Message
	case Abort:
		o.Action = Stop
	default:
		return Outcome{}, fmt.Errorf("%w: unknown kind %q", ErrNotAllowed, resp.Kind)
	}
	rec := auditOf("decision", call, digest, o.Decision, what, by, time.Since(start))
	if resp.Message != "" {
		rec.Reason = resp.Message
	}
	return o, h.record(rec)
}

// ListPending returns the pending records of the hook's store.
func (h *Hook) ListPending(ctx context.Context) ([]Pending, error) { return h.store.ListPending(ctx) }

// record appends to the audit log, if any. A failure to audit fails the
// decision: nothing runs unrecorded.
func (h *Hook) record(r AuditRecord) error {
	if h.audit == nil {
		return nil
	}
	if r.Session == "" {
		r.Session = h.session
	}
	_, err := h.audit.Append(r)
	return err
}
