package workspace

import (
	"encoding/json"

	"github.com/paddockdev/paddock/internal/mask"
)

// Redacted is what a [Secret] prints and what a [Masker] puts in place of a
// secret.
const Redacted = "[REDACTED]"

// Masker replaces known secret values in text written to logs: the raw
// value, its base64 forms (also inside a longer base64 blob), its
// URL-encoded forms, and its JSON-escaped form. Values shorter than 6 bytes
// are not masked: masking them would garble logs more than it protects.
//
// The zero Masker masks nothing. A Masker is safe for concurrent use.
type Masker struct{ m mask.Masker }

// Add registers a secret value.
func (m *Masker) Add(value string) {
	m.m.Add(value)
	if b, err := json.Marshal(value); err == nil {
		if esc := string(b[1 : len(b)-1]); esc != value {
			m.m.Add(esc)
		}
	}
}

// Mask returns s with every registered secret replaced by "[REDACTED]".
func (m *Masker) Mask(s string) string { return m.m.Mask(s) }

// maskJSON masks a JSON document. If masking would break the document (a
// secret that straddles an escape sequence), the whole document is replaced.
func (m *Masker) maskJSON(b []byte) []byte {
	out := m.m.MaskBytes(b)
	if !json.Valid(out) {
		return []byte(`{"redacted":"` + Redacted + ` (the record could not be masked in place)"}`)
	}
	return out
}
