package workspace

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenDir holds an instance written by this version of the store. The
// format is versioned: once a version ships, its golden files stay, and
// TestGoldenReadable keeps every later store reading them.
const goldenDir = "testdata/golden/v1"

// deterministicStore returns a store whose clock and ids are fixed, so that
// what it writes is byte-for-byte reproducible.
func deterministicStore(t *testing.T, paths Paths) *Store {
	t.Helper()
	// A fixed clock, so that the files do not depend on how often the
	// store reads it.
	s, err := NewStore(paths, &StoreOptions{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	s.newID = func() string { n++; return fmt.Sprintf("turn-%d", n) }
	return s
}

// writeGoldenInstance writes three committed turns (appending, rewriting,
// appending), extension state, a runtime event, and a fourth turn left
// pending.
func writeGoldenInstance(t *testing.T, s *Store) *Instance {
	t.Helper()
	in, err := s.Open(ctx, "user:123", &OpenOptions{AgentName: "coder"})
	if err != nil {
		t.Fatal(err)
	}
	turn, _ := in.BeginTurn(ctx)
	must(t, turn.Append(ctx, Append(msg("m1", "Hello")), Append(msg("m2", "Hi!"))))
	must(t, turn.SetExtension("basicCompaction", map[string]any{"processedSteps": 42, "lastCompactionStep": "step-0041"}))
	must(t, turn.Commit(ctx))
	must(t, in.Emit(ctx, RuntimeEvent{Type: "turn.started", TurnID: "turn-2"}))
	turn, _ = in.BeginTurn(ctx)
	must(t, turn.Append(ctx, Replace("m1", msg("m1-v2", "Updated")), Append(msg("m3", "Fix the bug"))))
	must(t, turn.Commit(ctx))
	turn, _ = in.BeginTurn(ctx)
	must(t, turn.Append(ctx, Append(msg("m4", "Done"))))
	must(t, turn.Commit(ctx))
	turn, _ = in.BeginTurn(ctx)
	must(t, turn.Append(ctx, Append(msg("m5", "pending")), Remove("m2")))
	return in
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var goldenFiles = []string{
	"metadata.json",
	"messages/base.jsonl",
	"messages/events.jsonl",
	"messages/runtime-events.jsonl",
	"extensions/basicCompaction.json",
}

func TestGoldenFormat(t *testing.T) {
	paths := testPaths(t)
	in := writeGoldenInstance(t, deterministicStore(t, paths))
	defer in.Close()
	for _, name := range goldenFiles {
		got, err := os.ReadFile(filepath.Join(in.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join(goldenDir, name)
		if *update {
			must(t, os.MkdirAll(filepath.Dir(golden), 0o755))
			must(t, os.WriteFile(golden, got, 0o644))
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -run TestGoldenFormat -update to create it)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s changed (-golden +got); if on purpose, bump formatVersion and keep the old golden files readable:\n%s", name, diff)
		}
	}
}

// TestGoldenReadable opens the checked-in golden instance with today's
// store: old formats must stay readable.
func TestGoldenReadable(t *testing.T) {
	paths := testPaths(t)
	dir, err := paths.InstanceDir("user:123")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(goldenDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, strings.TrimPrefix(path, goldenDir))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStore(paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := openInst(t, s, "user:123")
	if diff := cmp.Diff([]string{"m1-v2", "m2", "m3", "m4"}, ids(in.Messages())); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	rec := in.Recovery()
	if !rec.Crashed || rec.Pending == nil || rec.Pending.ID != "turn-4" || len(rec.Pending.Events) != 2 {
		t.Errorf("recovery = %+v, want turn-4 pending with 2 events", rec)
	}
	var ext struct{ ProcessedSteps int }
	if ok, err := in.Extension("basicCompaction", &ext); !ok || err != nil || ext.ProcessedSteps != 42 {
		t.Errorf("extension = %+v %v %v", ext, ok, err)
	}
	if md := in.Metadata(); md.AgentName != "coder" || md.InstanceKey != "user:123" || !md.CreatedAt.Equal(t0) {
		t.Errorf("metadata = %+v", md)
	}
	base, _ := os.ReadFile(filepath.Join(dir, "messages", "base.jsonl"))
	if !bytes.HasPrefix(base, []byte(`{"c":`)) {
		t.Errorf("base.jsonl is not framed: %.40q", base)
	}
}
