package workspace

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/paddockdev/paddock/internal/jsonl"
)

// The hand encoder must write exactly what encoding/json writes.
func checkEncoding(t *testing.T, seq uint64, turn string, e Event) {
	t.Helper()
	want, wantErr := jsonl.Marshal(nil, eventRecord{Seq: seq, Turn: turn, Event: &e})
	got, err := appendEventRecord(nil, seq, turn, &e)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("error %v, encoding/json's %v", err, wantErr)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("event record differs from encoding/json (-json +hand):\n%s", diff)
	}
	if e.Message != nil {
		want, _ = jsonl.Marshal(nil, baseRecord{Msg: e.Message})
		got, _ = appendBaseMessage(nil, e.Message)
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("base record differs from encoding/json (-json +hand):\n%s", diff)
		}
	}
}

func TestEncodeMatchesEncodingJSON(t *testing.T) {
	weird := "quote\" back\\slash\n\r\t\b\f\x00\x1f <tag> & \u2028\u2029 \xff\xfe é 🙂"
	tests := []Event{
		Append(msg("m1", "hello")),
		Append(Message{ID: weird, Data: json.RawMessage(`{ "pretty" : [1, 2],` + "\n" + `"s":"a b"}`), CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)), Source: Source{Type: weird, StepID: "s", ToolCallID: "c", ToolName: "n", ExtensionName: "e"}}),
		Append(Message{ID: "html", Data: json.RawMessage(`{"c":"<b>&</b>"}`)}),
		Append(Message{ID: "meta", Data: json.RawMessage(`1`), Metadata: map[string]any{"k": []any{1.5, "v"}}}),
		Append(Message{ID: "nodata"}),
		Append(Message{ID: "bad", Data: json.RawMessage(`{`)}),
		Append(Message{ID: "year", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}),
		Replace("m1", msg("m2", "x")),
		Remove(weird),
		Truncate(),
	}
	for _, e := range tests {
		t.Run(string(e.Type), func(t *testing.T) { checkEncoding(t, 7, "turn-"+weird, e) })
	}
}

func FuzzEncode(f *testing.F) {
	f.Add("m1", `{"role":"user","content":"hi"}`, "user", "t", int64(0))
	f.Add("\x00<\u2028", " [ 1 , \"\\u003c\" ] ", "\xff", "\n", int64(1e18))
	f.Fuzz(func(t *testing.T, id, data, source, target string, nanos int64) {
		m := Message{ID: id, Data: json.RawMessage(data), CreatedAt: time.Unix(0, nanos).UTC(), Source: Source{Type: source, StepID: target}}
		checkEncoding(t, uint64(nanos), target, Event{Type: EventReplace, TargetID: target, Message: &m})
	})
}
