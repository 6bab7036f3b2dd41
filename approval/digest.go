package approval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
)

// Digest is the identity of a call: the hex SHA-256 of the tool name, the
// canonical JSON of its input (keys sorted, insignificant space removed,
// numbers kept as written) and the resolved cwd (absolute, cleaned,
// symlinks evaluated where the directory exists). Two calls have the same
// digest exactly when they would do the same thing.
func Digest(tool string, input json.RawMessage, cwd string) (string, error) {
	canon, err := CanonicalJSON(input)
	if err != nil {
		return "", err
	}
	doc, err := json.Marshal(struct {
		Tool  string          `json:"tool"`
		Input json.RawMessage `json:"input"`
		Cwd   string          `json:"cwd"`
	}{tool, canon, ResolveCwd(cwd)})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(doc)
	return hex.EncodeToString(sum[:]), nil
}

// CanonicalJSON re-encodes a JSON document with sorted object keys and no
// insignificant space.
func CanonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("approval: call input is not JSON: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("approval: call input has data after the JSON value")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// ResolveCwd returns cwd made absolute and clean, with symlinks evaluated
// when it exists.
func ResolveCwd(cwd string) string {
	if cwd == "" {
		return ""
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return filepath.Clean(cwd)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}
