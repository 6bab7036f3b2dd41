package agent_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/agent"
)

func testSchema() *agent.Schema {
	one := 1
	return agent.Object(map[string]*agent.Schema{
		"command": agent.String("the command", true),
		"timeout": agent.Integer("seconds", 1, 600),
		"ratio":   {Type: "number", Minimum: ptr(0.0), Maximum: ptr(1.0)},
		"verbose": agent.Boolean("talk"),
		"mode":    {Type: "string", Enum: []any{"fast", "slow"}},
		"level":   {Type: "integer", Enum: []any{1, 2, 3}},
		"name":    {Type: "string", MaxLength: ptr(5)},
		"files": {Type: "array", MinItems: &one, MaxItems: ptr(3), Items: agent.Object(map[string]*agent.Schema{
			"path":    agent.String("p", true),
			"content": agent.String("c", false),
		}, "path", "content")},
		"any": {},
	}, "command")
}

func ptr[T any](v T) *T { return &v }

func TestSchemaValidate(t *testing.T) {
	s := testSchema()
	for _, tc := range []struct {
		input string
		want  []agent.FieldError // nil: valid
	}{
		{`{"command":"ls"}`, nil},
		{`{"command":"ls","timeout":600,"ratio":0.5,"verbose":true,"mode":"slow","level":2,"name":"abcde","files":[{"path":"a","content":""}],"any":[1,{"x":null}]}`, nil},
		{`{"command":"ls","timeout":3.0}`, nil}, // 3.0 is an integer in JSON Schema
		{`{"command":"ls","ratio":1}`, nil},     // an integer is a number
		{`{}`, []agent.FieldError{{Field: "command", Problem: "is required"}}},
		{`{"command":""}`, []agent.FieldError{{Field: "command", Problem: "must not be empty"}}},
		{`{"command":5}`, []agent.FieldError{{Field: "command", Problem: "must be a string, not an integer"}}},
		{`{"command":"ls","timeout":"10"}`, []agent.FieldError{{Field: "timeout", Problem: "must be an integer, not a string"}}},
		{`{"command":"ls","timeout":1.5}`, []agent.FieldError{{Field: "timeout", Problem: "must be an integer, not a number"}}},
		{`{"command":"ls","timeout":0}`, []agent.FieldError{{Field: "timeout", Problem: "must be at least 1 (got 0)"}}},
		{`{"command":"ls","timeout":601}`, []agent.FieldError{{Field: "timeout", Problem: "must be at most 600 (got 601)"}}},
		{`{"command":"ls","ratio":"x"}`, []agent.FieldError{{Field: "ratio", Problem: "must be a number, not a string"}}},
		{`{"command":"ls","verbose":"yes"}`, []agent.FieldError{{Field: "verbose", Problem: "must be a boolean, not a string"}}},
		{`{"command":"ls","mode":"medium"}`, []agent.FieldError{{Field: "mode", Problem: `must be one of "fast", "slow"`}}},
		{`{"command":"ls","level":4}`, []agent.FieldError{{Field: "level", Problem: "must be one of 1, 2, 3"}}},
		{`{"command":"ls","name":"abcdef"}`, []agent.FieldError{{Field: "name", Problem: "must be at most 5 characters long (it has 6)"}}},
		{`{"command":"ls","files":[]}`, []agent.FieldError{{Field: "files", Problem: "must have at least 1 items (it has 0)"}}},
		{`{"command":"ls","files":[{"path":"a"},{"path":"","content":"x","mode":1}]}`, []agent.FieldError{
			{Field: "files[0].content", Problem: "is required"},
			{Field: "files[1].mode", Problem: "is not a known field; the fields are content, path"},
			{Field: "files[1].path", Problem: "must not be empty"},
		}},
		{`{"command":"ls","cmd":"x"}`, []agent.FieldError{{Field: "cmd", Problem: "is not a known field; the fields are any, command, files, level, mode, name, ratio, timeout, verbose"}}},
		{`[]`, []agent.FieldError{{Problem: "must be an object, not an array"}}},
		{`null`, []agent.FieldError{{Problem: "must be an object, not null"}}},
		{`{"command":"ls"`, []agent.FieldError{{Problem: "not valid JSON: unexpected EOF"}}},
		{`{"command":"ls"} {}`, []agent.FieldError{{Problem: "not valid JSON: data after the value"}}},
	} {
		err := s.Validate(json.RawMessage(tc.input))
		if tc.want == nil {
			if err != nil {
				t.Errorf("Validate(%s) = %v, want nil", tc.input, err)
			}
			continue
		}
		var ve *agent.ValidationError
		if !errors.As(err, &ve) || !errors.Is(err, agent.ErrInvalidInput) {
			t.Errorf("Validate(%s) = %v, want a *ValidationError", tc.input, err)
			continue
		}
		if diff := cmp.Diff(tc.want, ve.Fields); diff != "" {
			t.Errorf("Validate(%s) (-want +got):\n%s", tc.input, diff)
		}
		for _, f := range tc.want {
			if f.Field != "" && !strings.Contains(err.Error(), f.Field+": ") {
				t.Errorf("error %q does not name %s", err, f.Field)
			}
		}
	}
}

func TestSchemaMarshalsAsJSONSchema(t *testing.T) {
	s := agent.Object(map[string]*agent.Schema{"path": agent.String("a path", true), "n": agent.Integer("n", 1, 5)}, "path")
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"path": map[string]any{"type": "string", "description": "a path", "minLength": 1.0},
			"n":    map[string]any{"type": "integer", "description": "n", "minimum": 1.0, "maximum": 5.0},
		},
		"required":             []any{"path"},
		"additionalProperties": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func FuzzSchemaValidate(f *testing.F) {
	for _, seed := range []string{`{"command":"ls"}`, `{"command":"ls","files":[{"path":"a","content":"b"}]}`, `{"timeout":1e400}`, `[1,2]`, `"x"`, `{"level":2.0}`, `{`} {
		f.Add(seed)
	}
	s := testSchema()
	f.Fuzz(func(t *testing.T, input string) {
		err := s.Validate(json.RawMessage(input))
		if err == nil {
			// Whatever validates decodes as an object with a command.
			var v struct {
				Command string `json:"command"`
			}
			if jerr := json.Unmarshal([]byte(input), &v); jerr != nil || v.Command == "" {
				t.Fatalf("Validate(%q) = nil, but decoding gives %+v, %v", input, v, jerr)
			}
			return
		}
		var ve *agent.ValidationError
		if !errors.As(err, &ve) || len(ve.Fields) == 0 {
			t.Fatalf("Validate(%q) = %v, want a *ValidationError with fields", input, err)
		}
	})
}
