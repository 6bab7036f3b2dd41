// Package anthropic is a small client for the Anthropic Messages API
// (POST /v1/messages) over net/http, with the parts paddock needs: text,
// tool definitions, tool_use and tool_result content blocks, tool_choice,
// usage, and the API's typed error responses.
//
// It does not stream and does not retry: a 429 or 529 comes back as an
// [*Error] carrying the server's retry-after, and the caller decides.
//
// # Concurrency
//
// A [Client] is safe for concurrent use by multiple goroutines.
package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Version is the anthropic-version header the client sends.
const Version = "2023-06-01"

// DefaultBaseURL is the API's base URL.
const DefaultBaseURL = "https://api.anthropic.com"

// maxBody bounds how much of a response body is read.
const maxBody = 16 << 20

// ErrNoAPIKey is returned by [Client.Messages] when neither the options nor
// ANTHROPIC_API_KEY give an API key.
var ErrNoAPIKey = errors.New("anthropic: no API key: set ANTHROPIC_API_KEY or Options.APIKey")

// ErrMalformed is returned (wrapped) when a response cannot be decoded as
// the Messages API's response.
var ErrMalformed = errors.New("anthropic: malformed response")

// Options configure a [Client]. The zero value uses the defaults.
type Options struct {
	// APIKey is the key sent as x-api-key; empty means $ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL replaces DefaultBaseURL (tests point it at an httptest server).
	BaseURL string
	// HTTPClient replaces http.DefaultClient.
	HTTPClient *http.Client
}

// Client speaks the Messages API.
type Client struct {
	key     string
	baseURL string
	hc      *http.Client
}

// New returns a client. A missing API key is reported by the first call,
// not here, so a host can construct clients unconditionally.
func New(opts *Options) *Client {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.APIKey == "" {
		o.APIKey = os.Getenv("ANTHROPIC_API_KEY")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}
	return &Client{key: o.APIKey, baseURL: strings.TrimRight(o.BaseURL, "/"), hc: o.HTTPClient}
}

// Block is one content block. Type selects which other fields are set:
// "text" (Text), "tool_use" (ID, Name, Input) or "tool_result" (ToolUseID,
// Content, IsError).
type Block struct {
	Type string `json:"type"`
	// Text is the text of a "text" block.
	Text string `json:"text,omitempty"`
	// ID, Name and Input describe a "tool_use" block.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError describe a "tool_result" block.
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// TextBlock returns a "text" block.
func TextBlock(text string) Block { return Block{Type: "text", Text: text} }

// ToolResultBlock returns a "tool_result" block answering the tool_use
// block with the given id.
func ToolResultBlock(toolUseID, content string, isError bool) Block {
	return Block{Type: "tool_result", ToolUseID: toolUseID, Content: content, IsError: isError}
}

// Message is one turn of the conversation.
type Message struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content []Block `json:"content"`
}

// Tool is a tool the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ToolChoice says how the model must use tools: Type "auto", "any", "tool"
// (with Name) or "none".
type ToolChoice struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
}

// Request is the body of POST /v1/messages.
type Request struct {
	Model      string      `json:"model"`
	MaxTokens  int         `json:"max_tokens"`
	System     string      `json:"system,omitempty"`
	Messages   []Message   `json:"messages"`
	Tools      []Tool      `json:"tools,omitempty"`
	ToolChoice *ToolChoice `json:"tool_choice,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Response is a successful response.
type Response struct {
	ID         string  `json:"id"`
	Type       string  `json:"type"` // "message"
	Role       string  `json:"role"` // "assistant"
	Model      string  `json:"model"`
	Content    []Block `json:"content"`
	StopReason string  `json:"stop_reason"` // "end_turn", "tool_use", "max_tokens", …
	Usage      Usage   `json:"usage"`
}

// Text returns the concatenated text blocks of r.
func (r *Response) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ToolUses returns the tool_use blocks of r, in order.
func (r *Response) ToolUses() []Block {
	var out []Block
	for _, c := range r.Content {
		if c.Type == "tool_use" {
			out = append(out, c)
		}
	}
	return out
}

// Error is an error response of the API: an HTTP status with the body
// {"type":"error","error":{"type":…,"message":…}}.
type Error struct {
	StatusCode int
	// Type is error.type, e.g. "rate_limit_error" or "overloaded_error";
	// empty when the body was not the API's error shape.
	Type    string
	Message string
	// RequestID is the request-id header, if any.
	RequestID string
	// RetryAfter is the retry-after header of a 429 or 529, zero if absent.
	RetryAfter time.Duration
}

// Error implements error.
func (e *Error) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("anthropic: HTTP %d: %s", e.StatusCode, e.Message)
	}
	return fmt.Sprintf("anthropic: HTTP %d %s: %s", e.StatusCode, e.Type, e.Message)
}

// Temporary reports whether retrying later may succeed (429, 500, 529…).
func (e *Error) Temporary() bool {
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// Messages sends req and returns the model's response. Cancelling ctx
// aborts the request and returns an error wrapping ctx.Err().
func (c *Client) Messages(ctx context.Context, req *Request) (*Response, error) {
	if c.key == "" {
		return nil, ErrNoAPIKey
	}
	if req.Model == "" || req.MaxTokens <= 0 || len(req.Messages) == 0 {
		return nil, errors.New("anthropic: request needs a model, max_tokens > 0 and at least one message")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	hr.Header.Set("x-api-key", c.key)
	hr.Header.Set("anthropic-version", Version)
	hr.Header.Set("content-type", "application/json")
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("anthropic: read response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, decodeError(resp, data)
	}
	var out Response
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if out.Type != "message" || out.Content == nil {
		return nil, fmt.Errorf("%w: type %q, %d content blocks", ErrMalformed, out.Type, len(out.Content))
	}
	return &out, nil
}

func decodeError(resp *http.Response, data []byte) error {
	e := &Error{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("request-id")}
	var body struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && body.Type == "error" {
		e.Type, e.Message = body.Error.Type, body.Error.Message
	} else {
		msg := strings.TrimSpace(string(data))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		e.Message = msg
	}
	if ra := resp.Header.Get("retry-after"); ra != "" {
		if s, err := strconv.ParseFloat(ra, 64); err == nil && s >= 0 {
			e.RetryAfter = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(ra); err == nil {
			e.RetryAfter = max(time.Until(t), 0)
		}
	}
	return e
}
