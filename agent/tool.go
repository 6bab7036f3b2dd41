package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Tool is something a model can call: a name, a description, the JSON schema
// of its input, and Run.
//
// Run receives input validated against InputSchema when it is called through
// a [Set] (tools made by [NewTool], and so every tool of this package,
// validate their input themselves, so Set does not validate it twice). It
// returns the result the model sees. A returned error is
// either a *ToolError, whose Message is for the model (a bad path, a refused
// command, an unconfigured service) and which [Set.Call] turns into an error
// result, or any other error, which is the host's problem (a broken sandbox,
// ctx done) and stops the caller. A command that runs and fails is a Result,
// not an error.
//
// Implementations must be safe for concurrent use.
type Tool interface {
	Name() string
	Description() string
	InputSchema() *Schema
	Run(ctx context.Context, input json.RawMessage) (Result, error)
}

// Result is what a tool returns to the model.
type Result struct {
	// Content is the text the model sees.
	Content string
	// IsError marks a call that failed (the model should change course).
	IsError bool
}

// ToolError is a failure the model can act on: its Message says what was
// wrong and what to do. Err, if set, is the internal cause, kept out of the
// model's view.
type ToolError struct {
	Tool    string
	Message string
	Err     error
}

// Error returns the tool, the message and the internal cause, for logs;
// show Message to the model.
func (e *ToolError) Error() string {
	if e.Err != nil {
		return e.Tool + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Tool + ": " + e.Message
}

// Unwrap returns the internal cause.
func (e *ToolError) Unwrap() error { return e.Err }

func toolErr(tool string, err error, format string, args ...any) *ToolError {
	return &ToolError{Tool: tool, Message: fmt.Sprintf(format, args...), Err: err}
}

// ErrUnknownTool is wrapped by the *ToolError of a call to a tool the set does
// not have.
var ErrUnknownTool = errors.New("agent: unknown tool")

// ToolDef is a tool as a model API describes it.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Set is a set of tools with distinct names, kept in the order given. It is
// immutable and safe for concurrent use.
type Set struct {
	tools  []Tool
	byName map[string]Tool
}

// NewSet returns a set of tools. It refuses a nil tool, a name that is not
// 1 to 64 letters, digits, '_' or '-', a name used twice, and an input schema
// that is not an object schema or that uses what [Schema] cannot check.
func NewSet(tools ...Tool) (*Set, error) {
	s := &Set{byName: make(map[string]Tool, len(tools))}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("agent: tool %d is nil", i)
		}
		name := t.Name()
		if !toolName.MatchString(name) {
			return nil, fmt.Errorf("agent: tool name %q must be 1-64 letters, digits, '_' or '-'", name)
		}
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("agent: two tools are named %q", name)
		}
		sc := t.InputSchema()
		if sc == nil || sc.Type != "object" {
			return nil, fmt.Errorf("agent: tool %q: input schema must be an object schema", name)
		}
		if err := sc.checkSchema(""); err != nil {
			return nil, fmt.Errorf("agent: tool %q: %w", name, err)
		}
		s.tools = append(s.tools, t)
		s.byName[name] = t
	}
	return s, nil
}

// Len returns the number of tools.
func (s *Set) Len() int { return len(s.tools) }

// Tool returns the tool with this name.
func (s *Set) Tool(name string) (Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Has reports whether the set has a tool with this name.
func (s *Set) Has(name string) bool { _, ok := s.byName[name]; return ok }

// Names returns the tools' names in order.
func (s *Set) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name()
	}
	return names
}

// Tools returns the tools in order.
func (s *Set) Tools() []Tool { return slices.Clone(s.tools) }

// Defs returns the tools' definitions for a model request.
func (s *Set) Defs() []ToolDef {
	defs := make([]ToolDef, len(s.tools))
	for i, t := range s.tools {
		sc, _ := json.Marshal(t.InputSchema())
		defs[i] = ToolDef{Name: t.Name(), Description: t.Description(), InputSchema: sc}
	}
	return defs
}

// Only returns the subset of the set named by names, in the set's order. A
// name the set does not have is an error: a profile that expects a tool the
// host does not offer is a configuration mistake, not something to ignore.
func (s *Set) Only(names ...string) (*Set, error) {
	want := map[string]bool{}
	var missing []string
	for _, n := range names {
		if !s.Has(n) {
			missing = append(missing, n)
		}
		want[n] = true
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("agent: the tool set has no %s (it has %s)", strings.Join(missing, ", "), strings.Join(s.Names(), ", "))
	}
	sub := &Set{byName: map[string]Tool{}}
	for _, t := range s.tools {
		if want[t.Name()] {
			sub.tools = append(sub.tools, t)
			sub.byName[t.Name()] = t
		}
	}
	return sub, nil
}

// For returns the tools a profile may use: the whole set when p.Tools is
// nil, otherwise [Set.Only] of p.Tools.
func (s *Set) For(p Profile) (*Set, error) {
	if p.Tools == nil {
		return s, nil
	}
	sub, err := s.Only(p.Tools...)
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", p.ID, err)
	}
	return sub, nil
}

// Call validates input against the named tool's schema and runs it. Problems
// the model can fix — an unknown tool, input that does not match the schema,
// a *ToolError from the tool — come back as a Result with IsError set and a
// nil error. Any other error from the tool is returned as is.
func (s *Set) Call(ctx context.Context, name string, input json.RawMessage) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	t, ok := s.byName[name]
	if !ok {
		return Result{IsError: true, Content: fmt.Sprintf("there is no tool named %q; the tools are %s", name, strings.Join(s.Names(), ", "))}, nil
	}
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	if _, ok := t.(interface{ validatesInput() }); !ok {
		if err := validate(name, t.InputSchema(), input); err != nil {
			return Result{IsError: true, Content: err.(*ToolError).Message}, nil
		}
	}
	res, err := t.Run(ctx, input)
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			return Result{IsError: true, Content: te.Message}, nil
		}
		return Result{}, fmt.Errorf("agent: tool %s: %w", name, err)
	}
	return res, nil
}

// validate checks input against schema; a mismatch is a *ToolError whose
// Err is the *ValidationError.
func validate(tool string, schema *Schema, input json.RawMessage) error {
	err := schema.Validate(input)
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		ve.Tool = tool
	}
	return &ToolError{Tool: tool, Message: err.Error(), Err: err}
}

// decodeInput decodes a tool's validated input into v.
func decodeInput(tool string, input json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return toolErr(tool, err, "invalid input: %v", err)
	}
	return nil
}
