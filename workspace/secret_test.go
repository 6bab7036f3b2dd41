package workspace

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSecretNeverPrints(t *testing.T) {
	const v = "hunter2-very-secret"
	s := NewSecret(v)
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "key", s)
	jsonOut, _ := json.Marshal(map[string]any{"k": s, "p": &s})
	text, _ := s.MarshalText()
	outputs := map[string]string{
		"String": s.String(), "%v": fmt.Sprintf("%v", s), "%+v": fmt.Sprintf("%+v", s),
		"%#v": fmt.Sprintf("%#v", s), "%s": fmt.Sprintf("%s", s), "%q": fmt.Sprintf("%q", s),
		"%x": fmt.Sprintf("%x", s), "%d": fmt.Sprintf("%d", s), "struct": fmt.Sprintf("%+v", struct{ K Secret }{s}),
		"pointer": fmt.Sprintf("%v", &s), "json": string(jsonOut), "text": string(text), "slog": logged.String(),
	}
	for name, out := range outputs {
		if strings.Contains(out, v) || strings.Contains(out, fmt.Sprintf("%x", v)) {
			t.Errorf("%s leaks the secret: %s", name, out)
		}
		if !strings.Contains(out, "REDACTED") {
			t.Errorf("%s = %q, want it to say REDACTED", name, out)
		}
	}
	if s.Reveal() != v {
		t.Errorf("Reveal = %q", s.Reveal())
	}
}

func TestMasker(t *testing.T) {
	const secret = `tok/en+with"quote`
	var m Masker
	m.Add(secret)
	m.Add("short") // below the minimum: ignored
	jsonForm, _ := json.Marshal(secret)
	for _, form := range []string{
		secret,
		base64.StdEncoding.EncodeToString([]byte(secret)),
		base64.RawURLEncoding.EncodeToString([]byte(secret)),
		url.QueryEscape(secret),
		url.PathEscape(secret),
		string(jsonForm[1 : len(jsonForm)-1]),
	} {
		out := m.Mask("before " + form + " after")
		if strings.Contains(out, form) || !strings.Contains(out, Redacted) {
			t.Errorf("form %q not masked: %q", form, out)
		}
	}
	if out := m.Mask("a short word"); out != "a short word" {
		t.Errorf("a short value was masked: %q", out)
	}
	doc := []byte(`{"cmd":` + string(jsonForm) + `}`)
	if out := m.maskJSON(doc); !json.Valid(out) || bytes.Contains(out, []byte("quote")) {
		t.Errorf("maskJSON = %s", out)
	}
}

func TestSecretStore(t *testing.T) {
	paths := testPaths(t)
	noEnv := &SecretStoreOptions{Getenv: func(string) string { return "" }}
	s, err := OpenSecrets(paths, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	const v = "ghp_plaintext-canary-1234567890"
	if err := s.Set("github-token", NewSecret(v)); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("other", NewSecret("another-value-123")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(paths.SecretKeyFile())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	disk, _ := os.ReadFile(paths.SecretsFile())
	var m Masker
	m.Add(v)
	if m.Mask(string(disk)) != string(disk) {
		t.Errorf("secrets.json holds the value in a recognisable form: %s", disk)
	}

	// A new process with the same key file reads it back.
	s2, err := OpenSecrets(paths, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s2.Get("github-token")
	if err != nil || got.Reveal() != v {
		t.Fatalf("Get = %q, %v", got.Reveal(), err)
	}
	if out := s2.Masker().Mask("token " + v); strings.Contains(out, v) {
		t.Errorf("the reopened store's Masker does not know the secret: %q", out)
	}
	if _, err := s2.Get("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get(missing) = %v, want fs.ErrNotExist", err)
	}
	if err := s2.Delete("other"); err != nil {
		t.Fatal(err)
	}
	if diff := strings.Join(s2.Names(), ","); diff != "github-token" {
		t.Errorf("Names = %s", diff)
	}

	// Swapping two sealed values on disk must not give one name the other's
	// value: associated data binds each value to its name.
	var f struct {
		Schema  string                     `json:"schema"`
		Version int                        `json:"version"`
		Secrets map[string]json.RawMessage `json:"secrets"`
	}
	s2.Set("other", NewSecret("another-value-123"))
	disk, _ = os.ReadFile(paths.SecretsFile())
	json.Unmarshal(disk, &f)
	f.Secrets["github-token"], f.Secrets["other"] = f.Secrets["other"], f.Secrets["github-token"]
	swapped, _ := json.Marshal(f)
	os.WriteFile(paths.SecretsFile(), swapped, 0o600)
	if _, err := OpenSecrets(paths, noEnv); err == nil {
		t.Error("a store with swapped values opened")
	}

	// A key file others can read is refused.
	os.WriteFile(paths.SecretsFile(), disk, 0o600)
	os.Chmod(paths.SecretKeyFile(), 0o644)
	if _, err := OpenSecrets(paths, noEnv); err == nil || !strings.Contains(err.Error(), "chmod") {
		t.Errorf("world-readable key file: %v, want a refusal that says how to fix it", err)
	}
}

func TestSecretStoreEnvKey(t *testing.T) {
	paths := testPaths(t)
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	env := &SecretStoreOptions{Getenv: func(k string) string {
		if k == SecretKeyEnv {
			return key
		}
		return ""
	}}
	s, err := OpenSecrets(paths, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set("a", NewSecret("value-from-env-key")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(paths.SecretKeyFile()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a key file was created although the key came from the environment")
	}
	// Another key cannot read the store.
	other := &SecretStoreOptions{KeyFile: filepath.Join(t.TempDir(), "k"), Getenv: func(string) string { return "" }}
	if _, err := OpenSecrets(paths, other); err == nil {
		t.Error("the store opened with another key")
	}
	bad := &SecretStoreOptions{Getenv: func(string) string { return "not-a-key" }}
	if _, err := OpenSecrets(paths, bad); err == nil || strings.Contains(err.Error(), "not-a-key") {
		t.Errorf("bad env key: %v (must fail without echoing the value)", err)
	}
}
