package agent

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/paddockdev/paddock/approval"
	"github.com/paddockdev/paddock/workspace"
)

// LoopExtension is the name of the workspace extension state in which a
// paused turn keeps the tool calls it is waiting on.
const LoopExtension = "agent.loop"

// Defaults of a Loop.
const (
	DefaultMaxSteps  = 50
	DefaultMaxTokens = 4096
)

// Loop errors.
var (
	// ErrNoPendingTurn: Resume found no paused turn to continue.
	ErrNoPendingTurn = errors.New("agent: no paused turn to resume")
	// ErrTurnPaused: Run was called while a turn waits for approvals; call
	// Resume (or discard the turn through the workspace instance).
	ErrTurnPaused = errors.New("agent: a turn is waiting for approvals")
	// ErrMissingDecision: Resume was not given a decision for every pending
	// call.
	ErrMissingDecision = errors.New("agent: no decision for a pending call")
)

// Loop runs one agent turn by turn: the model answers; the approval hook
// decides every tool call of the answer, by call id; the calls it lets
// run go through the tool set (in the agent's sandbox); and every result,
// including a rejection or the hook's reply in place of a run, goes back to
// the model as the call's tool_result, so the model learns what happened.
//
// Every message is appended to the workspace instance as it comes, with a
// durable step after each model answer and each round of tool results, and
// the turn is committed (folded into the instance's base log) when the model
// ends it. A turn that needs a human's decision pauses: Run returns
// StatusPaused with the pending records, the turn stays open in the
// instance (its state in the LoopExtension extension), and Resume, in this
// process or in a new one after a restart, continues the same turn.
//
// A Loop is not safe for concurrent use: it drives one conversation.
type Loop struct {
	// Model answers; required.
	Model Model
	// Tools are the tools the model may call; required.
	Tools *Set
	// Instance stores the conversation; required. The Loop reads its
	// committed messages as the history.
	Instance *workspace.Instance
	// Hook decides every tool call; nil runs every call the model makes
	// (the sandbox still contains them).
	Hook *approval.Hook
	// Cwd is the agent's resolved working directory (see ResolveCwd); it
	// is bound into every approval's call digest.
	Cwd string
	// System is the system prompt (see Instructions).
	System string
	// MaxSteps bounds the model calls of one turn; zero means
	// DefaultMaxSteps. MaxTokens is each answer's token limit; zero means
	// DefaultMaxTokens.
	MaxSteps  int
	MaxTokens int
	// Observe, if set, is called with every event of the loop, in order,
	// for a transcript.
	Observe func(LoopEvent)

	turn *workspace.Turn
}

// Status is how a turn ended.
type Status string

// The statuses of a turn.
const (
	// StatusDone: the model ended the turn; it is committed.
	StatusDone Status = "done"
	// StatusPaused: calls wait for a human; the turn is open. Resume it.
	StatusPaused Status = "paused"
	// StatusAborted: a human aborted the turn; it is committed, with every
	// unanswered call answered as aborted.
	StatusAborted Status = "aborted"
	// StatusStepLimit: the turn reached MaxSteps; it is committed.
	StatusStepLimit Status = "step_limit"
)

// TurnResult is what Run and Resume return.
type TurnResult struct {
	Status Status
	// Text is the text of the model's last answer.
	Text string
	// Pending are the calls waiting for a human (StatusPaused).
	Pending []approval.Pending
	// Steps counts the model calls of this Run or Resume.
	Steps int
	// Usage sums the tokens of those calls.
	Usage Usage
}

// LoopEventKind is the kind of a LoopEvent.
type LoopEventKind string

// The kinds of loop events.
const (
	EventUser      LoopEventKind = "user"      // Text: the prompt
	EventAssistant LoopEventKind = "assistant" // Text: the model's text
	EventDecision  LoopEventKind = "decision"  // Call, Outcome: the hook's answer
	EventToolRun   LoopEventKind = "tool"      // Call, Result: a tool ran
	EventPaused    LoopEventKind = "paused"    // Pending: the turn waits
	EventEnd       LoopEventKind = "end"       // Status
)

// LoopEvent is one thing that happened in a turn.
type LoopEvent struct {
	Kind    LoopEventKind
	Text    string
	Call    *approval.ToolCall
	Outcome *approval.Outcome
	Result  *Result
	Pending *approval.Pending
	Status  Status
}

