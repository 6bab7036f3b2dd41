package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Model is a language model that answers a request with one response. An
// adapter for a model API (Anthropic Messages, …) implements it; the types
// here map onto the Anthropic Messages API field by field.
//
// Generate returns an error for a request it could not complete (a network
// failure, an API error, ctx done); a response that stops early is a
// Response with its StopReason. Implementations must be safe for concurrent
// use.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// MessageRole is who wrote a message.
type MessageRole string

// The message roles.
const (
	User      MessageRole = "user"
	Assistant MessageRole = "assistant"
)

// BlockType is the kind of a content block.
type BlockType string

// The block types.
const (
	TextBlock       BlockType = "text"
	ToolUseBlock    BlockType = "tool_use"
	ToolResultBlock BlockType = "tool_result"
)

// Block is one piece of a message's content: text, a tool call (tool_use,
// from the assistant) or a tool's result (tool_result, from the user). Only
// the fields of its Type are set.
type Block struct {
	Type BlockType `json:"type"`
	// Text is a text block's text.
	Text string `json:"text,omitempty"`
	// ID, Name and Input are a tool_use block's call id, tool name and
	// input object.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID, Content and IsError are a tool_result block's call id,
	// result text, and whether the call failed.
	ToolUseID string `json:"tool_use_id,omitempty"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: TextBlock, Text: s} }

// ToolUse returns a tool_use block calling name with input, which is
// marshalled to JSON (a json.RawMessage or []byte is used as is; nil is {})
// and must be a JSON object.
func ToolUse(id, name string, input any) (Block, error) {
	var raw json.RawMessage
	switch v := input.(type) {
	case nil:
		raw = json.RawMessage("{}")
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return Block{}, fmt.Errorf("agent: tool_use %s input: %w", name, err)
		}
		raw = b
	}
	if !isObject(raw) {
		return Block{}, fmt.Errorf("agent: tool_use %s input is not a JSON object", name)
	}
	return Block{Type: ToolUseBlock, ID: id, Name: name, Input: raw}, nil
}

// ToolResult returns the tool_result block answering the call id with r.
func ToolResult(id string, r Result) Block {
	return Block{Type: ToolResultBlock, ToolUseID: id, Content: r.Content, IsError: r.IsError}
}

// Message is one turn of the conversation.
type Message struct {
	Role    MessageRole `json:"role"`
	Content []Block     `json:"content"`
}

// UserText returns a user message of one text block.
func UserText(s string) Message { return Message{Role: User, Content: []Block{Text(s)}} }

// ToolUses returns the message's tool_use blocks.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == ToolUseBlock {
			out = append(out, b)
		}
	}
	return out
}

// TextContent returns the message's text blocks joined by newlines.
func (m Message) TextContent() string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == TextBlock {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Request is what the model is asked: a system prompt, the conversation so
// far (starting with a user message, alternating), and the tools it may call.
type Request struct {
	System    string    `json:"system,omitempty"`
	Messages  []Message `json:"messages"`
	Tools     []ToolDef `json:"tools,omitempty"`
	MaxTokens int       `json:"max_tokens,omitempty"`
}

// StopReason is why the model stopped.
type StopReason string

// The stop reasons.
const (
	// EndTurn: the model finished its answer.
	EndTurn StopReason = "end_turn"
	// ToolUseStop: the model wants its tool calls run.
	ToolUseStop StopReason = "tool_use"
	// MaxTokens: the answer hit the token limit.
	MaxTokens StopReason = "max_tokens"
	// StopSequence: the answer hit a stop sequence.
	StopSequence StopReason = "stop_sequence"
	// Refusal: the model declined to answer.
	Refusal StopReason = "refusal"
)

// Usage counts the tokens of a request and its response.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Response is the model's answer: an assistant message's content, why it
// stopped, and the tokens used.
type Response struct {
	ID         string     `json:"id,omitempty"`
	Model      string     `json:"model,omitempty"`
	Content    []Block    `json:"content"`
	StopReason StopReason `json:"stop_reason"`
	Usage      Usage      `json:"usage"`
}

// Message returns the response as the assistant message to append to the
// conversation.
func (r *Response) Message() Message { return Message{Role: Assistant, Content: r.Content} }

// Validate checks that the conversation is well formed the way model APIs
// require: it starts with a user message, roles alternate, tool_use blocks
// only in assistant messages and tool_result blocks only in user messages,
// every tool_use of an assistant message is answered by a tool_result in the
// next message, and every tool_result answers one.
func (r *Request) Validate() error {
	if len(r.Messages) == 0 {
		return fmt.Errorf("agent: request has no messages")
	}
	for i, m := range r.Messages {
		want := User
		if i%2 == 1 {
			want = Assistant
		}
		if m.Role != want {
			return fmt.Errorf("agent: message %d has role %q, want %q (messages start with user and alternate)", i, m.Role, want)
		}
		for j, b := range m.Content {
			switch b.Type {
			case TextBlock:
			case ToolUseBlock:
				if m.Role != Assistant {
					return fmt.Errorf("agent: message %d block %d: tool_use in a %s message", i, j, m.Role)
				}
				if b.ID == "" || b.Name == "" || !isObject(b.Input) {
					return fmt.Errorf("agent: message %d block %d: tool_use needs an id, a name and a JSON object as input", i, j)
				}
			case ToolResultBlock:
				if m.Role != User {
					return fmt.Errorf("agent: message %d block %d: tool_result in a %s message", i, j, m.Role)
				}
				if i == 0 || !hasToolUse(r.Messages[i-1], b.ToolUseID) {
					return fmt.Errorf("agent: message %d block %d: tool_result for %q answers no tool_use of the previous message", i, j, b.ToolUseID)
				}
			default:
				return fmt.Errorf("agent: message %d block %d: unknown block type %q", i, j, b.Type)
			}
		}
		if m.Role == Assistant && i+1 < len(r.Messages) {
			for _, u := range m.ToolUses() {
				if !hasToolResult(r.Messages[i+1], u.ID) {
					return fmt.Errorf("agent: message %d: tool_use %q (%s) has no tool_result in the next message", i, u.ID, u.Name)
				}
			}
		}
	}
	return nil
}

func hasToolUse(m Message, id string) bool {
	for _, b := range m.Content {
		if b.Type == ToolUseBlock && b.ID == id {
			return true
		}
	}
	return false
}

func hasToolResult(m Message, id string) bool {
	for _, b := range m.Content {
		if b.Type == ToolResultBlock && b.ToolUseID == id {
			return true
		}
	}
	return false
}

// isObject reports whether raw is one valid JSON object.
func isObject(raw json.RawMessage) bool {
	if !json.Valid(raw) {
		return false
	}
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '{'
}
