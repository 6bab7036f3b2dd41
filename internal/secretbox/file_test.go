package secretbox_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/internal/mask"
	"github.com/paddockdev/paddock/internal/secretbox"
)

func TestReadFileMissing(t *testing.T) {
	got, err := secretbox.ReadFile(filepath.Join(t.TempDir(), "secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := &secretbox.File{Schema: "paddock.secrets", Version: 1, Secrets: map[string]secretbox.Sealed{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadFile(missing) mismatch (-want +got):\n%s", diff)
	}
}

func TestReadFileErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    string // in the error
	}{
		{"newer version", `{"schema":"paddock.secrets","version":2,"secrets":{}}`, "version 2 is newer than this paddock supports (1); upgrade paddock"},
		{"zero version", `{"schema":"paddock.secrets","version":0,"secrets":{}}`, "invalid version 0"},
		{"no version", `{"schema":"paddock.secrets","secrets":{}}`, "invalid version 0"},
		{"other schema", `{"schema":"paddock.config","version":1}`, `schema is "paddock.config", want "paddock.secrets"`},
		{"no schema", `{"version":1}`, `schema is ""`},
		{"not JSON", `schema=paddock.secrets`, "invalid character"},
		{"truncated", `{"schema":"paddock.secrets","version":1,"secrets":{"a":{"nonce":"`, "unexpected end of JSON input"},
		{"trailing data", `{"schema":"paddock.secrets","version":1} {}`, "invalid character"},
		{"bad base64", `{"schema":"paddock.secrets","version":1,"secrets":{"a":{"nonce":"!!"}}}`, "illegal base64"},
		{"empty", ``, "unexpected end of JSON input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "secrets.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := secretbox.ReadFile(path)
			if err == nil {
				t.Fatalf("ReadFile = %+v, want an error", f)
			}
			for _, want := range []string{path, tt.want} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("ReadFile = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

// sealAll returns a File holding each value sealed under k by name.
func sealAll(t *testing.T, k secretbox.Key, values map[string]string) *secretbox.File {
	t.Helper()
	f := &secretbox.File{Secrets: map[string]secretbox.Sealed{}}
	for name, v := range values {
		s, err := secretbox.Seal(k, name, []byte(v))
		if err != nil {
			t.Fatal(err)
		}
		f.Secrets[name] = s
	}
	return f
}

func TestWriteReadFile(t *testing.T) {
	k := testKey(1)
	tests := []struct {
		name   string
		values map[string]string
	}{
		{"empty", map[string]string{}},
		{"one", map[string]string{"github/token": "ghp_0123456789abcdef"}},
		{"several", map[string]string{"a": "1", "b": "", "c/d": strings.Repeat("x", 1000), "é\x00": "\x00\xff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "secrets.json")
			in := sealAll(t, k, tt.values)
			if err := secretbox.WriteFile(path, in); err != nil {
				t.Fatal(err)
			}
			got, err := secretbox.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := &secretbox.File{Schema: "paddock.secrets", Version: 1, Secrets: in.Secrets}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ReadFile(WriteFile(f)) mismatch (-want +got):\n%s", diff)
			}
			opened := map[string]string{}
			for name, s := range got.Secrets {
				v, err := secretbox.Open(k, name, s)
				if err != nil {
					t.Fatalf("Open(%q): %v", name, err)
				}
				opened[name] = string(v)
			}
			if diff := cmp.Diff(tt.values, opened); diff != "" {
				t.Errorf("opened values mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSwappedInFile swaps two values in a stored file, as an attacker
// who can write the file but lacks the key might; neither may open.
func TestSwappedInFile(t *testing.T) {
	k := testKey(1)
	path := filepath.Join(t.TempDir(), "secrets.json")
	if err := secretbox.WriteFile(path, sealAll(t, k, map[string]string{"prod": "prod-password", "dev": "dev-password"})); err != nil {
		t.Fatal(err)
	}
	f, err := secretbox.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Secrets["prod"], f.Secrets["dev"] = f.Secrets["dev"], f.Secrets["prod"]
	for name, s := range f.Secrets {
		if v, err := secretbox.Open(k, name, s); err == nil {
			t.Errorf("Open(%q) of the swapped value = %q, want an error", name, v)
		}
	}
}

func TestWriteFileHidesPlaintext(t *testing.T) {
	values := map[string]string{
		"github/token": "ghp_0123456789abcdefghij",
		"db/password":  "correct horse battery staple",
		"binary":       "\x00\x01\x02\x03\xfe\xff\x00\x01",
	}
	path := filepath.Join(t.TempDir(), "secrets.json")
	if err := secretbox.WriteFile(path, sealAll(t, testKey(1), values)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m mask.Masker
	for name, v := range values {
		m.Add(v)
		if !bytes.Contains(data, []byte(name)) {
			t.Errorf("file does not hold the name %q; is this the right file?", name)
		}
	}
	if m.Contains(data) {
		t.Errorf("file holds a plaintext value, raw or encoded:\n%s", m.Mask(string(data)))
	}
}

func TestWriteFileReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secrets.json")
	// An existing, too permissive file is replaced by a 0600 one.
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, values := range []map[string]string{{"a": "1"}, {"b": "2"}} {
		if err := secretbox.WriteFile(path, sealAll(t, testKey(1), values)); err != nil {
			t.Fatal(err)
		}
		got, err := secretbox.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for name := range got.Secrets {
			names = append(names, name)
		}
		var want []string
		for name := range values {
			want = append(want, name)
		}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("write %d: names mismatch (-want +got):\n%s", i, diff)
		}
		assertOnly(t, dir, "secrets.json")
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if runtime.GOOS != "windows" && fi.Mode() != 0o600 {
			t.Errorf("write %d: file has mode %v, want -rw-------", i, fi.Mode())
		}
	}
}

func TestWriteFileFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	// A non-empty directory where the file should go makes the rename
	// fail after the temporary file is written.
	path := filepath.Join(dir, "secrets.json")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := secretbox.WriteFile(path, sealAll(t, testKey(1), map[string]string{"a": "1"})); err == nil {
		t.Fatal("WriteFile over a directory succeeded, want an error")
	}
	assertOnly(t, dir, "secrets.json")
}

// assertOnly fails t unless dir holds exactly the named entries.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if diff := cmp.Diff(names, got); diff != "" {
		t.Errorf("directory entries mismatch (-want +got):\n%s", diff)
	}
}

// FuzzReadFile checks that ReadFile survives arbitrary contents and that
// whatever it accepts survives a write and a read unchanged.
func FuzzReadFile(f *testing.F) {
	f.Add([]byte(`{"schema":"paddock.secrets","version":1,"secrets":{"a":{"nonce":"AAAAAAAAAAAAAAAA","ciphertext":"AA=="}}}`))
	f.Add([]byte(`{"schema":"paddock.secrets","version":2,"secrets":{}}`))
	f.Add([]byte(`{"schema":"paddock.secrets","version":1,"secrets":null}`))
	f.Add([]byte(`{"schema":"paddock.secrets","version":1,"secrets":{"a":{}}}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "secrets.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := secretbox.ReadFile(path)
		if err != nil {
			return
		}
		if got.Schema != "paddock.secrets" || got.Version != 1 || got.Secrets == nil {
			t.Fatalf("ReadFile accepted %q as %+v", data, got)
		}
		path2 := filepath.Join(dir, "copy.json")
		if err := secretbox.WriteFile(path2, got); err != nil {
			t.Fatal(err)
		}
		again, err := secretbox.ReadFile(path2)
		if err != nil {
			t.Fatalf("ReadFile of rewritten %q: %v", data, err)
		}
		// encoding/json decodes "" and null alike; compare as JSON.
		want, _ := json.Marshal(got)
		have, _ := json.Marshal(again)
		if !bytes.Equal(want, have) {
			t.Fatalf("round trip changed %s to %s", want, have)
		}
	})
}
