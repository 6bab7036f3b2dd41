package jsonl

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func lines(payloads ...string) []byte {
	var b []byte
	for _, p := range payloads {
		b = Append(b, []byte(p))
	}
	return b
}

func payloads(r Result) []string {
	out := []string{}
	for _, rec := range r.Records {
		out = append(out, string(rec.Payload))
	}
	return out
}

func TestFramedLineIsJSON(t *testing.T) {
	line := Append(nil, []byte(`{"a":[1,2,"x\n"]}`))
	var v struct {
		C string          `json:"c"`
		R json.RawMessage `json:"r"`
	}
	if err := json.Unmarshal(line, &v); err != nil || len(v.C) != 8 || string(v.R) != `{"a":[1,2,"x\n"]}` {
		t.Fatalf("framed line %q decodes to %+v, %v", line, v, err)
	}
}

func TestParse(t *testing.T) {
	good := lines(`{"n":1}`, `{"n":2}`, `{"n":3}`)
	second := bytes.Index(good, []byte(`{"n":2}`))
	flipped := append([]byte(nil), good...)
	flipped[second+5] = '9' // {"n":9}: checksum no longer matches
	tests := []struct {
		name        string
		data        []byte
		want        []string
		corrupt     int
		tail        string
		wantErrKind error
	}{
		{"empty", nil, []string{}, 0, "", nil},
		{"clean", good, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`}, 0, "", nil},
		{"torn last line", append(lines(`{"n":1}`), `{"c":"0000`...), []string{`{"n":1}`}, 0, `{"c":"0000`, nil},
		{"zeroed tail", append(lines(`{"n":1}`), make([]byte, 700)...), []string{`{"n":1}`}, 0, string(make([]byte, 700)), nil},
		{"bad last complete line is tail", append(lines(`{"n":1}`), "garbage\n"...), []string{`{"n":1}`}, 0, "garbage\n", nil},
		{"corrupt middle", flipped, []string{`{"n":1}`, `{"n":3}`}, 1, "", ErrChecksum},
		{"unframed middle", append(append(lines(`{"n":1}`), "{\"n\":2}\n"...), lines(`{"n":3}`)...), []string{`{"n":1}`, `{"n":3}`}, 1, "", ErrFraming},
		{"blank lines ignored", append(append(lines(`{"n":1}`), "\n\n"...), lines(`{"n":2}`)...), []string{`{"n":1}`, `{"n":2}`}, 0, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Parse(tt.data)
			if diff := cmp.Diff(tt.want, payloads(r)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if len(r.Corrupt) != tt.corrupt {
				t.Errorf("corrupt = %v, want %d", r.Corrupt, tt.corrupt)
			}
			if tt.wantErrKind != nil && (len(r.Corrupt) == 0 || !errors.Is(r.Corrupt[0].Err, tt.wantErrKind)) {
				t.Errorf("corrupt = %v, want %v", r.Corrupt, tt.wantErrKind)
			}
			if string(r.Tail) != tt.tail {
				t.Errorf("tail = %q, want %q", r.Tail, tt.tail)
			}
			if r.End+int64(len(r.Tail)) != int64(len(tt.data)) {
				t.Errorf("End %d + tail %d != %d bytes", r.End, len(r.Tail), len(tt.data))
			}
		})
	}
}

// FuzzParse checks that Parse never panics, accounts for every byte, and
// only returns records whose checksum holds, and that every record that was
// written whole survives any garbage appended after it.
func FuzzParse(f *testing.F) {
	f.Add([]byte(nil), []byte(`{"n":1}`))
	f.Add(lines(`{"n":1}`), []byte("\x00\x00"))
	f.Add([]byte(`{"c":"00000000","r":{}}`+"\n"), []byte("\n"))
	f.Add(lines(`{"a":"b"}`, `[]`), []byte(`{"c":"`))
	f.Fuzz(func(t *testing.T, prefix, garbage []byte) {
		r := Parse(prefix)
		if r.End+int64(len(r.Tail)) != int64(len(prefix)) {
			t.Fatalf("End %d + tail %d != %d", r.End, len(r.Tail), len(prefix))
		}
		for _, rec := range r.Records {
			line := prefix[rec.Off : rec.Off+int64(len(rec.Payload))+int64(headerLen)+1]
			if p, err := Verify(line); err != nil || !bytes.Equal(p, rec.Payload) {
				t.Fatalf("record at %d does not verify: %v", rec.Off, err)
			}
		}
		// Records written whole stay readable whatever follows them, as
		// long as a newline ends the garbage (else it is the torn tail).
		whole := lines(`{"k":"v"}`, `{"k":"w"}`)
		r = Parse(append(append(whole, garbage...), '\n'))
		got := payloads(r)
		if len(got) < 2 || got[0] != `{"k":"v"}` || got[1] != `{"k":"w"}` {
			t.Fatalf("records before garbage %q lost: %v", garbage, got)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	var data []byte
	for range 1000 {
		data = Append(data, []byte(`{"msg":{"id":"m1","data":{"role":"user","content":"a message of about a hundred bytes in length, give or take"}}}`))
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(data)
	}
}