// loopState is a paused turn's LoopExtension state: the calls of the last
// answer, each with the hook's outcome and, once run or answered, its
// result.
type loopState struct {
	Version int `json:"version"`
	// Steps counts the turn's model calls, across pauses.
	Steps   int         `json:"steps"`
	Paused  bool        `json:"paused"`
	Calls   []loopCall  `json:"calls,omitempty"`
	Pending []pendingID `json:"pending,omitempty"`
}

type pendingID struct {
	CallID    string `json:"callId"`
	PendingID string `json:"pendingId"`
}

type loopCall struct {
	Call    approval.ToolCall `json:"call"`
	Outcome approval.Outcome  `json:"outcome"`
	Done    bool              `json:"done"`
	Result  Result            `json:"result"`
}

func (l *Loop) check() error {
	switch {
	case l.Model == nil:
		return errors.New("agent: Loop.Model is nil")
	case l.Tools == nil:
		return errors.New("agent: Loop.Tools is nil")
	case l.Instance == nil:
		return errors.New("agent: Loop.Instance is nil")
	}
	return nil
}

// Run starts a turn with the user's prompt and runs it until the model ends
// it, a call waits for a human, a human aborts it, or it reaches MaxSteps.
// An error (the model's, the store's, a tool's host error, ctx done) leaves
// the turn open in the instance, as far as it got.
func (l *Loop) Run(ctx context.Context, prompt string) (*TurnResult, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	if l.turn != nil || l.Instance.PendingTurn() != nil {
		return nil, ErrTurnPaused
	}
	turn, err := l.Instance.BeginTurn(ctx)
	if err != nil {
		return nil, err
	}
	l.turn = turn
	l.observe(LoopEvent{Kind: EventUser, Text: prompt})
	if err := l.append(ctx, UserText(prompt), workspace.Source{Type: "user"}); err != nil {
		return nil, err
	}
	if err := turn.EndStep(ctx); err != nil {
		return nil, err
	}
	l.emit(ctx, workspace.RuntimeEvent{Type: "turn.started"})
	return l.steps(ctx, &loopState{Version: 1})
}

// Paused returns the calls the instance's open turn waits on, or nil when no
// turn is paused. After a restart it reads them from the recovered turn.
func (l *Loop) Paused() ([]approval.Pending, error) {
	st, ok, err := l.pausedState()
	if err != nil || !ok {
		return nil, err
	}
	var out []approval.Pending
	if l.Hook == nil {
		return nil, nil
	}
	all, err := l.Hook.ListPending(context.Background())
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, p := range st.Pending {
		want[p.PendingID] = true
	}
	for _, p := range all {
		if want[p.ID] {
			out = append(out, p)
		}
	}
	return out, nil
}

func (l *Loop) pausedState() (*loopState, bool, error) {
	var st loopState
	var ok bool
	var err error
	switch {
	case l.turn != nil:
		ok, err = l.turn.Extension(LoopExtension, &st)
	case l.Instance.PendingTurn() != nil:
		raw, has := l.Instance.PendingTurn().Extensions[LoopExtension]
		if has {
			ok, err = true, json.Unmarshal(raw, &st)
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("agent: reading the paused turn's state: %w", err)
	}
	return &st, ok && st.Paused, nil
}

// Resume continues the paused turn with a human's decision for each pending
// call, keyed by the pending record's id. The hook checks each decision
// against the call about to run (its digest), so a call changed since it was
// put up for approval is refused. Resume works in the process that paused
// and in a new one after a restart (the instance recovered the open turn).
func (l *Loop) Resume(ctx context.Context, decisions map[string]approval.Response) (*TurnResult, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	if l.Hook == nil {
		return nil, errors.New("agent: Resume needs Loop.Hook")
	}
	st, ok, err := l.pausedState()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoPendingTurn
	}
	for _, p := range st.Pending {
		if _, ok := decisions[p.PendingID]; !ok {
			return nil, fmt.Errorf("%w: %s (call %s)", ErrMissingDecision, p.PendingID, p.CallID)
		}
	}
	if l.turn == nil {
		if l.turn, err = l.Instance.ResumeTurn(ctx); err != nil {
			return nil, err
		}
	}
	for i := range st.Calls {
		c := &st.Calls[i]
		if c.Done || c.Outcome.Action != approval.Wait {
			continue
		}
		out, err := l.Hook.Resume(ctx, c.Outcome.PendingID, c.Call, l.Cwd, decisions[c.Outcome.PendingID])
		if err != nil {
			return nil, fmt.Errorf("agent: resuming call %s: %w", c.Call.ID, err)
		}
		c.Outcome = out
		l.observe(LoopEvent{Kind: EventDecision, Call: &c.Call, Outcome: &c.Outcome})
	}
	st.Paused, st.Pending = false, nil
	res := &TurnResult{}
	done, err := l.finishCalls(ctx, st, res)
	if err != nil || done {
		return res, err
	}
	return l.steps(ctx, st)
}

