package secretbox

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// A Key is an AES-256 key.
//
// Formatting a Key with the fmt package, with any verb, prints a
// placeholder rather than the key.
type Key [32]byte

// Format implements fmt.Formatter so that a Key passed to fmt or a logger
// by mistake does not leak.
func (Key) Format(f fmt.State, verb rune) {
	io.WriteString(f, "secretbox.Key([REDACTED])")
}

// ParseKey decodes a key given as base64 text, as in an environment
// variable. It accepts the standard and URL alphabets, padded or not, and
// ignores surrounding white space. The text must decode to exactly 32
// bytes.
//
// The error never contains s or any part of it.
func ParseKey(s string) (Key, error) {
	k, reason := parseKey(s)
	if reason != "" {
		return Key{}, errors.New("secretbox: invalid key: " + reason)
	}
	return k, nil
}

// parseKey returns the key s holds or, if it holds none, why not. The
// reason is safe to show: it never contains part of s.
func parseKey(s string) (Key, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Key{}, "empty"
	}
	enc := base64.StdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(s, "=") {
		enc = enc.WithPadding(base64.NoPadding)
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		// Not wrapped: a base64.CorruptInputError is only an offset, but
		// nothing about the input is useful to the reader either.
		return Key{}, "not valid base64"
	}
	var k Key
	if len(b) != len(k) {
		return Key{}, fmt.Sprintf("%d bytes after base64 decoding, want %d", len(b), len(k))
	}
	copy(k[:], b)
	return k, ""
}

// LoadKeyFile reads the key held in the file at path, as standard base64 on
// one line.
//
// It refuses a file that is not a regular file (after following symlinks)
// or whose mode grants any permission to group or others; the error names
// the path and the chmod command that fixes it.
//
// If the file does not exist and create is true, LoadKeyFile creates it,
// with mode 0600, holding a new random key, and makes it durable before
// returning. The directory must already exist. The file appears whole or
// not at all, and if several processes create it at once they all return
// the same key. If the file does not exist and create is false, the error
// satisfies errors.Is(err, fs.ErrNotExist).
func LoadKeyFile(path string, create bool) (Key, error) {
	k, err := readKeyFile(path)
	if create && errors.Is(err, fs.ErrNotExist) {
		k, err = createKeyFile(path)
		if errors.Is(err, fs.ErrExist) {
			// Another process created it first; use its key.
			k, err = readKeyFile(path)
		}
	}
	return k, err
}

func readKeyFile(path string) (Key, error) {
	// Check the mode before opening: opening a FIFO would block.
	fi, err := os.Stat(path)
	if err != nil {
		return Key{}, fmt.Errorf("secretbox: reading key file: %w", err)
	}
	if err := checkKeyMode(path, fi); err != nil {
		return Key{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Key{}, fmt.Errorf("secretbox: reading key file: %w", err)
	}
	defer f.Close()
	// Check again what was opened, in case the file was replaced.
	if fi, err = f.Stat(); err != nil {
		return Key{}, fmt.Errorf("secretbox: reading key file: %w", err)
	}
	if err := checkKeyMode(path, fi); err != nil {
		return Key{}, err
	}
	// A key is 45 bytes; read a little more so that a larger file is
	// reported as invalid rather than silently truncated.
	data, err := io.ReadAll(io.LimitReader(f, 1024))
	if err != nil {
		return Key{}, fmt.Errorf("secretbox: reading key file: %w", err)
	}
	k, reason := parseKey(string(data))
	if reason != "" {
		return Key{}, fmt.Errorf("secretbox: key file %s does not hold a valid key: %s", path, reason)
	}
	return k, nil
}

func checkKeyMode(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("secretbox: key file %s is not a regular file (mode %v)", path, fi.Mode())
	}
	// Windows reports synthetic permission bits that mean nothing.
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("secretbox: key file %s has mode %#o, which gives other users access; fix it with: chmod 600 %s",
			path, fi.Mode().Perm(), shellQuote(path))
	}
	return nil
}

func createKeyFile(path string) (Key, error) {
	var k Key
	rand.Read(k[:]) // never fails: it crashes the program instead
	line := base64.StdEncoding.EncodeToString(k[:]) + "\n"
	dir := filepath.Dir(path)
	tmp, err := writeTemp(dir, filepath.Base(path), []byte(line))
	if err != nil {
		return Key{}, fmt.Errorf("secretbox: creating key file: %w", err)
	}
	// Link publishes the complete file only if path does not exist yet, so
	// a concurrent creator either reads our whole file or fails here with
	// fs.ErrExist and reads its rival's.
	err = os.Link(tmp, path)
	os.Remove(tmp)
	if err != nil {
		return Key{}, fmt.Errorf("secretbox: creating key file: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return Key{}, fmt.Errorf("secretbox: creating key file: %w", err)
	}
	return k, nil
}

// shellQuote quotes s for a POSIX shell if it needs quoting.
func shellQuote(s string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("/._-+,:@%", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
