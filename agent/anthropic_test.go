package agent_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/sandbox"
)

// fakeAnthropic is an httptest server speaking the Messages API: it checks
// each request's headers and shape and answers with the next canned body.
type fakeAnthropic struct {
	t       *testing.T
	mu      sync.Mutex
	answers []fakeAnswer
	bodies  []map[string]any
}

type fakeAnswer struct {
	status int
	header map[string]string
	body   string
}

func (f *fakeAnthropic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		f.t.Errorf("request %s %s", r.Method, r.URL.Path)
	}
	if r.Header.Get("x-api-key") != "test-key" || r.Header.Get("anthropic-version") != "2023-06-01" || !strings.HasPrefix(r.Header.Get("content-type"), "application/json") {
		f.t.Errorf("headers %v", r.Header)
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		f.t.Errorf("body is not JSON: %v: %s", err, raw)
	}
	f.bodies = append(f.bodies, body)
	if len(f.answers) == 0 {
		f.t.Error("more requests than answers")
		http.Error(w, "no more answers", 500)
		return
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(a.status)
	io.WriteString(w, a.body)
}

func TestAnthropicModelDrivesTheLoop(t *testing.T) {
	sb, dir := newDir(t, sandbox.Spec{})
	env := openLoopEnv(t, newPaths(t), dir)
	fake := &fakeAnthropic{t: t, answers: []fakeAnswer{
		{200, nil, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[
			{"type":"text","text":"I'll write it."},
			{"type":"tool_use","id":"toolu_01","name":"write_file","input":{"path":"note.txt","content":"from the API\n"}}],
			"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":120,"output_tokens":40}}`},
		{200, nil, `{"id":"msg_02","type":"message","role":"assistant","model":"claude-test","content":[
			{"type":"thinking","thinking":"…","signature":"x"},
			{"type":"text","text":"Written."}],
			"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":180,"output_tokens":5}}`},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	model := agent.NewAnthropicModel(&agent.AnthropicOptions{Model: "claude-test", APIKey: "test-key", BaseURL: srv.URL})
	l, err := env.loop(model, sb)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Run(context.Background(), "write a note")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusDone || res.Text != "Written." || res.Usage.InputTokens != 300 || res.Usage.OutputTokens != 45 {
		t.Errorf("result %+v", res)
	}
	if got := readFile(t, filepath.Join(dir, "note.txt")); got != "from the API\n" {
		t.Errorf("note.txt = %q", got)
	}
	if len(fake.bodies) != 2 {
		t.Fatalf("%d requests", len(fake.bodies))
	}
	first, second := fake.bodies[0], fake.bodies[1]
	if first["model"] != "claude-test" || first["system"] != "You are a test agent." || first["max_tokens"] != float64(agent.DefaultMaxTokens) {
		t.Errorf("first request %v", first)
	}
	tools, _ := first["tools"].([]any)
	var names []string
	for _, tl := range tools {
		m := tl.(map[string]any)
		if _, ok := m["input_schema"].(map[string]any); !ok {
			t.Errorf("tool %v has no input_schema object", m["name"])
		}
		names = append(names, m["name"].(string))
	}
	if !strings.Contains(strings.Join(names, ","), "write_file") {
		t.Errorf("tools offered: %v", names)
	}
	// The second request carries the assistant's tool_use and our
	// tool_result, in the API's shape.
	msgs := second["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("second request has %d messages", len(msgs))
	}
	last := msgs[2].(map[string]any)
	block := last["content"].([]any)[0].(map[string]any)
	if last["role"] != "user" || block["type"] != "tool_result" || block["tool_use_id"] != "toolu_01" {
		t.Errorf("tool result message %v", last)
	}
	use := msgs[1].(map[string]any)["content"].([]any)[1].(map[string]any)
	if use["type"] != "tool_use" || use["input"].(map[string]any)["path"] != "note.txt" {
		t.Errorf("tool use block %v", use)
	}
}

func TestAnthropicModelErrors(t *testing.T) {
	req := &agent.Request{Messages: []agent.Message{agent.UserText("hi")}}
	for _, tt := range []struct {
		name   string
		answer fakeAnswer
		want   string
	}{
		{"rate limited", fakeAnswer{429, map[string]string{"retry-after": "7"}, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`}, "rate_limit_error"},
		{"overloaded", fakeAnswer{529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, "overloaded_error"},
		{"malformed", fakeAnswer{200, nil, `{"id":"msg","content":[{"type":"text"`}, "malformed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeAnthropic{t: t, answers: []fakeAnswer{tt.answer}}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			m := agent.NewAnthropicModel(&agent.AnthropicOptions{APIKey: "test-key", BaseURL: srv.URL})
			_, err := m.Generate(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Generate = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
	t.Run("no key", func(t *testing.T) {
		t.Setenv("ANTHROPIC_API_KEY", "")
		m := agent.NewAnthropicModel(&agent.AnthropicOptions{BaseURL: "http://127.0.0.1:1"})
		if _, err := m.Generate(context.Background(), req); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
			t.Errorf("Generate without a key = %v", err)
		}
	})
	t.Run("invalid conversation", func(t *testing.T) {
		m := agent.NewAnthropicModel(&agent.AnthropicOptions{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
		bad := &agent.Request{Messages: []agent.Message{{Role: agent.Assistant, Content: []agent.Block{agent.Text("x")}}}}
		if _, err := m.Generate(context.Background(), bad); err == nil {
			t.Error("a conversation starting with the assistant was sent")
		}
	})
}
