package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// toolUseResponse is a response as the API sends it for a tool-using turn.
const toolUseResponse = `{
  "id": "msg_01Aq9w938a90dw8q",
  "type": "message",
  "role": "assistant",
  "model": "claude-haiku-4-5",
  "content": [
    {"type": "text", "text": "I'll list the files."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "bash", "input": {"command": "ls -la"}}
  ],
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 2095, "output_tokens": 503}
}`

func TestMessagesWire(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
			t.Errorf("request %s %s, want POST /v1/messages", r.Method, r.URL.Path)
		}
		for h, want := range map[string]string{"x-api-key": "sk-test", "anthropic-version": "2023-06-01", "content-type": "application/json"} {
			if g := r.Header.Get(h); g != want {
				t.Errorf("header %s = %q, want %q", h, g, want)
			}
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &got); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		w.Header().Set("content-type", "application/json")
		io.WriteString(w, toolUseResponse)
	}))
	defer srv.Close()

	c := New(&Options{APIKey: "sk-test", BaseURL: srv.URL})
	resp, err := c.Messages(context.Background(), &Request{
		Model:     "claude-haiku-4-5",
		MaxTokens: 100,
		System:    "be brief",
		Messages: []Message{
			{Role: "user", Content: []Block{TextBlock("list files")}},
			{Role: "assistant", Content: []Block{{Type: "tool_use", ID: "toolu_1", Name: "bash", Input: json.RawMessage(`{"command":"pwd"}`)}}},
			{Role: "user", Content: []Block{ToolResultBlock("toolu_1", "/work", false)}},
		},
		Tools:      []Tool{{Name: "bash", Description: "run a command", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)}},
		ToolChoice: &ToolChoice{Type: "auto"},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantReq := map[string]any{
		"model": "claude-haiku-4-5", "max_tokens": float64(100), "system": "be brief",
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "list files"}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "bash", "input": map[string]any{"command": "pwd"}}}},
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": "/work"}}},
		},
		"tools": []any{map[string]any{"name": "bash", "description": "run a command", "input_schema": map[string]any{
			"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}, "required": []any{"command"}}}},
		"tool_choice": map[string]any{"type": "auto"},
	}
	if d := cmp.Diff(wantReq, got); d != "" {
		t.Errorf("request body (-want +got):\n%s", d)
	}
	if resp.StopReason != "tool_use" || resp.Usage != (Usage{2095, 503}) || resp.Text() != "I'll list the files." {
		t.Errorf("response = %+v", resp)
	}
	uses := resp.ToolUses()
	if len(uses) != 1 || uses[0].ID != "toolu_01A09q90qw90lq917835lq9" || uses[0].Name != "bash" || string(uses[0].Input) != `{"command": "ls -la"}` {
		t.Errorf("tool uses = %+v", uses)
	}
}

func TestMessagesErrors(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header map[string]string
		body   string
		check  func(t *testing.T, err error)
	}{
		{"rate limit", 429, map[string]string{"retry-after": "7", "request-id": "req_1"},
			`{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}`,
			func(t *testing.T, err error) {
				var e *Error
				if !errors.As(err, &e) || e.Type != "rate_limit_error" || e.RetryAfter != 7*time.Second || e.RequestID != "req_1" || !e.Temporary() {
					t.Errorf("err = %#v", err)
				}
			}},
		{"overloaded", 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			func(t *testing.T, err error) {
				var e *Error
				if !errors.As(err, &e) || e.Type != "overloaded_error" || e.StatusCode != 529 || !e.Temporary() {
					t.Errorf("err = %#v", err)
				}
			}},
		{"auth", 401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`,
			func(t *testing.T, err error) {
				var e *Error
				if !errors.As(err, &e) || e.Type != "authentication_error" || e.Temporary() {
					t.Errorf("err = %#v", err)
				}
			}},
		{"html gateway error", 502, nil, `<html>bad gateway</html>`,
			func(t *testing.T, err error) {
				var e *Error
				if !errors.As(err, &e) || e.Type != "" || e.Message != "<html>bad gateway</html>" {
					t.Errorf("err = %#v", err)
				}
			}},
		{"malformed 200", 200, nil, `{"id":"msg_1","type":"message","content":[{"type":"text"`,
			func(t *testing.T, err error) {
				if !errors.Is(err, ErrMalformed) {
					t.Errorf("err = %v, want ErrMalformed", err)
				}
			}},
		{"wrong type 200", 200, nil, `{"type":"error","error":{"type":"x","message":"y"}}`,
			func(t *testing.T, err error) {
				if !errors.Is(err, ErrMalformed) {
					t.Errorf("err = %v, want ErrMalformed", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			_, err := New(&Options{APIKey: "k", BaseURL: srv.URL}).Messages(context.Background(),
				&Request{Model: "m", MaxTokens: 1, Messages: []Message{{Role: "user", Content: []Block{TextBlock("hi")}}}})
			if err == nil {
				t.Fatal("no error")
			}
			tt.check(t, err)
		})
	}
}

func TestMessagesNoKeyAndCancel(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	req := &Request{Model: "m", MaxTokens: 1, Messages: []Message{{Role: "user", Content: []Block{TextBlock("hi")}}}}
	if _, err := New(nil).Messages(context.Background(), req); !errors.Is(err, ErrNoAPIKey) {
		t.Errorf("no key: err = %v, want ErrNoAPIKey", err)
	}
	if _, err := New(&Options{APIKey: "k"}).Messages(context.Background(), &Request{Model: "m"}); err == nil {
		t.Error("empty request accepted")
	}
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := New(&Options{APIKey: "k", BaseURL: srv.URL}).Messages(ctx, req); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: err = %v, want context.DeadlineExceeded", err)
	}
}
