package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/paddockdev/paddock/internal/jsonl"
)

// Turn.Append and the fold encode a record per message on every step, so
// records of messages are encoded here by hand instead of through
// encoding/json's reflection. The bytes are exactly what json.Marshal
// writes for the same record (the tests check that), so readers decode them
// with encoding/json and the format does not depend on which path wrote it.

// errSlowPath asks the caller to encode with encoding/json instead.
var errSlowPath = errors.New("encode with encoding/json")

// appendEventRecord appends the framed line of an event record.
func appendEventRecord(dst []byte, seq uint64, turn string, e *Event) ([]byte, error) {
	out, err := jsonl.AppendFunc(dst, func(b []byte) ([]byte, error) {
		b = append(b, '{')
		if seq != 0 { // omitempty, as in eventRecord
			b = append(b, `"seq":`...)
			b = strconv.AppendUint(b, seq, 10)
			b = append(b, ',')
		}
		if turn != "" {
			b = append(b, `"turn":`...)
			b = appendString(b, turn)
			b = append(b, ',')
		}
		b = append(b, `"event":{"type":`...)
		b = appendString(b, string(e.Type))
		if e.TargetID != "" {
			b = append(b, `,"targetId":`...)
			b = appendString(b, e.TargetID)
		}
		if e.Message != nil {
			var err error
			b = append(b, `,"message":`...)
			if b, err = appendMessage(b, e.Message); err != nil {
				return b, err
			}
		}
		return append(b, "}}"...), nil
	})
	if errors.Is(err, errSlowPath) {
		return jsonl.Marshal(dst, eventRecord{Seq: seq, Turn: turn, Event: e})
	}
	return out, err
}

// appendBaseMessage appends the framed line of a base message record.
func appendBaseMessage(dst []byte, m *Message) ([]byte, error) {
	out, err := jsonl.AppendFunc(dst, func(b []byte) ([]byte, error) {
		b = append(b, `{"msg":`...)
		b, err := appendMessage(b, m)
		return append(b, '}'), err
	})
	if errors.Is(err, errSlowPath) {
		return jsonl.Marshal(dst, baseRecord{Msg: m})
	}
	return out, err
}

// appendMessage appends m's JSON. It returns errSlowPath for what it does
// not encode itself (metadata, data that encoding/json would re-escape).
func appendMessage(b []byte, m *Message) ([]byte, error) {
	if len(m.Metadata) > 0 {
		return b, errSlowPath
	}
	b = append(b, `{"id":`...)
	b = appendString(b, m.ID)
	b = append(b, `,"data":`...)
	if len(m.Data) == 0 {
		b = append(b, "null"...)
	} else {
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, m.Data); err != nil {
			return b, errSlowPath // let encoding/json report it
		}
		data := buf.Bytes()[len(b):]
		if htmlEscaped(data) {
			return b, errSlowPath // encoding/json escapes these
		}
		b = buf.Bytes()
	}
	b = append(b, `,"createdAt":`...)
	if y := m.CreatedAt.Year(); y < 0 || y > 9999 {
		return b, errSlowPath // encoding/json refuses these
	}
	if _, off := m.CreatedAt.Zone(); off%60 != 0 {
		return b, errSlowPath // RFC 3339 has no seconds in offsets
	}
	b = append(b, '"')
	b = m.CreatedAt.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = append(b, `,"source":{"type":`...)
	b = appendString(b, m.Source.Type)
	for _, f := range [...]struct{ key, val string }{
		{`,"stepId":`, m.Source.StepID},
		{`,"toolCallId":`, m.Source.ToolCallID},
		{`,"toolName":`, m.Source.ToolName},
		{`,"extensionName":`, m.Source.ExtensionName},
	} {
		if f.val != "" {
			b = append(b, f.key...)
			b = appendString(b, f.val)
		}
	}
	return append(b, "}}"...), nil
}

// htmlEscaped reports whether data holds a byte sequence that encoding/json
// would escape inside a compacted RawMessage: '<', '>', '&', U+2028 or
// U+2029. (bytes.ContainsAny decodes runes once its set is not ASCII, which
// made it a tenth of Turn.Append's time.)
func htmlEscaped(data []byte) bool {
	for i, c := range data {
		switch c {
		case '<', '>', '&':
			return true
		case 0xe2:
			if i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xa8 || data[i+2] == 0xa9) {
				return true
			}
		}
	}
	return false
}

const hex = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json does
// (with its default HTML escaping).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