// steps runs model answers and their calls until the turn ends or pauses.
func (l *Loop) steps(ctx context.Context, st *loopState) (*TurnResult, error) {
	maxSteps := l.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	maxTokens := l.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	res := &TurnResult{}
	for {
		if st.Steps >= maxSteps {
			res.Status = StatusStepLimit
			return res, l.commit(ctx, res)
		}
		req := &Request{System: l.System, Messages: l.conversation(), Tools: l.Tools.Defs(), MaxTokens: maxTokens}
		resp, err := l.Model.Generate(ctx, req)
		if err != nil {
			return res, fmt.Errorf("agent: model: %w", err)
		}
		st.Steps++
		res.Steps++
		res.Usage.InputTokens += resp.Usage.InputTokens
		res.Usage.OutputTokens += resp.Usage.OutputTokens
		msg := resp.Message()
		res.Text = msg.TextContent()
		if res.Text != "" {
			l.observe(LoopEvent{Kind: EventAssistant, Text: res.Text})
		}
		if err := l.append(ctx, msg, workspace.Source{Type: "assistant"}); err != nil {
			return res, err
		}
		uses := msg.ToolUses()
		l.emit(ctx, workspace.RuntimeEvent{Type: "step.completed", StepIndex: st.Steps,
			Data: map[string]any{"stopReason": string(resp.StopReason), "toolCalls": len(uses), "inputTokens": resp.Usage.InputTokens, "outputTokens": resp.Usage.OutputTokens}})
		if len(uses) == 0 {
			if err := l.turn.EndStep(ctx); err != nil {
				return res, err
			}
			res.Status = StatusDone
			return res, l.commit(ctx, res)
		}
		calls := make([]approval.ToolCall, len(uses))
		for i, u := range uses {
			calls[i] = approval.ToolCall{ID: u.ID, Name: u.Name, Input: u.Input}
		}
		var batch approval.Batch
		if l.Hook != nil {
			if batch, err = l.Hook.Process(ctx, calls, l.Cwd); err != nil {
				return res, fmt.Errorf("agent: approval: %w", err)
			}
		} else {
			for _, c := range calls {
				batch.Outcomes = append(batch.Outcomes, approval.Outcome{CallID: c.ID, Action: approval.Run, Input: c.Input})
			}
		}
		if len(batch.Outcomes) != len(calls) {
			return res, fmt.Errorf("agent: approval hook answered %d of %d calls", len(batch.Outcomes), len(calls))
		}
		st.Calls = st.Calls[:0]
		for i, c := range calls {
			out := batch.Outcomes[i]
			if out.CallID != c.ID {
				return res, fmt.Errorf("agent: approval hook answered call %s in place of %s", out.CallID, c.ID)
			}
			st.Calls = append(st.Calls, loopCall{Call: c, Outcome: out})
			l.observe(LoopEvent{Kind: EventDecision, Call: &st.Calls[i].Call, Outcome: &st.Calls[i].Outcome})
		}
		done, err := l.finishCalls(ctx, st, res)
		if err != nil || done {
			return res, err
		}
	}
}

