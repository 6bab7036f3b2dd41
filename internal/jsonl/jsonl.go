// Package jsonl frames JSON records as checksummed lines and parses them back,
// telling a torn tail (a crash mid-write) apart from a corrupt record in the
// middle of a file.
//
// # Format
//
// Every record is one line that is itself valid JSON:
//
//	{"c":"1a2b3c4d","r":<payload>}\n
//
// where payload is the record's JSON and c is the CRC-32C (Castagnoli) of the
// payload's exact bytes, as 8 lowercase hex digits. The checksum sits at a
// fixed position so a reader verifies it without a JSON parse, and the payload
// is handed back as the exact bytes that were written.
package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	prefix    = `{"c":"`
	midfix    = `","r":`
	headerLen = len(prefix) + 8 + len(midfix)
	hexdigits = "0123456789abcdef"
)

// ErrChecksum reports a record whose payload does not match its checksum.
var ErrChecksum = errors.New("jsonl: checksum mismatch")

// ErrFraming reports a line that is not a framed record.
var ErrFraming = errors.New("jsonl: not a framed record")

// Append appends payload, framed as one record line (with its newline), to
// dst. The payload must be a single line of JSON (encoding/json output is).
func Append(dst, payload []byte) []byte {
	sum := crc32.Checksum(payload, castagnoli)
	dst = append(dst, prefix...)
	for shift := 28; shift >= 0; shift -= 4 {
		dst = append(dst, hexdigits[(sum>>uint(shift))&0xf])
	}
	dst = append(dst, midfix...)
	dst = append(dst, payload...)
	return append(dst, '}', '\n')
}

// AppendFunc appends one record line to dst whose payload is what payload
// appends to the slice it is given. It frames the payload in place, with no
// copy. If payload fails, dst is returned as it was.
func AppendFunc(dst []byte, payload func([]byte) ([]byte, error)) ([]byte, error) {
	start := len(dst)
	dst = append(dst, prefix...)
	dst = append(dst, "00000000"...)
	dst = append(dst, midfix...)
	dst, err := payload(dst)
	if err != nil {
		return dst[:start], err
	}
	sum := crc32.Checksum(dst[start+headerLen:], castagnoli)
	for i, shift := start+len(prefix), 28; shift >= 0; i, shift = i+1, shift-4 {
		dst[i] = hexdigits[(sum>>uint(shift))&0xf]
	}
	return append(dst, '}', '\n'), nil
}

// Marshal JSON-encodes v and appends it to dst as one record line.
func Marshal(dst []byte, v any) ([]byte, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return Append(dst, payload), nil
}

// Verify checks one line (without its newline) and returns its payload.
func Verify(line []byte) ([]byte, error) {
	if len(line) < headerLen+2 || string(line[:len(prefix)]) != prefix ||
		string(line[len(prefix)+8:headerLen]) != midfix || line[len(line)-1] != '}' {
		return nil, ErrFraming
	}
	var want uint32
	for _, c := range line[len(prefix) : len(prefix)+8] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		default:
			return nil, ErrFraming
		}
		want = want<<4 | uint32(d)
	}
	payload := line[headerLen : len(line)-1]
	if crc32.Checksum(payload, castagnoli) != want {
		return nil, ErrChecksum
	}
	return payload, nil
}

// Record is one verified record of a parsed file.
type Record struct {
	Payload []byte // the payload's bytes, aliasing the parsed data
	Off     int64  // offset of the line's first byte
	End     int64  // offset just past the line's newline
	Line    int    // 1-based line number
}

// Problem is a bad line in the middle of a file: good records follow it, so
// it cannot be the torn end of an interrupted write.
type Problem struct {
	Off  int64
	Line int
	Raw  []byte // the line's bytes, without its newline
	Err  error
}

func (p Problem) Error() string {
	return fmt.Sprintf("line %d (offset %d): %v", p.Line, p.Off, p.Err)
}

// Result is what Parse found.
type Result struct {
	Records []Record
	// Corrupt lists bad lines that are followed by good records.
	Corrupt []Problem
	// End is the offset just past the last good record: the file's valid
	// length. Bytes from End on are the torn tail.
	End int64
	// Tail holds the bytes after the last good record (an unterminated line,
	// or bad lines with no good record after them), nil when there are none.
	Tail []byte
}

// Parse splits data into records. It never fails: bad lines are reported in
// the Result, either as Corrupt (in the middle) or as the Tail (at the end).
// Empty lines are ignored.
func Parse(data []byte) Result {
	var r Result
	var pending []Problem // bad lines not yet followed by a good record
	off, line := 0, 0
	for off < len(data) {
		line++
		n := bytes.IndexByte(data[off:], '\n')
		if n < 0 {
			break // unterminated: part of the tail
		}
		raw := data[off : off+n]
		next := off + n + 1
		if len(raw) == 0 {
			off = next
			if len(pending) == 0 {
				r.End = int64(off)
			}
			continue
		}
		payload, err := Verify(raw)
		if err != nil {
			pending = append(pending, Problem{Off: int64(off), Line: line, Raw: raw, Err: err})
			off = next
			continue
		}
		r.Corrupt = append(r.Corrupt, pending...)
		pending = pending[:0]
		r.Records = append(r.Records, Record{Payload: payload, Off: int64(off), End: int64(next), Line: line})
		off = next
		r.End = int64(off)
	}
	if r.End < int64(len(data)) {
		r.Tail = data[r.End:]
	}
	return r
}
