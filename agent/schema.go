package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema is the subset of JSON Schema that tool inputs use: type, properties,
// required, additionalProperties (false only), enum, items, minimum, maximum,
// minLength, maxLength, minItems and maxItems. It marshals to the JSON Schema
// a model API expects.
type Schema struct {
	// Type is "object", "array", "string", "integer", "number" or
	// "boolean"; empty accepts any type.
	Type        string             `json:"type,omitempty"`
	Description string             `json:"description,omitempty"`
	Properties  map[string]*Schema `json:"properties,omitempty"`
	Required    []string           `json:"required,omitempty"`
	// AdditionalProperties, when false, refuses properties not listed.
	AdditionalProperties *bool    `json:"additionalProperties,omitempty"`
	Enum                 []any    `json:"enum,omitempty"`
	Items                *Schema  `json:"items,omitempty"`
	Minimum              *float64 `json:"minimum,omitempty"`
	Maximum              *float64 `json:"maximum,omitempty"`
	MinLength            *int     `json:"minLength,omitempty"`
	MaxLength            *int     `json:"maxLength,omitempty"`
	MinItems             *int     `json:"minItems,omitempty"`
	MaxItems             *int     `json:"maxItems,omitempty"`
}

// ErrInvalidInput is wrapped by the *ValidationError of a tool input that does
// not match its schema.
var ErrInvalidInput = errors.New("agent: invalid tool input")

// A FieldError is one way an input does not match its schema.
type FieldError struct {
	// Field is where, as a path from the input: "command", "files[2].path";
	// "" for the input itself.
	Field string
	// Problem says what is wrong and what is expected.
	Problem string
}

// ValidationError lists every way an input does not match its schema. Its
// text names each field and is meant for the model to act on.
type ValidationError struct {
	Tool   string
	Fields []FieldError
}

// Error lists the problems, each as "field: problem".
func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.Tool != "" {
		fmt.Fprintf(&b, "invalid input for %s: ", e.Tool)
	} else {
		b.WriteString("invalid input: ")
	}
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		if f.Field == "" {
			b.WriteString(f.Problem)
		} else {
			fmt.Fprintf(&b, "%s: %s", f.Field, f.Problem)
		}
	}
	return b.String()
}

// Unwrap returns ErrInvalidInput.
func (e *ValidationError) Unwrap() error { return ErrInvalidInput }

// Validate checks a JSON document against the schema. It returns nil or a
// *ValidationError listing every problem found (sorted by field).
func (s *Schema) Validate(input json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &ValidationError{Fields: []FieldError{{Problem: "not valid JSON: " + err.Error()}}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &ValidationError{Fields: []FieldError{{Problem: "not valid JSON: data after the value"}}}
	}
	var errs []FieldError
	s.check("", v, &errs)
	if len(errs) == 0 {
		return nil
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return &ValidationError{Fields: errs}
}

func typeName(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if isInteger(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func isInteger(n json.Number) bool {
	if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return true
	}
	f, err := n.Float64()
	return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func (s *Schema) check(path string, v any, errs *[]FieldError) {
	add := func(format string, args ...any) {
		*errs = append(*errs, FieldError{Field: path, Problem: fmt.Sprintf(format, args...)})
	}
	got := typeName(v)
	switch s.Type {
	case "":
	case "number":
		if got != "number" && got != "integer" {
			add("must be a number, not %s", article(got))
			return
		}
	default:
		if got != s.Type {
			add("must be %s, not %s", article(s.Type), article(got))
			return
		}
	}
	if len(s.Enum) > 0 {
		ok := false
		for _, e := range s.Enum {
			if enumEqual(e, v) {
				ok = true
				break
			}
		}
		if !ok {
			add("must be one of %s", enumList(s.Enum))
		}
	}
	switch v := v.(type) {
	case string:
		n := utf8.RuneCountInString(v)
		if s.MinLength != nil && n < *s.MinLength {
			if *s.MinLength == 1 {
				add("must not be empty")
			} else {
				add("must be at least %d characters long", *s.MinLength)
			}
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			add("must be at most %d characters long (it has %d)", *s.MaxLength, n)
		}
	case json.Number:
		f, _ := v.Float64()
		if s.Minimum != nil && f < *s.Minimum {
			add("must be at least %v (got %s)", *s.Minimum, v)
		}
		if s.Maximum != nil && f > *s.Maximum {
			add("must be at most %v (got %s)", *s.Maximum, v)
		}
	case []any:
		if s.MinItems != nil && len(v) < *s.MinItems {
			add("must have at least %d items (it has %d)", *s.MinItems, len(v))
		}
		if s.MaxItems != nil && len(v) > *s.MaxItems {
			add("must have at most %d items (it has %d)", *s.MaxItems, len(v))
		}
		if s.Items != nil {
			for i, item := range v {
				s.Items.check(fmt.Sprintf("%s[%d]", path, i), item, errs)
			}
		}
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := v[r]; !ok {
				*errs = append(*errs, FieldError{Field: join(path, r), Problem: "is required"})
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := s.Properties[k]; ok {
				ps.check(join(path, k), v[k], errs)
			} else if s.AdditionalProperties != nil && !*s.AdditionalProperties {
				*errs = append(*errs, FieldError{Field: join(path, k), Problem: "is not a known field; the fields are " + fieldList(s.Properties)})
			}
		}
	}
}

func article(t string) string {
	switch t {
	case "array", "object", "integer":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

func enumEqual(e, v any) bool {
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		switch e := e.(type) {
		case int:
			return float64(e) == f
		case float64:
			return e == f
		}
		return false
	}
	return e == v
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		b, _ := json.Marshal(e)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

func fieldList(props map[string]*Schema) string {
	if len(props) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// Object returns an object schema with these properties and required fields,
// refusing any other field.
func Object(props map[string]*Schema, required ...string) *Schema {
	f := false
	return &Schema{Type: "object", Properties: props, Required: required, AdditionalProperties: &f}
}

// String returns a string schema with a description; nonEmpty sets minLength 1.
func String(desc string, nonEmpty bool) *Schema {
	s := &Schema{Type: "string", Description: desc}
	if nonEmpty {
		one := 1
		s.MinLength = &one
	}
	return s
}

// Integer returns an integer schema between min and max inclusive.
func Integer(desc string, min, max float64) *Schema {
	return &Schema{Type: "integer", Description: desc, Minimum: &min, Maximum: &max}
}

// Boolean returns a boolean schema.
func Boolean(desc string) *Schema { return &Schema{Type: "boolean", Description: desc} }

// Array returns an array schema of items.
func Array(desc string, items *Schema) *Schema {
	return &Schema{Type: "array", Description: desc, Items: items}
}

// checkSchema reports a schema that cannot be used: an unknown type, a
// required field that is not a property, an enum of the wrong type.
func (s *Schema) checkSchema(path string) error {
	switch s.Type {
	case "", "object", "array", "string", "integer", "number", "boolean", "null":
	default:
		return fmt.Errorf("schema %s: unknown type %q", cmpOr(path, "(root)"), s.Type)
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			return fmt.Errorf("schema %s: required field %q is not a property", cmpOr(path, "(root)"), r)
		}
	}
	for k, p := range s.Properties {
		if p == nil {
			return fmt.Errorf("schema %s: property %q is nil", cmpOr(path, "(root)"), k)
		}
		if err := p.checkSchema(join(path, k)); err != nil {
			return err
		}
	}
	if s.Items != nil {
		return s.Items.checkSchema(path + "[]")
	}
	return nil
}
