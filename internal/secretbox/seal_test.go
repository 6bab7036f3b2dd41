package secretbox_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/paddockdev/paddock/internal/secretbox"
)

// testKey returns a fixed key that differs for each seed.
func testKey(seed byte) secretbox.Key {
	var k secretbox.Key
	for i := range k {
		k[i] = seed + byte(i)*7
	}
	return k
}

func TestSealOpen(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	tests := []struct {
		name      string
		plaintext []byte
	}{
		{"github/token", []byte("ghp_0123456789")},
		{"", []byte("empty name")},
		{"empty value", []byte{}},
		{"nil value", nil},
		{"binary", []byte{0, 1, 2, 0xff, 0xfe, 0}},
		{"with\x00nul", []byte("x")},
		{"large", big},
	}
	k := testKey(1)
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.name), func(t *testing.T) {
			s, err := secretbox.Seal(k, tt.name, tt.plaintext)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Nonce) != 12 {
				t.Errorf("nonce is %d bytes, want 12", len(s.Nonce))
			}
			if got, want := len(s.Ciphertext), len(tt.plaintext)+16; got != want {
				t.Errorf("ciphertext is %d bytes, want %d", got, want)
			}
			if len(tt.plaintext) >= 4 && bytes.Contains(s.Ciphertext, tt.plaintext) {
				t.Errorf("ciphertext contains the plaintext")
			}
			got, err := secretbox.Open(k, tt.name, s)
			if err != nil {
				t.Fatal(err)
			}
			// bytes.Equal first: cmp.Diff is slow on large slices.
			if !bytes.Equal(tt.plaintext, got) {
				t.Errorf("Open(Seal(x)) mismatch (-want +got):\n%s", cmp.Diff(tt.plaintext, got, cmpopts.EquateEmpty()))
			}
		})
	}
}

func TestSealFreshNonce(t *testing.T) {
	k := testKey(1)
	a, err := secretbox.Seal(k, "n", []byte("same value"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := secretbox.Seal(k, "n", []byte("same value"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Nonce, b.Nonce) || bytes.Equal(a.Ciphertext, b.Ciphertext) {
		t.Errorf("two seals of the same value share a nonce or ciphertext: %x %x", a.Nonce, b.Nonce)
	}
}

func TestOpenFails(t *testing.T) {
	k := testKey(1)
	sealed := func(name, value string) secretbox.Sealed {
		s, err := secretbox.Seal(k, name, []byte(value))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// modify returns a copy of s with f applied to copies of its fields.
	modify := func(s secretbox.Sealed, f func(*secretbox.Sealed)) secretbox.Sealed {
		s.Nonce = bytes.Clone(s.Nonce)
		s.Ciphertext = bytes.Clone(s.Ciphertext)
		f(&s)
		return s
	}
	a := sealed("a", "value of a")
	b := sealed("b", "value of b")
	tests := []struct {
		name   string
		key    secretbox.Key
		open   string // the name passed to Open
		sealed secretbox.Sealed
	}{
		{"wrong key", testKey(2), "a", a},
		{"zero key", secretbox.Key{}, "a", a},
		{"moved to another name", k, "b", a},
		{"other moved to this name", k, "a", b},
		{"name with NUL appended", k, "a\x00", a},
		{"empty name", k, "", a},
		{"flipped first ciphertext bit", k, "a", modify(a, func(s *secretbox.Sealed) { s.Ciphertext[0] ^= 1 })},
		{"flipped tag bit", k, "a", modify(a, func(s *secretbox.Sealed) { s.Ciphertext[len(s.Ciphertext)-1] ^= 0x80 })},
		{"flipped nonce bit", k, "a", modify(a, func(s *secretbox.Sealed) { s.Nonce[11] ^= 1 })},
		{"truncated", k, "a", modify(a, func(s *secretbox.Sealed) { s.Ciphertext = s.Ciphertext[:len(s.Ciphertext)-1] })},
		{"extended", k, "a", modify(a, func(s *secretbox.Sealed) { s.Ciphertext = append(s.Ciphertext, 0) })},
		{"shorter than a tag", k, "a", modify(a, func(s *secretbox.Sealed) { s.Ciphertext = s.Ciphertext[:15] })},
		{"empty ciphertext", k, "a", modify(a, func(s *secretbox.Sealed) { s.Ciphertext = nil })},
		{"short nonce", k, "a", modify(a, func(s *secretbox.Sealed) { s.Nonce = s.Nonce[:11] })},
		{"long nonce", k, "a", modify(a, func(s *secretbox.Sealed) { s.Nonce = append(s.Nonce, 0) })},
		{"no nonce", k, "a", modify(a, func(s *secretbox.Sealed) { s.Nonce = nil })},
		{"nonce of another value", k, "a", modify(a, func(s *secretbox.Sealed) { s.Nonce = b.Nonce })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := secretbox.Open(tt.key, tt.open, tt.sealed)
			if !errors.Is(err, secretbox.ErrDecrypt) {
				t.Errorf("Open = %q, %v; want error %v", got, err, secretbox.ErrDecrypt)
			}
			if got != nil {
				t.Errorf("Open returned %q along with its error", got)
			}
		})
	}
	// The untouched values still open, so the failures above are the
	// modifications' doing.
	for name, s := range map[string]secretbox.Sealed{"a": a, "b": b} {
		if _, err := secretbox.Open(k, name, s); err != nil {
			t.Errorf("Open(%q) of the original: %v", name, err)
		}
	}
}

// FuzzOpen checks that Open survives arbitrary input and never
// authenticates a value that was not sealed.
func FuzzOpen(f *testing.F) {
	// A random key per process: each fuzzing worker seals its own genuine
	// value, which must not open in another worker.
	var k secretbox.Key
	rand.Read(k[:])
	s, err := secretbox.Seal(k, "a", []byte("value"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add("a", s.Nonce, s.Ciphertext[:len(s.Ciphertext)-1])
	f.Add("b", s.Nonce, s.Ciphertext)
	f.Add("", []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, name string, nonce, ciphertext []byte) {
		if name == "a" && bytes.Equal(nonce, s.Nonce) && bytes.Equal(ciphertext, s.Ciphertext) {
			t.Skip() // the genuine value
		}
		got, err := secretbox.Open(k, name, secretbox.Sealed{Nonce: nonce, Ciphertext: ciphertext})
		if !errors.Is(err, secretbox.ErrDecrypt) || got != nil {
			t.Fatalf("Open = %q, %v; want error %v", got, err, secretbox.ErrDecrypt)
		}
	})
}

func BenchmarkSeal(b *testing.B) {
	k := testKey(1)
	value := bytes.Repeat([]byte("x"), 64)
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := secretbox.Seal(k, "github/token", value); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	k := testKey(1)
	value := bytes.Repeat([]byte("x"), 64)
	s, err := secretbox.Seal(k, "github/token", value)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := secretbox.Open(k, "github/token", s); err != nil {
			b.Fatal(err)
		}
	}
}
