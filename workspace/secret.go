package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sort"
	"sync"

	"github.com/paddockdev/paddock/internal/secretbox"
)

// Secret holds a secret value that never prints: String, GoString, every
// fmt verb, MarshalJSON, MarshalText and LogValue all give "[REDACTED]".
// Reveal returns the value. The zero Secret is empty.
type Secret struct{ value string }

// NewSecret wraps value.
func NewSecret(value string) Secret { return Secret{value} }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return s.value }

// String returns "[REDACTED]".
func (s Secret) String() string { return Redacted }

// GoString returns "[REDACTED]", for %#v.
func (s Secret) GoString() string { return Redacted }

// Format prints "[REDACTED]" for every verb.
func (s Secret) Format(f fmt.State, verb rune) { fmt.Fprint(f, Redacted) }

// MarshalJSON returns the JSON string "[REDACTED]".
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(Redacted) }

// MarshalText returns "[REDACTED]".
func (s Secret) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue returns "[REDACTED]" for log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(Redacted) }

// SecretKeyEnv is the environment variable that can hold the secret store's
// key (32 bytes, base64) instead of the key file.
const SecretKeyEnv = "PADDOCK_SECRET_KEY"

// SecretStoreOptions are the optional settings of [OpenSecrets]. A nil
// *SecretStoreOptions means all defaults.
type SecretStoreOptions struct {
	// KeyFile is the key's file; empty means <state root>/secrets.key. It
	// is created (0600, random key) when missing, and refused when group
	// or others can read it.
	KeyFile string
	// Getenv replaces os.Getenv, for tests. Nil means os.Getenv.
	Getenv func(string) string
}

// ErrSecretNotFound is returned by [SecretStore.Get] for an unknown name; it
// matches fs.ErrNotExist too.
var ErrSecretNotFound = fmt.Errorf("workspace: secret not found: %w", fs.ErrNotExist)

// SecretStore keeps named secrets under the state root, encrypted at rest
// with AES-256-GCM. Each value is sealed with its name as associated data,
// so a value moved to another name fails to open. The key comes from
// $PADDOCK_SECRET_KEY when set, otherwise from a 0600 key file.
//
// Tools and extensions should get secrets from the host, never the store.
// A SecretStore is safe for concurrent use within one process; it does not
// lock against other processes writing the same file.
type SecretStore struct {
	path   string
	key    secretbox.Key
	mu     sync.Mutex
	file   *secretbox.File
	masker Masker
}

// OpenSecrets opens the secret store of paths' state root.
func OpenSecrets(paths Paths, opts *SecretStoreOptions) (*SecretStore, error) {
	var o SecretStoreOptions
	if opts != nil {
		o = *opts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.KeyFile == "" {
		o.KeyFile = paths.SecretKeyFile()
	}
	if err := os.MkdirAll(paths.StateRoot, 0o700); err != nil {
		return nil, fmt.Errorf("workspace: secrets: %w", err)
	}
	var key secretbox.Key
	var err error
	if env := o.Getenv(SecretKeyEnv); env != "" {
		if key, err = secretbox.ParseKey(env); err != nil {
			return nil, fmt.Errorf("workspace: secrets: $%s: %w", SecretKeyEnv, err)
		}
	} else if key, err = secretbox.LoadKeyFile(o.KeyFile, true); err != nil {
		return nil, fmt.Errorf("workspace: secrets: %w", err)
	}
	f, err := secretbox.ReadFile(paths.SecretsFile())
	if err != nil {
		return nil, fmt.Errorf("workspace: secrets: %w", err)
	}
	s := &SecretStore{path: paths.SecretsFile(), key: key, file: f}
	for name, sealed := range f.Secrets {
		v, err := secretbox.Open(key, name, sealed)
		if err != nil {
			return nil, fmt.Errorf("workspace: secrets: %q: %w (wrong key?)", name, err)
		}
		s.masker.Add(string(v))
	}
	return s, nil
}

// Set stores value under name, replacing any earlier value, and registers
// it with the store's Masker.
func (s *SecretStore) Set(name string, value Secret) error {
	if name == "" {
		return errors.New("workspace: secret name is empty")
	}
	sealed, err := secretbox.Seal(s.key, name, []byte(value.value))
	if err != nil {
		return fmt.Errorf("workspace: secret %q: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := &secretbox.File{Schema: s.file.Schema, Version: s.file.Version, Secrets: map[string]secretbox.Sealed{}}
	for k, v := range s.file.Secrets {
		next.Secrets[k] = v
	}
	next.Secrets[name] = sealed
	if err := secretbox.WriteFile(s.path, next); err != nil {
		return fmt.Errorf("workspace: secret %q: %w", name, err)
	}
	s.file = next
	s.masker.Add(value.value)
	return nil
}

// Get returns the secret stored under name, or an error matching
// ErrSecretNotFound and fs.ErrNotExist.
func (s *SecretStore) Get(name string) (Secret, error) {
	s.mu.Lock()
	sealed, ok := s.file.Secrets[name]
	s.mu.Unlock()
	if !ok {
		return Secret{}, fmt.Errorf("%w: %q", ErrSecretNotFound, name)
	}
	v, err := secretbox.Open(s.key, name, sealed)
	if err != nil {
		return Secret{}, fmt.Errorf("workspace: secret %q: %w", name, err)
	}
	return Secret{string(v)}, nil
}

// Delete removes the secret stored under name. The Masker keeps masking
// the old value.
func (s *SecretStore) Delete(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.file.Secrets[name]; !ok {
		return fmt.Errorf("%w: %q", ErrSecretNotFound, name)
	}
	next := &secretbox.File{Schema: s.file.Schema, Version: s.file.Version, Secrets: map[string]secretbox.Sealed{}}
	for k, v := range s.file.Secrets {
		if k != name {
			next.Secrets[k] = v
		}
	}
	if err := secretbox.WriteFile(s.path, next); err != nil {
		return fmt.Errorf("workspace: secret %q: %w", name, err)
	}
	s.file = next
	return nil
}

// Names returns the stored secrets' names, sorted.
func (s *SecretStore) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.file.Secrets))
	for k := range s.file.Secrets {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Masker returns a Masker that knows every secret the store has held
// since it was opened. Pass it as [StoreOptions.Masker].
func (s *SecretStore) Masker() *Masker { return &s.masker }
