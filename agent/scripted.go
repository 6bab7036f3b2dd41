package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrScriptExhausted is returned by [ScriptedModel.Generate] when every
// scripted response has been used.
var ErrScriptExhausted = errors.New("agent: scripted model has no more responses")

// ErrUnexpectedRequest is wrapped by the error [ScriptedModel.Generate]
// returns when a request does not match its step's expectation.
var ErrUnexpectedRequest = errors.New("agent: request does not match the script")

// Expect is what a scripted step expects of the request it answers. Every
// set field must hold; the zero Expect accepts any request.
type Expect struct {
	// Tools must all be offered (by name).
	Tools []string
	// NoTools must not be offered.
	NoTools []string
	// SystemContains must occur in the system prompt.
	SystemContains string
	// LastText must occur in the text of the last message.
	LastText string
	// ToolResult, when set, must occur in a tool_result of the last
	// message; ToolError then says whether that result is an error.
	ToolResult string
	ToolError  *bool
	// Check, when set, is called last; its error is reported.
	Check func(*Request) error
}

// Step is one scripted turn: the expectation for the request and the
// response to give.
type Step struct {
	Expect   Expect
	Response Response
}

// ScriptedModel is a Model that answers with a fixed list of responses, in
// order, for tests and offline demos. It checks every request's shape with
// [Request.Validate] and against its step's Expect. It is safe for
// concurrent use; concurrent requests take steps in the order they arrive.
type ScriptedModel struct {
	mu    sync.Mutex
	steps []Step
	next  int
	reqs  []*Request
}

// NewScriptedModel returns a model that answers with steps in order.
func NewScriptedModel(steps ...Step) *ScriptedModel {
	return &ScriptedModel{steps: steps}
}

// Generate returns the next step's response after checking req against the
// step's expectation. When the script is exhausted it returns an error
// wrapping ErrScriptExhausted; when req does not match, an error wrapping
// ErrUnexpectedRequest that names the step and what differed (the step is
// still used up, so a test sees the first mismatch only once).
func (m *ScriptedModel) Generate(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	snap := *req
	snap.Messages = append([]Message(nil), req.Messages...)
	snap.Tools = append([]ToolDef(nil), req.Tools...)
	m.reqs = append(m.reqs, &snap)
	if m.next >= len(m.steps) {
		return nil, fmt.Errorf("agent: request %d: the script has %d steps: %w", len(m.reqs), len(m.steps), ErrScriptExhausted)
	}
	i := m.next
	m.next++
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("agent: scripted step %d: malformed request: %v: %w", i+1, err, ErrUnexpectedRequest)
	}
	if err := m.steps[i].Expect.check(req); err != nil {
		return nil, fmt.Errorf("agent: scripted step %d: %v: %w", i+1, err, ErrUnexpectedRequest)
	}
	resp := m.steps[i].Response
	resp.Content = append([]Block(nil), resp.Content...)
	if resp.StopReason == "" {
		resp.StopReason = EndTurn
		for _, b := range resp.Content {
			if b.Type == ToolUseBlock {
				resp.StopReason = ToolUseStop
			}
		}
	}
	if resp.Model == "" {
		resp.Model = "scripted"
	}
	return &resp, nil
}

// Remaining returns the number of steps not yet used.
func (m *ScriptedModel) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.steps) - m.next
}

// Requests returns the requests received so far, as they were when they
// arrived (the message and tool lists are copied; the blocks are shared).
func (m *ScriptedModel) Requests() []*Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Request(nil), m.reqs...)
}

func (e Expect) check(req *Request) error {
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
	}
	for _, t := range e.Tools {
		if !offered[t] {
			return fmt.Errorf("tool %q is not offered", t)
		}
	}
	for _, t := range e.NoTools {
		if offered[t] {
			return fmt.Errorf("tool %q is offered but should not be", t)
		}
	}
	if e.SystemContains != "" && !strings.Contains(req.System, e.SystemContains) {
		return fmt.Errorf("system prompt does not contain %q", e.SystemContains)
	}
	last := req.Messages[len(req.Messages)-1]
	if e.LastText != "" && !strings.Contains(last.TextContent(), e.LastText) {
		return fmt.Errorf("last message's text %q does not contain %q", clip(last.TextContent()), e.LastText)
	}
	if e.ToolResult != "" || e.ToolError != nil {
		found := false
		var seen []string
		for _, b := range last.Content {
			if b.Type != ToolResultBlock {
				continue
			}
			seen = append(seen, clip(b.Content))
			if strings.Contains(b.Content, e.ToolResult) && (e.ToolError == nil || *e.ToolError == b.IsError) {
				found = true
			}
		}
		if !found {
			want := fmt.Sprintf("tool_result containing %q", e.ToolResult)
			if e.ToolError != nil {
				want += fmt.Sprintf(" with is_error %v", *e.ToolError)
			}
			return fmt.Errorf("last message has no %s (tool results: %q)", want, seen)
		}
	}
	if e.Check != nil {
		return e.Check(req)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
