package mask

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCore checks the claim in core's comment: the run it returns appears in
// the base64 of any blob holding the secret at that alignment, whatever the
// neighbouring bytes.
func TestCore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}
	for _, n := range []int{6, 7, 8, 9, 10, 11, 40} {
		secret := randBytes(n)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
			for shift := range 3 {
				c := core(enc.WithPadding(base64.NoPadding), shift, secret)
				for _, prefix := range []int{shift, shift + 3, shift + 6} {
					for suffix := range 4 {
						t.Run(fmt.Sprintf("len=%d/shift=%d/prefix=%d/suffix=%d", n, shift, prefix, suffix), func(t *testing.T) {
							blob := append(append(randBytes(prefix), secret...), randBytes(suffix)...)
							e := enc.EncodeToString(blob)
							if c != "" && !strings.Contains(e, c) {
								t.Errorf("core %q not in %q", c, e)
							}
							if c == "" && n >= 8 {
								t.Errorf("core is empty for a %d-byte secret", n)
							}
						})
					}
				}
			}
		}
	}
}

// replacer returns a strings.Replacer over the Masker's patterns, longest
// first: an independent implementation of the same leftmost-longest
// replacement that the matcher performs.
func replacer(m *Masker) *strings.Replacer {
	var oldnew []string
	for _, p := range m.m.Load().patterns {
		oldnew = append(oldnew, p, Redacted)
	}
	return strings.NewReplacer(oldnew...)
}

func TestMatcherAgreesWithReplacer(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
	}{
		{"empty text", []string{"abcdef"}, ""},
		{"shorter than window", []string{"abcdef"}, "abcde"},
		{"exact", []string{"abcdef"}, "abcdef"},
		{"at end", []string{"abcdef"}, "xxabcdef"},
		{"truncated at end", []string{"abcdefgh"}, "xxabcdefg"},
		{"overlapping occurrences", []string{"abcabc"}, "abcabcabcabc"},
		{"nested", []string{"abcdef", "abcdefgh", "zabcdefghz"}, "abcdefg zabcdefghz abcdefgh"},
		{"shared prefix", []string{"prefix-one", "prefix-two-longer"}, "prefix-two prefix-one prefix-two-longer"},
		{"overlapping secrets", []string{"123456789", "0123456"}, "0123456789"},
		{"base64 and raw", []string{"hunter2!"}, "aHVudGVyMiE= hunter2! aHVudGVy hunter2%21"},
		{"binary", []string{"\x00\x00\x00\x00\x00\x00"}, "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Masker
			for _, s := range tt.secrets {
				m.Add(s)
			}
			want := replacer(&m).Replace(tt.in)
			if got := m.Mask(tt.in); got != want {
				t.Errorf("Mask(%q) = %q, strings.Replacer gives %q", tt.in, got, want)
			}
			if got := string(m.MaskBytes([]byte(tt.in))); got != want {
				t.Errorf("MaskBytes(%q) = %q, strings.Replacer gives %q", tt.in, got, want)
			}
			if got, want := m.Contains([]byte(tt.in)), want != tt.in; got != want {
				t.Errorf("Contains(%q) = %v, want %v", tt.in, got, want)
			}
		})
	}
}

// FuzzMatcher checks the matcher against strings.Replacer.
func FuzzMatcher(f *testing.F) {
	f.Add("abcdef", "abcdefgh", "xxabcdefgabcdefghabcdef")
	f.Add("123456789", "0123456", "0123456789")
	f.Add("hunter2!", "hunter2!!", "aHVudGVyMiE= hunter2!! aHVudGVy")
	f.Fuzz(func(t *testing.T, s1, s2, text string) {
		var m Masker
		m.Add(s1)
		m.Add(s2)
		if m.m.Load() == nil {
			t.Skip()
		}
		want := replacer(&m).Replace(text)
		if got := m.Mask(text); got != want {
			t.Fatalf("Mask(%q) = %q, strings.Replacer gives %q", text, got, want)
		}
		if got := string(m.MaskBytes([]byte(text))); got != want {
			t.Fatalf("MaskBytes(%q) = %q, strings.Replacer gives %q", text, got, want)
		}
	})
}
