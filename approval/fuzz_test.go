package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzVerifyAudit feeds arbitrary bytes to VerifyAudit: it never panics,
// and any error it returns for a non-empty broken log names a line.
func FuzzVerifyAudit(f *testing.F) {
	f.Add([]byte(`{"v":1,"seq":1,"time":"2026-01-01T00:00:00Z","prev":"","hash":"x","event":"evaluate","latency_ns":0}` + "\n"))
	f.Add([]byte("hello\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum, err := VerifyAudit(bytes.NewReader(data))
		if err != nil {
			var ae *AuditError
			if !errors.As(err, &ae) || ae.Line < 1 || !errors.Is(err, ErrTampered) {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		if sum.Records != int64(bytes.Count(data, []byte("\n"))) {
			t.Fatalf("%d records verified in %d lines", sum.Records, bytes.Count(data, []byte("\n")))
		}
	})
}

// FuzzDigest checks that the canonical form is a fixed point and that the
// digest ignores key order and spacing but nothing else.
func FuzzDigest(f *testing.F) {
	for _, s := range []string{`{"command":"ls"}`, `{"b":1,"a":[1,2,{"z":null,"y":"<&>"}]}`, `{"n":1.50}`, `"x"`, `[]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c1, err := CanonicalJSON(json.RawMessage(in))
		if err != nil {
			if json.Valid([]byte(in)) {
				t.Fatalf("valid JSON %q refused: %v", in, err)
			}
			return
		}
		c2, err := CanonicalJSON(c1)
		if err != nil || !bytes.Equal(c1, c2) {
			t.Fatalf("not a fixed point: %q -> %q -> %q (%v)", in, c1, c2, err)
		}
		d1, _ := Digest("bash", json.RawMessage(in), "/x")
		d2, _ := Digest("bash", c1, "/x")
		d3, _ := Digest("bash", c1, "/y")
		if d1 != d2 || d1 == d3 {
			t.Fatalf("digest: %s %s %s", d1, d2, d3)
		}
	})
}

// FuzzParseRules checks that a rule file never panics the parser and that
// errors name a line of the file.
func FuzzParseRules(f *testing.F) {
	f.Add("allow bash: git status|log\ndeny bash: rm -rf\nexample deny bash: rm -fr x\n")
	f.Add("allow read_file: path src/**\nallow fetch: domain *.go.dev\n")
	f.Add("permit x\n")
	f.Fuzz(func(t *testing.T, text string) {
		e := NewEvaluator(nil)
		err := e.Load(LayerProject, "f.rules", []byte(text))
		var pe *ParseError
		if err != nil && errors.As(err, &pe) {
			if pe.Line < 1 || pe.Line > strings.Count(text, "\n")+1 {
				t.Fatalf("error at line %d of a %d-line file", pe.Line, strings.Count(text, "\n")+1)
			}
		}
	})
}
