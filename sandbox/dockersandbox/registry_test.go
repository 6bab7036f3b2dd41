package dockersandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRegistryConcurrentWriters runs many read-modify-writes from two
// registries over the same file (as two processes would, each with its own
// lock file descriptor): none is lost.
func TestRegistryConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dockersandbox", "containers.json")
	regs := []*registry{{path: path}, {path: path}}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			err := regs[i%2].update(func(m map[string]*Entry) bool {
				name := fmt.Sprintf("c%02d", i)
				m[name] = &Entry{Name: name, Key: name, Created: time.Unix(int64(i), 0).UTC()}
				return true
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file RegistryFile
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	if file.Schema != RegistrySchema || file.Version != RegistryVersion || len(file.Containers) != 40 {
		t.Fatalf("schema %q version %d, %d entries, want 40", file.Schema, file.Version, len(file.Containers))
	}
	for i, e := range file.Containers {
		if want := fmt.Sprintf("c%02d", i); e.Name != want || !e.Created.Equal(time.Unix(int64(i), 0)) {
			t.Errorf("entry %d: %+v", i, e)
		}
	}
	// Nothing but the file and its lock is left beside it.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 {
		t.Errorf("files beside the registry: %v", entries)
	}
}

func TestRegistryRefusesBadFiles(t *testing.T) {
	for _, tt := range []struct{ name, content, want string }{
		{"corrupt", `{"schema":`, "corrupt"},
		{"other schema", `{"schema":"other","version":1,"containers":[]}`, "schema"},
		{"newer version", `{"schema":"paddock.dockersandbox.registry","version":2,"containers":[]}`, "version 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "containers.json")
			os.WriteFile(path, []byte(tt.content), 0o600)
			_, err := (&registry{path: path}).snapshot()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("snapshot = %v, want an error about %q", err, tt.want)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Error("the bad file was changed")
			}
		})
	}
}
