package approval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// unprintable returns the runes of s a terminal would not show as text:
// everything but printable runes and the newlines the approver writes.
func unprintable(s string) []string {
	var bad []string
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				bad = append(bad, s[i:i+1])
				continue
			}
		}
		if r != '\n' && !unicode.IsPrint(r) {
			bad = append(bad, string(r))
		}
	}
	return bad
}

// TestTerminalApproverEscapes: a model cannot paint over the line the human
// approves with terminal escapes, carriage returns, newlines or bidi
// controls in any field that comes from the call.
func TestTerminalApproverEscapes(t *testing.T) {
	const hide = "rm -rf ~ \x1b[2K\r\x1b[1Agit status\u202e\u2066\x07\u009b\x9b\xff"
	t.Run("every field", func(t *testing.T) {
		req := Request{Pending: Pending{Tool: "bash\x1b]0;x\x07", Input: json.RawMessage("{\"command\":\"" + hide + "\"}"),
			Cwd: "/p\r/q", Reason: "no rule for " + hide, Segments: []string{"ask: " + hide + " (no rule)"},
			Allowed: AllResponses, Scopes: []Scope{ScopeOnce, ScopeRule}, ProposedRule: "allow bash: " + hide}}
		var out strings.Builder
		if _, err := NewTerminalApprover(strings.NewReader("r\nn\nq\n"), &out, "alice").Decide(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		if bad := unprintable(out.String()); len(bad) > 0 {
			t.Errorf("output has unprintable runes %q:\n%s", bad, out.String())
		}
		for _, want := range []string{`\x1b[2K\r\x1b[1Agit status\u202e\u2066\a\u009b\x9b\xff`, `bash\x1b]0;x\a`, `/p\r/q`} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks the escaped %s:\n%s", want, out.String())
			}
		}
	})
	t.Run("through the hook", func(t *testing.T) {
		var out strings.Builder
		h, _, cwd := newHook(t, "", nil, NewTerminalApprover(strings.NewReader("r\nn\nn\nno\n"), &out, "alice"))
		in, _ := json.Marshal(map[string]string{"command": "git push \x1b[2K\rgit status\u202e && echo ok"})
		if !strings.Contains(string(in), `\u001b`) {
			t.Fatalf("the JSON input does not escape ESC: %s", in)
		}
		b, err := h.Process(context.Background(), []ToolCall{{ID: "t1", Name: "bash", Input: in}}, cwd)
		if err != nil || len(b.Outcomes) != 1 || b.Outcomes[0].Action != Result {
			t.Fatalf("%+v, %v", b, err)
		}
		if bad := unprintable(out.String()); len(bad) > 0 {
			t.Errorf("output has unprintable runes %q:\n%s", bad, out.String())
		}
		if !strings.Contains(out.String(), `\x1b[2K\rgit status\u202e`) {
			t.Errorf("the segment is not shown escaped:\n%s", out.String())
		}
	})
	t.Run("plain commands stay as they are", func(t *testing.T) {
		var out strings.Builder
		h, _, cwd := newHook(t, "", nil, NewTerminalApprover(strings.NewReader("n\nno\n"), &out, "alice"))
		c := bash("t1", `git commit -m "fix: 한글 \ path" && grep -E 'a|b' x`)
		if _, err := h.Process(context.Background(), []ToolCall{c}, cwd); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `git commit -m "fix: 한글 \ path"`) {
			t.Errorf("plain segment not shown verbatim:\n%s", out.String())
		}
	})
}
