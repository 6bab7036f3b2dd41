package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockdev/paddock/agent"
	"github.com/paddockdev/paddock/internal/testenv"
	"github.com/paddockdev/paddock/sandbox"
	"github.com/paddockdev/paddock/sandbox/bwrapsandbox"
	"github.com/paddockdev/paddock/sandbox/dirsandbox"
)

// backend makes a sandbox over a fresh work directory.
type backend struct {
	name string
	new  func(t *testing.T, spec sandbox.Spec) (*sandbox.Sandbox, string)
}

func newDir(t *testing.T, spec sandbox.Spec) (*sandbox.Sandbox, string) {
	t.Helper()
	dir := t.TempDir()
	spec.Network = true // the directory backend cannot take the network away
	drv, err := dirsandbox.New(dir, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox.New(drv, nil)
	t.Cleanup(func() { sb.Close(context.Background()) })
	return sb, dir
}

func newBwrap(t *testing.T, spec sandbox.Spec) (*sandbox.Sandbox, string) {
	t.Helper()
	testenv.Need(t, "bwrap", bwrapsandbox.Probe(context.Background(), ""))
	dir := t.TempDir()
	drv, err := bwrapsandbox.New(context.Background(), dir, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox.New(drv, nil)
	t.Cleanup(func() { sb.Close(context.Background()) })
	return sb, dir
}

var backends = []backend{{"dir", newDir}, {"bwrap", newBwrap}}

// forEachBackend runs f as a subtest on every backend available here.
func forEachBackend(t *testing.T, f func(t *testing.T, sb *sandbox.Sandbox, dir string)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			sb, dir := b.new(t, sandbox.Spec{})
			f(t, sb, dir)
		})
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func js(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// call runs one tool of set and fails the test on a host error.
func call(t *testing.T, set *agent.Set, name string, input any) agent.Result {
	t.Helper()
	res, err := set.Call(context.Background(), name, js(t, input))
	if err != nil {
		t.Fatalf("%s: host error: %v", name, err)
	}
	return res
}

func envelopeOf(t *testing.T, res agent.Result) *agent.Envelope {
	t.Helper()
	e, err := agent.ParseEnvelope(res.Content)
	if err != nil {
		t.Fatalf("%v\n%s", err, res.Content)
	}
	return e
}
