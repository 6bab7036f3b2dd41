package approval

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/paddockdev/paddock/safety"
)

// ErrTampered is wrapped by the errors of [VerifyAudit] and [OpenAudit]
// when the audit chain is broken.
var ErrTampered = errors.New("approval: audit log tampered with")

// AuditRecord is one line of the audit log.
type AuditRecord struct {
	Version int `json:"v"`
	// Seq numbers the records from 1; Prev is the Hash of the previous
	// record ("" for the first); Hash is the hex SHA-256 of Prev, a
	// newline, and this record's JSON with Hash empty.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	Prev string    `json:"prev"`
	Hash string    `json:"hash"`
	// Event is "evaluate", "pending", "decision" or "resume".
	Event   string          `json:"event"`
	Session string          `json:"session,omitempty"`
	CallID  string          `json:"call_id,omitempty"`
	Tool    string          `json:"tool,omitempty"`
	Input   json.RawMessage `json:"input,omitempty"`
	Digest  string          `json:"digest,omitempty"`
	Effect  Effect          `json:"effect,omitempty"`
	Rule    string          `json:"rule,omitempty"`
	Risk    safety.Risk     `json:"risk,omitempty"`
	// Verdicts summarizes the analyzers: "<analyzer>: <risk>: <reason>".
	Verdicts []string `json:"verdicts,omitempty"`
	// Decision says what was decided ("run", "approve session", …) and By
	// who decided.
	Decision string        `json:"decision,omitempty"`
	By       string        `json:"by,omitempty"`
	Reason   string        `json:"reason,omitempty"`
	Latency  time.Duration `json:"latency_ns"`
}

func auditOf(event string, call Call, digest string, d Decision, decision, by string, latency time.Duration) AuditRecord {
	r := AuditRecord{Event: event, CallID: call.ID, Tool: call.Tool, Input: call.Input, Digest: digest, Effect: d.Effect,
		Risk: d.Risk, Decision: decision, By: by, Reason: d.Reason, Latency: latency}
	if d.Rule != nil {
		r.Rule = d.Rule.Text
		if d.Rule.Source != "" {
			r.Rule += " (" + d.Rule.Source + ")"
		}
	}
	for _, v := range d.Verdicts {
		s := v.Analyzer + ": " + string(v.Risk)
		if len(v.Reasons) > 0 {
			s += ": " + v.Reasons[0]
		}
		r.Verdicts = append(r.Verdicts, s)
	}
	return r
}

// hashRecord computes r's hash over prev and r with Hash empty.
func hashRecord(r AuditRecord) (string, []byte, error) {
	r.Hash = ""
	body, err := json.Marshal(r)
	if err != nil {
		return "", nil, err
	}
	h := sha256.New()
	io.WriteString(h, r.Prev)
	h.Write([]byte{'\n'})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil)), body, nil
}

// AuditLog appends hash-chained records to a JSONL file.
//
// An AuditLog is safe for concurrent use; one process should write a log
// at a time.
type AuditLog struct {
	mu   sync.Mutex
	f    *os.File
	prev string
	seq  int64
	sync bool
	now  func() time.Time
}

// AuditOptions configure [OpenAudit].
type AuditOptions struct {
	// Sync makes every Append durable (fsync) before it returns.
	Sync bool
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// OpenAudit opens (creating it if needed) the audit log at path for
// appending. It verifies the existing chain first: a tampered log is an
// error wrapping ErrTampered, and a torn last line (a crash mid-append) is
// an error too, naming the line, so that nothing is silently chained onto
// a broken log.
func OpenAudit(path string, opts *AuditOptions) (*AuditLog, error) {
	var o AuditOptions
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("approval: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("approval: %w", err)
	}
	sum, err := VerifyAudit(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("approval: open audit log %s: %w", path, err)
	}
	return &AuditLog{f: f, prev: sum.LastHash, seq: sum.Records, sync: o.Sync, now: o.Now}, nil
}

// Append chains r to the log and writes it as one line. It fills in
// Version, Seq, Time (if zero), Prev and Hash, and returns the record as
// written.
func (a *AuditLog) Append(r AuditRecord) (AuditRecord, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return r, errors.New("approval: audit log is closed")
	}
	r.Version, r.Seq, r.Prev = 1, a.seq+1, a.prev
	if r.Time.IsZero() {
		r.Time = a.now().UTC()
	}
	hash, _, err := hashRecord(r)
	if err != nil {
		return r, fmt.Errorf("approval: encode audit record: %w", err)
	}
	r.Hash = hash
	line, err := json.Marshal(r)
	if err != nil {
		return r, fmt.Errorf("approval: encode audit record: %w", err)
	}
	if _, err := a.f.Write(append(line, '\n')); err != nil {
		return r, fmt.Errorf("approval: append audit record: %w", err)
	}
	if a.sync {
		if err := a.f.Sync(); err != nil {
			return r, fmt.Errorf("approval: sync audit log: %w", err)
		}
	}
	a.prev, a.seq = hash, r.Seq
	return r, nil
}

// Close closes the log.
func (a *AuditLog) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// AuditSummary is what [VerifyAudit] found.
type AuditSummary struct {
	Records  int64
	LastHash string
}

// AuditError is a broken chain at a line of the log.
type AuditError struct {
	Line   int
	Reason string
}

// Error implements error.
func (e *AuditError) Error() string {
	return fmt.Sprintf("approval: audit log line %d: %s", e.Line, e.Reason)
}

// Unwrap returns ErrTampered.
func (e *AuditError) Unwrap() error { return ErrTampered }

// VerifyAudit reads an audit log and checks its chain: every line must be
// a record whose hash matches its content, whose Prev is the previous
// record's hash, and whose Seq follows the previous one. An edited,
// deleted, inserted or reordered record, or a log truncated in the middle
// of a line, is an *AuditError (wrapping ErrTampered) naming the first bad
// line. Cutting whole records off the end cannot be seen from the log
// alone: compare the returned LastHash with one kept elsewhere.
func VerifyAudit(r io.Reader) (AuditSummary, error) {
	var sum AuditSummary
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		data, err := br.ReadBytes('\n')
		if len(data) == 0 && err == io.EOF {
			return sum, nil
		}
		if err != nil && err != io.EOF {
			return sum, err
		}
		if !bytes.HasSuffix(data, []byte{'\n'}) {
			return sum, &AuditError{line, "the last record is cut short (no newline)"}
		}
		var rec AuditRecord
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rec); err != nil {
			return sum, &AuditError{line, "not a record: " + err.Error()}
		}
		if rec.Seq != sum.Records+1 {
			return sum, &AuditError{line, fmt.Sprintf("sequence %d follows %d (a record was removed, inserted or moved)", rec.Seq, sum.Records)}
		}
		if rec.Prev != sum.LastHash {
			return sum, &AuditError{line, "does not chain to the previous record"}
		}
		want, _, err := hashRecord(rec)
		if err != nil || want != rec.Hash {
			return sum, &AuditError{line, "hash does not match the content (the record was edited)"}
		}
		sum.Records, sum.LastHash = rec.Seq, rec.Hash
	}
}
