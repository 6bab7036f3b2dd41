package agent

import (
	"context"
	"fmt"
	"net/http"

	"github.com/paddockdev/paddock/internal/anthropic"
)

// DefaultAnthropicModel is the model AnthropicModel asks when
// AnthropicOptions.Model is empty.
const DefaultAnthropicModel = "claude-sonnet-4-5"

// AnthropicOptions configure NewAnthropicModel. Nil means the defaults.
type AnthropicOptions struct {
	// Model is the model name; empty means DefaultAnthropicModel.
	Model string
	// APIKey is the API key; empty means $ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL replaces https://api.anthropic.com (tests, proxies).
	BaseURL string
	// HTTPClient replaces http.DefaultClient.
	HTTPClient *http.Client
}

// AnthropicModel is a Model that asks the Anthropic Messages API, with
// tool use. It does not retry: a rate-limit or overload error comes back
// as an error whose text says so, and the caller decides. It is safe for
// concurrent use.
type AnthropicModel struct {
	client *anthropic.Client
	model  string
}

// NewAnthropicModel returns a Model speaking the Anthropic Messages API. A
// missing API key is reported by the first Generate.
func NewAnthropicModel(opts *AnthropicOptions) *AnthropicModel {
	var o AnthropicOptions
	if opts != nil {
		o = *opts
	}
	if o.Model == "" {
		o.Model = DefaultAnthropicModel
	}
	return &AnthropicModel{
		client: anthropic.New(&anthropic.Options{APIKey: o.APIKey, BaseURL: o.BaseURL, HTTPClient: o.HTTPClient}),
		model:  o.Model,
	}
}

// Generate sends req to the API and maps the answer back. The request is
// checked with Request.Validate first, so a malformed conversation is an
// error here rather than an API error.
func (m *AnthropicModel) Generate(ctx context.Context, req *Request) (*Response, error) {
	if req == nil {
		return nil, fmt.Errorf("agent: nil request")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	areq := &anthropic.Request{Model: m.model, MaxTokens: maxTokens, System: req.System}
	for _, msg := range req.Messages {
		am := anthropic.Message{Role: string(msg.Role)}
		for _, b := range msg.Content {
			am.Content = append(am.Content, anthropic.Block{Type: string(b.Type), Text: b.Text, ID: b.ID, Name: b.Name, Input: b.Input, ToolUseID: b.ToolUseID, Content: b.Content, IsError: b.IsError})
		}
		areq.Messages = append(areq.Messages, am)
	}
	for _, t := range req.Tools {
		areq.Tools = append(areq.Tools, anthropic.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	aresp, err := m.client.Messages(ctx, areq)
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	resp := &Response{ID: aresp.ID, Model: aresp.Model, StopReason: StopReason(aresp.StopReason),
		Usage: Usage{InputTokens: aresp.Usage.InputTokens, OutputTokens: aresp.Usage.OutputTokens}}
	for _, b := range aresp.Content {
		switch BlockType(b.Type) {
		case TextBlock:
			resp.Content = append(resp.Content, Text(b.Text))
		case ToolUseBlock:
			resp.Content = append(resp.Content, Block{Type: ToolUseBlock, ID: b.ID, Name: b.Name, Input: b.Input})
		default:
			// Blocks the loop does not use (thinking, …) are left out:
			// sending them back would need their signatures.
		}
	}
	return resp, nil
}
