package secretbox_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/internal/secretbox"
)

// allBase64Key has 0xfb bytes, whose base64 uses both characters that
// differ between the standard and URL alphabets: "+/v7+/v7…".
var allBase64Key = func() secretbox.Key {
	var k secretbox.Key
	for i := range k {
		k[i] = 0xfb
	}
	return k
}()

func TestParseKey(t *testing.T) {
	raw := allBase64Key[:]
	tests := []struct {
		name string
		in   string
	}{
		{"std padded", base64.StdEncoding.EncodeToString(raw)},
		{"std unpadded", base64.RawStdEncoding.EncodeToString(raw)},
		{"url padded", base64.URLEncoding.EncodeToString(raw)},
		{"url unpadded", base64.RawURLEncoding.EncodeToString(raw)},
		{"trailing newline", base64.StdEncoding.EncodeToString(raw) + "\n"},
		{"surrounding space", " \t" + base64.RawURLEncoding.EncodeToString(raw) + "\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := secretbox.ParseKey(tt.in)
			if err != nil {
				t.Fatalf("ParseKey(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(allBase64Key[:], got[:]); diff != "" {
				t.Errorf("ParseKey(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseKeyErrors(t *testing.T) {
	raw := allBase64Key[:]
	std := base64.StdEncoding.EncodeToString(raw)
	tests := []struct {
		name string
		in   string
		want string // in the error
	}{
		{"empty", "", "empty"},
		{"white space", " \n", "empty"},
		{"not base64", "correct horse battery staple!", "base64"},
		{"16 bytes", base64.StdEncoding.EncodeToString(raw[:16]), "16 bytes"},
		{"33 bytes", base64.StdEncoding.EncodeToString(append(raw, 0xfb)), "33 bytes"},
		{"hex", fmt.Sprintf("%x", raw), "48 bytes"},
		{"mixed alphabets", strings.Replace(std, "/", "_", 1), "base64"},
		{"bad padding", std + "=", "base64"},
		{"padding missing one", strings.TrimSuffix(base64.StdEncoding.EncodeToString(raw[:31]), "=") + "=", "base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := secretbox.ParseKey(tt.in)
			if err == nil {
				t.Fatalf("ParseKey(%q) succeeded, want an error", tt.in)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("ParseKey(%q) = %q, want it to mention %q", tt.in, msg, tt.want)
			}
			if in := strings.TrimSpace(tt.in); in != "" && strings.Contains(msg, in) {
				t.Errorf("ParseKey error %q contains its input", msg)
			}
		})
	}
}

// keyErrorRE matches every error ParseKey may return; none has room for
// the input.
var keyErrorRE = regexp.MustCompile(`^secretbox: invalid key: (empty|not valid base64|\d+ bytes after base64 decoding, want 32)$`)

func FuzzParseKey(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString(allBase64Key[:]))
	f.Add(base64.RawURLEncoding.EncodeToString(allBase64Key[:]))
	f.Add("correct horse battery staple!")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := secretbox.ParseKey(s)
		if err != nil {
			if !keyErrorRE.MatchString(err.Error()) {
				t.Fatalf("ParseKey(%q): unexpected error text %q", s, err)
			}
			return
		}
		// A key that parses round-trips through the key file encoding.
		k2, err := secretbox.ParseKey(base64.StdEncoding.EncodeToString(k[:]))
		if err != nil || k2 != k {
			t.Fatalf("ParseKey(%q) = %x, which does not round-trip: %x, %v", s, k[:], k2[:], err)
		}
	})
}

func TestKeyFormat(t *testing.T) {
	k := allBase64Key
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%d", "%q"} {
		t.Run(verb, func(t *testing.T) {
			got := fmt.Sprintf(verb, k)
			if strings.Contains(strings.ToLower(got), "fb") || strings.Contains(got, "251") || strings.Contains(got, "+/v7") {
				t.Errorf("Sprintf(%q, key) = %q, which shows the key", verb, got)
			}
		})
	}
}

// writeKeyFile writes a key file with exactly the given mode.
func writeKeyFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // undo the umask
		t.Fatal(err)
	}
}

func TestLoadKeyFile(t *testing.T) {
	line := base64.StdEncoding.EncodeToString(allBase64Key[:]) + "\n"
	tests := []struct {
		name string
		mode fs.FileMode
	}{
		{"0600", 0o600},
		{"0400", 0o400},
		{"0700", 0o700},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			writeKeyFile(t, path, line, tt.mode)
			for _, create := range []bool{false, true} {
				k, err := secretbox.LoadKeyFile(path, create)
				if err != nil {
					t.Fatalf("LoadKeyFile(create=%v): %v", create, err)
				}
				if k != allBase64Key {
					t.Errorf("LoadKeyFile(create=%v) returned the wrong key", create)
				}
			}
		})
	}
}

func TestLoadKeyFileRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix permission bits")
	}
	line := base64.StdEncoding.EncodeToString(allBase64Key[:]) + "\n"
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string // in the error, after replacing PATH with the path
	}{
		{"0644", func(t *testing.T, path string) { writeKeyFile(t, path, line, 0o644) }, "mode 0644, which gives other users access; fix it with: chmod 600 PATH"},
		{"0640", func(t *testing.T, path string) { writeKeyFile(t, path, line, 0o640) }, "chmod 600 PATH"},
		{"0604", func(t *testing.T, path string) { writeKeyFile(t, path, line, 0o604) }, "chmod 600 PATH"},
		{"0620", func(t *testing.T, path string) { writeKeyFile(t, path, line, 0o620) }, "chmod 600 PATH"},
		{"0601", func(t *testing.T, path string) { writeKeyFile(t, path, line, 0o601) }, "chmod 600 PATH"},
		{"directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "key file PATH is not a regular file"},
		{"symlink to 0644", func(t *testing.T, path string) {
			target := path + ".target"
			writeKeyFile(t, target, line, 0o644)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, "chmod 600 PATH"},
		{"invalid content", func(t *testing.T, path string) { writeKeyFile(t, path, "not a key: hunter2!\n", 0o600) }, "key file PATH does not hold a valid key: not valid base64"},
		{"short key", func(t *testing.T, path string) {
			writeKeyFile(t, path, base64.StdEncoding.EncodeToString(allBase64Key[:16]), 0o600)
		}, "16 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			tt.setup(t, path)
			before, _ := os.ReadFile(path)
			for _, create := range []bool{false, true} {
				_, err := secretbox.LoadKeyFile(path, create)
				if err == nil {
					t.Fatalf("LoadKeyFile(create=%v) succeeded, want an error", create)
				}
				if want := strings.ReplaceAll(tt.want, "PATH", path); !strings.Contains(err.Error(), want) {
					t.Errorf("LoadKeyFile(create=%v) = %q, want it to contain %q", create, err, want)
				}
				if len(before) > 0 && strings.Contains(err.Error(), strings.TrimSpace(string(before))) {
					t.Errorf("error %q shows the file's contents", err)
				}
			}
			// Refusing must not replace the file.
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Errorf("LoadKeyFile changed the file from %q to %q", before, after)
			}
		})
	}
}

func TestLoadKeyFileQuotesPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix permission bits")
	}
	path := filepath.Join(t.TempDir(), "my keys", "it's")
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	writeKeyFile(t, path, base64.StdEncoding.EncodeToString(allBase64Key[:]), 0o644)
	_, err := secretbox.LoadKeyFile(path, false)
	want := "chmod 600 '" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("LoadKeyFile = %v, want it to end with %q", err, want)
	}
}

func TestLoadKeyFileCreate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")

	if _, err := secretbox.LoadKeyFile(path, false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadKeyFile(missing, create=false) = %v, want fs.ErrNotExist", err)
	}
	k1, err := secretbox.LoadKeyFile(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if k1 == (secretbox.Key{}) {
		t.Errorf("created key is all zeros")
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode() != 0o600 {
		t.Errorf("created key file has mode %v, want %v", fi.Mode(), fs.FileMode(0o600))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := base64.StdEncoding.EncodeToString(k1[:]) + "\n"; string(data) != want {
		t.Errorf("key file holds %q, want %q", data, want)
	}
	for _, create := range []bool{false, true} {
		k2, err := secretbox.LoadKeyFile(path, create)
		if err != nil {
			t.Fatal(err)
		}
		if k2 != k1 {
			t.Errorf("LoadKeyFile(create=%v) after creating returned a different key", create)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries, want just the key file", len(entries))
	}
	// A second key file gets a different key.
	k3, err := secretbox.LoadKeyFile(filepath.Join(dir, "key2"), true)
	if err != nil {
		t.Fatal(err)
	}
	if k3 == k1 {
		t.Errorf("two created key files hold the same key")
	}
}

func TestLoadKeyFileCreateMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "key")
	if _, err := secretbox.LoadKeyFile(path, true); err == nil {
		t.Errorf("LoadKeyFile(%q, true) succeeded, want an error", path)
	}
}

// TestLoadKeyFileCreateConcurrent creates one key file from many
// goroutines at once; all must return the same key.
func TestLoadKeyFileCreateConcurrent(t *testing.T) {
	for i := range 5 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "key")
			const n = 8
			keys := make([]secretbox.Key, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for j := range n {
				wg.Go(func() { keys[j], errs[j] = secretbox.LoadKeyFile(path, true) })
			}
			wg.Wait()
			for j := range n {
				if errs[j] != nil {
					t.Fatalf("goroutine %d: %v", j, errs[j])
				}
				if keys[j] != keys[0] {
					t.Fatalf("goroutines 0 and %d got different keys", j)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want just the key file", len(entries))
			}
		})
	}
}
