package approval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// TerminalApprover asks on a terminal (or any reader and writer) and
// blocks for the answer: y (once), s (session), a/always (workspace), r
// (save the proposed rule, shown exactly first), e/edit (new JSON input),
// n (reject with a reason), m (respond with a message), q (abort the turn).
//
// A TerminalApprover is safe for concurrent use: questions are asked one
// at a time.
type TerminalApprover struct {
	mu  sync.Mutex
	in  *bufio.Reader
	out io.Writer
	who string
}

// NewTerminalApprover returns an approver reading answers from in and
// writing questions to out. who names the human in the audit trail.
func NewTerminalApprover(in io.Reader, out io.Writer, who string) *TerminalApprover {
	if who == "" {
		who = "terminal"
	}
	return &TerminalApprover{in: bufio.NewReader(in), out: out, who: who}
}

func (t *TerminalApprover) line(ctx context.Context, prompt string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	fmt.Fprint(t.out, prompt)
	s, err := t.in.ReadString('\n')
	if err != nil && (err != io.EOF || s == "") {
		if err == io.EOF {
			return "", errors.New("approval: terminal closed before an answer")
		}
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// Decide shows the call and reads the answer. Reading is not interrupted
// by ctx; ctx is checked before each question.
func (t *TerminalApprover) Decide(ctx context.Context, req Request) (Response, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, "\n%s wants to run %s %s\n  in %s\n  because: %s\n", "the agent",
		Printable(req.Tool), Printable(string(req.Input)), Printable(req.Cwd), Printable(req.Reason))
	for _, s := range req.Segments {
		fmt.Fprintf(t.out, "  - %s\n", Printable(s))
	}
	for {
		ans, err := t.line(ctx, "approve? [y]es once / [s]ession / [a]lways here / [r]ule / [e]dit / [n]o / [m]essage / [q]uit: ")
		if err != nil {
			return Response{}, err
		}
		resp := Response{By: t.who}
		switch strings.ToLower(ans) {
		case "y", "yes":
			resp.Kind, resp.Scope = Approve, ScopeOnce
		case "s", "session":
			resp.Kind, resp.Scope = Approve, ScopeSession
		case "a", "always":
			resp.Kind, resp.Scope = Approve, ScopeWorkspace
		case "r", "rule":
			if req.ProposedRule == "" || !slices.Contains(req.Scopes, ScopeRule) {
				fmt.Fprintln(t.out, "no rule can cover this call; approve it once, for the session or always")
				continue
			}
			fmt.Fprintf(t.out, "this rule will be saved:\n  %s\n", Printable(req.ProposedRule))
			ok, err := t.line(ctx, "save it? [y/N]: ")
			if err != nil {
				return Response{}, err
			}
			if strings.ToLower(ok) != "y" {
				continue
			}
			resp.Kind, resp.Scope, resp.Rule = Approve, ScopeRule, req.ProposedRule
		case "e", "edit":
			in, err := t.line(ctx, "new input (JSON): ")
			if err != nil {
				return Response{}, err
			}
			if !json.Valid([]byte(in)) {
				fmt.Fprintln(t.out, "that is not valid JSON")
				continue
			}
			resp.Kind, resp.Input = Edit, json.RawMessage(in)
		case "n", "no":
			reason, err := t.line(ctx, "reason (sent to the model): ")
			if err != nil {
				return Response{}, err
			}
			resp.Kind, resp.Message = Reject, reason
		case "m", "message":
			msg, err := t.line(ctx, "message to the model instead of running it: ")
			if err != nil {
				return Response{}, err
			}
			if msg == "" {
				continue
			}
			resp.Kind, resp.Message = Respond, msg
		case "q", "quit":
			resp.Kind = Abort
		default:
			fmt.Fprintf(t.out, "answer one of y, s, a, r, e, n, m, q\n")
			continue
		}
		if !slices.Contains(req.Allowed, resp.Kind) {
			fmt.Fprintf(t.out, "%s is not allowed here\n", resp.Kind)
			continue
		}
		return resp, nil
	}
}

// Printable returns s as it is when every rune of it is printable
// ([strconv.IsPrint]: letters, marks, numbers, punctuation, symbols and
// the ASCII space) and valid UTF-8. Otherwise it returns s quoted with Go
// escapes ([strconv.Quote]): control characters such as ESC, CR and
// newline, Unicode format characters such as the bidi overrides (U+202E)
// and zero-width spaces, other spaces and invalid bytes become visible
// escapes, so text from a model cannot move the cursor, erase or reorder
// what a human reads before approving it. Plain commands, including
// non-ASCII text and backslashes, stay readable as they are.
//
// Hosts that show calls in their own terminal UI should print call text
// through Printable too.
func Printable(s string) string {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return strconv.Quote(s)
			}
		}
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// ChannelRequest is a question a [ChannelApprover] hands to the host's UI.
// The UI must send exactly one Response on Reply.
type ChannelRequest struct {
	Request
	Reply chan<- Response
}

// ChannelApprover hands questions to a host's own UI over a channel and
// blocks until the UI replies or ctx is done.
//
// A ChannelApprover is safe for concurrent use.
type ChannelApprover struct {
	requests chan ChannelRequest
}

// NewChannelApprover returns an approver and the channel its questions
// arrive on.
func NewChannelApprover() (*ChannelApprover, <-chan ChannelRequest) {
	ch := make(chan ChannelRequest)
	return &ChannelApprover{requests: ch}, ch
}

// Decide sends req to the UI and waits for the reply. Cancelling ctx
// returns an error wrapping ctx.Err().
func (c *ChannelApprover) Decide(ctx context.Context, req Request) (Response, error) {
	reply := make(chan Response, 1)
	select {
	case c.requests <- ChannelRequest{Request: req, Reply: reply}:
	case <-ctx.Done():
		return Response{}, fmt.Errorf("approval: waiting for the UI: %w", ctx.Err())
	}
	select {
	case r := <-reply:
		return r, nil
	case <-ctx.Done():
		return Response{}, fmt.Errorf("approval: waiting for an answer: %w", ctx.Err())
	}
}
