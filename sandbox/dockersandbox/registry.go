package dockersandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/paddockdev/paddock/internal/vfs"
)

// RegistrySchema and RegistryVersion identify the registry file.
const (
	RegistrySchema  = "paddock.dockersandbox.registry"
	RegistryVersion = 1
)

// Entry is one container in the registry.
type Entry struct {
	Name        string    `json:"name"`        // the container's name
	Key         string    `json:"key"`         // the sandbox key it was made for
	Created     time.Time `json:"created"`     // when it was made
	LastUsed    time.Time `json:"lastUsed"`    // the last Ensure or Exec (written at most once a minute)
	ImageDigest string    `json:"imageDigest"` // the image ID it runs
	ConfigHash  string    `json:"configHash"`  // the hash of its Config
}

// RegistryFile is the registry's on-disk form.
type RegistryFile struct {
	Schema     string  `json:"schema"`
	Version    int     `json:"version"`
	Containers []Entry `json:"containers"`
}

// registry is the containers.json of one state root. Every change is a
// read-modify-write under an flock of containers.lock (other processes)
// and mu (this one), written atomically.
type registry struct {
	path string
	mu   sync.Mutex
}

// update runs fn on the entries under the lock and writes them back when fn
// reports a change.
func (r *registry) update(fn func(map[string]*Entry) bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return fmt.Errorf("dockersandbox: registry: %w", err)
	}
	lf, err := os.OpenFile(r.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("dockersandbox: registry lock: %w", err)
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("dockersandbox: registry lock: %w", err)
	}
	defer syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	entries, err := r.read()
	if err != nil {
		return err
	}
	if !fn(entries) {
		return nil
	}
	file := RegistryFile{Schema: RegistrySchema, Version: RegistryVersion, Containers: []Entry{}}
	for _, e := range entries {
		file.Containers = append(file.Containers, *e)
	}
	sort.Slice(file.Containers, func(i, j int) bool { return file.Containers[i].Name < file.Containers[j].Name })
	b, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return fmt.Errorf("dockersandbox: registry: %w", err)
	}
	if err := vfs.WriteFileAtomic(vfs.OS, r.path, append(b, '\n'), 0o600, true); err != nil {
		return fmt.Errorf("dockersandbox: registry: %w", err)
	}
	return nil
}

func (r *registry) read() (map[string]*Entry, error) {
	entries := map[string]*Entry{}
	b, err := vfs.ReadFile(vfs.OS, r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return entries, nil
	}
	if err != nil {
		return nil, fmt.Errorf("dockersandbox: registry: %w", err)
	}
	var file RegistryFile
	if err := json.Unmarshal(b, &file); err != nil {
		return nil, fmt.Errorf("dockersandbox: registry %s is corrupt (delete it: it is rebuilt from the engine's labels): %w", r.path, err)
	}
	if file.Schema != RegistrySchema || file.Version != RegistryVersion {
		return nil, fmt.Errorf("dockersandbox: registry %s has schema %q version %d, want %q version %d", r.path, file.Schema, file.Version, RegistrySchema, RegistryVersion)
	}
	for i := range file.Containers {
		e := file.Containers[i]
		entries[e.Name] = &e
	}
	return entries, nil
}

// snapshot returns the entries, sorted by name.
func (r *registry) snapshot() ([]Entry, error) {
	var out []Entry
	err := r.update(func(m map[string]*Entry) bool {
		for _, e := range m {
			out = append(out, *e)
		}
		return false
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}
