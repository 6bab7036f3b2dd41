package approval

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeAudit writes n records and returns the file's lines.
func writeAudit(t *testing.T, n int) (string, [][]byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	log, err := OpenAudit(path, &AuditOptions{Now: func() time.Time { ts = ts.Add(time.Second); return ts }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := log.Append(AuditRecord{Event: "decision", CallID: "c" + string(rune('0'+i)), Tool: "bash", Effect: Allow, By: "alice", Decision: "run"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	return path, bytes.SplitAfter(data, []byte("\n"))[:n]
}

func TestAuditTampering(t *testing.T) {
	_, lines := writeAudit(t, 5)
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	edit := func(l []byte, from, to string) []byte { return bytes.Replace(l, []byte(from), []byte(to), 1) }
	tests := []struct {
		name string
		data []byte
		line int
	}{
		{"edited field", join(lines[0], lines[1], edit(lines[2], `"by":"alice"`, `"by":"mallory"`), lines[3], lines[4]), 3},
		{"edited effect", join(lines[0], edit(lines[1], `"effect":"allow"`, `"effect":"deny"`), lines[2], lines[3], lines[4]), 2},
		{"deleted record", join(lines[0], lines[1], lines[3], lines[4]), 3},
		{"reordered", join(lines[0], lines[2], lines[1], lines[3], lines[4]), 2},
		{"duplicated", join(lines[0], lines[1], lines[1], lines[2]), 3},
		{"truncated in the middle", join(lines[0], lines[1], lines[2][:len(lines[2])/2], lines[3], lines[4]), 3},
		{"cut mid-line at the end", join(lines[0], lines[1], lines[2][:20]), 3},
		{"first record removed", join(lines[1], lines[2]), 1},
		{"garbage", join(lines[0], []byte("hello\n")), 2},
	}
	for _, tt := range tests {
		_, err := VerifyAudit(bytes.NewReader(tt.data))
		var ae *AuditError
		if !errors.As(err, &ae) || !errors.Is(err, ErrTampered) || ae.Line != tt.line {
			t.Errorf("%s: err = %v, want a tampering error at line %d", tt.name, err, tt.line)
		}
	}
	sum, err := VerifyAudit(bytes.NewReader(join(lines...)))
	if err != nil || sum.Records != 5 {
		t.Errorf("intact log: %+v %v", sum, err)
	}
	// Cutting whole records off the end is seen only against a kept hash.
	short, err := VerifyAudit(bytes.NewReader(join(lines[:3]...)))
	if err != nil || short.LastHash == sum.LastHash {
		t.Errorf("truncated tail: %+v %v", short, err)
	}
}

func TestAuditReopen(t *testing.T) {
	path, lines := writeAudit(t, 3)
	log, err := OpenAudit(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := log.Append(AuditRecord{Event: "evaluate"})
	if err != nil || r.Seq != 4 {
		t.Fatalf("%+v %v", r, err)
	}
	log.Close()
	f, _ := os.Open(path)
	defer f.Close()
	if sum, err := VerifyAudit(f); err != nil || sum.Records != 4 {
		t.Errorf("after reopen: %+v %v", sum, err)
	}
	// A tampered log is not reopened for appending.
	os.WriteFile(path, bytes.Join([][]byte{lines[0], lines[2]}, nil), 0o600)
	if _, err := OpenAudit(path, nil); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("tampered reopen: %v", err)
	}
}