// finishCalls runs or answers st.Calls in order. It stops at the first
// call that waits for a human (pausing the turn) and reports done when the
// turn ended (paused or aborted).
func (l *Loop) finishCalls(ctx context.Context, st *loopState, res *TurnResult) (done bool, err error) {
	aborted := false
	for i := range st.Calls {
		c := &st.Calls[i]
		if c.Done {
			continue
		}
		switch c.Outcome.Action {
		case approval.Run:
			input := c.Outcome.Input
			if len(input) == 0 {
				input = c.Call.Input
			}
			l.emit(ctx, workspace.RuntimeEvent{Type: "tool.called", ToolCallID: c.Call.ID, ToolName: c.Call.Name})
			r, err := l.Tools.Call(ctx, c.Call.Name, input)
			if err != nil {
				return false, fmt.Errorf("agent: tool %s (call %s): %w", c.Call.Name, c.Call.ID, err)
			}
			c.Result, c.Done = r, true
			l.emit(ctx, workspace.RuntimeEvent{Type: "tool.completed", ToolCallID: c.Call.ID, ToolName: c.Call.Name, Data: map[string]any{"isError": r.IsError}})
			l.observe(LoopEvent{Kind: EventToolRun, Call: &c.Call, Result: &c.Result})
		case approval.Result:
			c.Result, c.Done = Result{Content: c.Outcome.Result, IsError: c.Outcome.IsError}, true
		case approval.Stop:
			aborted = true
			c.Result, c.Done = Result{Content: "The user aborted the turn; this call did not run.", IsError: true}, true
		case approval.Wait:
			if aborted {
				c.Result, c.Done = Result{Content: "The user aborted the turn; this call did not run.", IsError: true}, true
				continue
			}
			return true, l.pause(ctx, st, res)
		default:
			return false, fmt.Errorf("agent: approval hook gave call %s the unknown action %q", c.Call.ID, c.Outcome.Action)
		}
	}
	blocks := make([]Block, len(st.Calls))
	for i, c := range st.Calls {
		blocks[i] = ToolResult(c.Call.ID, c.Result)
	}
	if err := l.append(ctx, Message{Role: User, Content: blocks}, workspace.Source{Type: "tool"}); err != nil {
		return false, err
	}
	st.Calls = nil
	if err := l.turn.SetExtension(LoopExtension, loopState{Version: 1}); err != nil {
		return false, err
	}
	if err := l.turn.EndStep(ctx); err != nil {
		return false, err
	}
	if aborted {
		res.Status = StatusAborted
		return true, l.commit(ctx, res)
	}
	return false, nil
}

// pause records the open calls in the turn and ends the step durably.
func (l *Loop) pause(ctx context.Context, st *loopState, res *TurnResult) error {
	st.Paused = true
	st.Pending = nil
	var ids []string
	for _, c := range st.Calls {
		if !c.Done && c.Outcome.Action == approval.Wait {
			st.Pending = append(st.Pending, pendingID{CallID: c.Call.ID, PendingID: c.Outcome.PendingID})
			ids = append(ids, c.Outcome.PendingID)
		}
	}
	if err := l.turn.SetExtension(LoopExtension, st); err != nil {
		return err
	}
	if err := l.turn.EndStep(ctx); err != nil {
		return err
	}
	res.Status = StatusPaused
	pend, err := l.Paused()
	if err != nil {
		return err
	}
	res.Pending = pend
	for i := range pend {
		l.observe(LoopEvent{Kind: EventPaused, Pending: &pend[i]})
	}
	l.emit(ctx, workspace.RuntimeEvent{Type: "turn.paused", Data: map[string]any{"pending": ids}})
	l.observe(LoopEvent{Kind: EventEnd, Status: StatusPaused})
	return nil
}

func (l *Loop) commit(ctx context.Context, res *TurnResult) error {
	if err := l.turn.Commit(ctx); err != nil {
		return err
	}
	l.turn = nil
	l.emit(ctx, workspace.RuntimeEvent{Type: "turn.completed", Data: map[string]any{"status": string(res.Status), "steps": res.Steps}})
	l.observe(LoopEvent{Kind: EventEnd, Status: res.Status})
	return nil
}

// conversation is the committed history with the open turn's messages.
// Messages that are not the Loop's (another writer's, without a role) are
// skipped.
func (l *Loop) conversation() []Message {
	var out []Message
	for _, m := range l.turn.Messages() {
		var msg Message
		if json.Unmarshal(m.Data, &msg) == nil && msg.Role != "" {
			out = append(out, msg)
		}
	}
	return out
}

func (l *Loop) append(ctx context.Context, m Message, src workspace.Source) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	id := ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader).String()
	return l.turn.Append(ctx, workspace.Append(workspace.Message{ID: id, Data: data, CreatedAt: time.Now().UTC(), Source: src}))
}

// emit writes a runtime event; the runtime log is for observability, so a
// failure to write it does not stop the turn.
func (l *Loop) emit(ctx context.Context, ev workspace.RuntimeEvent) {
	if l.turn != nil {
		ev.TurnID = l.turn.ID()
	}
	_ = l.Instance.Emit(ctx, ev)
}

func (l *Loop) observe(ev LoopEvent) {
	if l.Observe != nil {
		l.Observe(ev)
	}
}
