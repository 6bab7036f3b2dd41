package mask_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/paddockdev/paddock/internal/mask"
)

// encodings are the base64 alphabets the package promises to mask.
var encodings = []struct {
	name string
	enc  *base64.Encoding
}{
	{"std", base64.StdEncoding},
	{"url", base64.URLEncoding},
	{"rawstd", base64.RawStdEncoding},
	{"rawurl", base64.RawURLEncoding},
}

func TestMaskForms(t *testing.T) {
	secrets := []string{
		"hunter2!",              // 8 bytes: padded base64 differs from raw
		"p@ss w/rd+&=?",         // needs URL escaping, differently per form
		"s3cr3t-token_ABC.xyz~", // 21 bytes: no base64 padding
		"üñíçødé/ß",             // multi-byte UTF-8
	}
	forms := []struct {
		name   string
		encode func(string) string
	}{
		{"raw", func(s string) string { return s }},
		{"base64std", b64(base64.StdEncoding)},
		{"base64url", b64(base64.URLEncoding)},
		{"base64rawstd", b64(base64.RawStdEncoding)},
		{"base64rawurl", b64(base64.RawURLEncoding)},
		{"queryescape", url.QueryEscape},
		{"pathescape", url.PathEscape},
	}
	for _, secret := range secrets {
		var m mask.Masker
		m.Add(secret)
		for _, f := range forms {
			t.Run(fmt.Sprintf("%s/%s", f.name, secret), func(t *testing.T) {
				form := f.encode(secret)
				in := "before " + form + " after\n"
				if !m.Contains([]byte(in)) {
					t.Errorf("Contains(%q) = false, want true", in)
				}
				got := m.Mask(in)
				want := "before " + mask.Redacted + " after\n"
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Mask(%q) mismatch (-want +got):\n%s", in, diff)
				}
				if m.Contains([]byte(got)) {
					t.Errorf("Contains(Mask(%q)) = true, want false", in)
				}
			})
		}
	}
}

func b64(enc *base64.Encoding) func(string) string {
	return func(s string) string { return enc.EncodeToString([]byte(s)) }
}

// masked reports whether the Masker guarantees to mask a secret of n bytes
// starting shift bytes past a 3-byte boundary inside a longer base64 blob.
// See the package documentation: 6- and 7-byte secrets have too few
// alignment-independent characters at some shifts.
func masked(n, shift int) bool {
	return n >= 8 || shift == 0 || (n == 7 && shift == 2)
}

func TestMaskBase64Embedded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return b
	}
	secrets := [][]byte{
		[]byte("ghp_0123456789abcdefghij"), // printable, 24 bytes
		randBytes(6),
		randBytes(7),
		randBytes(8),
		randBytes(9),
		randBytes(10),
		randBytes(32),
	}
	for _, secret := range secrets {
		var m mask.Masker
		m.Add(string(secret))
		for _, e := range encodings {
			for prefix := range 6 {
				if !masked(len(secret), prefix%3) {
					continue
				}
				for suffix := range 6 {
					name := fmt.Sprintf("len=%d/%s/prefix=%d/suffix=%d", len(secret), e.name, prefix, suffix)
					t.Run(name, func(t *testing.T) {
						var blob []byte
						blob = append(blob, randBytes(prefix)...)
						blob = append(blob, secret...)
						blob = append(blob, randBytes(suffix)...)
						in := "Authorization: Basic " + e.enc.EncodeToString(blob) + "\n"
						if !decodes(in, e.enc, secret) {
							t.Fatalf("test is broken: %q does not decode to the secret", in)
						}
						got := m.Mask(in)
						if decodes(got, e.enc, secret) {
							t.Errorf("Mask(%q) = %q, which still decodes to the secret", in, got)
						}
					})
				}
			}
		}
	}
}

// decodes reports whether base64-decoding s, starting at any character of
// any run of enc's alphabet, yields secret.
func decodes(s string, enc *base64.Encoding, secret []byte) bool {
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	if enc == base64.StdEncoding || enc == base64.RawStdEncoding {
		alphabet += "+/"
	} else {
		alphabet += "-_"
	}
	raw := enc.WithPadding(base64.NoPadding)
	notAlpha := func(r rune) bool { return !strings.ContainsRune(alphabet, r) }
	for _, run := range strings.FieldsFunc(s, notAlpha) {
		// Decoding from character i+4 yields the bytes decoded from i less
		// the first 3, so starting at 0..3 covers every offset.
		for i := range min(4, len(run)) {
			chunk := run[i:]
			if len(chunk)%4 == 1 {
				chunk = chunk[:len(chunk)-1]
			}
			b, err := raw.DecodeString(chunk)
			if err == nil && bytes.Contains(b, secret) {
				return true
			}
		}
	}
	return false
}

func TestAddIgnoresShort(t *testing.T) {
	tests := []struct {
		secret string
		want   string
	}{
		{"", "key= a abcde abcdef."},
		{"a", "key= a abcde abcdef."},
		{"abcde", "key= a abcde abcdef."},
		{"abcdef", "key= a abcde [REDACTED]."},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("len=%d", len(tt.secret)), func(t *testing.T) {
			var m mask.Masker
			m.Add(tt.secret)
			in := "key= a abcde abcdef."
			if diff := cmp.Diff(tt.want, m.Mask(in)); diff != "" {
				t.Errorf("Mask(%q) mismatch (-want +got):\n%s", in, diff)
			}
			if got, want := m.Contains([]byte(in)), tt.want != in; got != want {
				t.Errorf("Contains(%q) = %v, want %v", in, got, want)
			}
		})
	}
}

func TestMaskLongestFirst(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{
			name:    "short added first",
			secrets: []string{"password", "password123"},
			in:      "x password123 y password z",
			want:    "x [REDACTED] y [REDACTED] z",
		},
		{
			name:    "long added first",
			secrets: []string{"password123", "password"},
			in:      "x password123 y password z",
			want:    "x [REDACTED] y [REDACTED] z",
		},
		{
			name:    "inner secret in the middle",
			secrets: []string{"secret", "my-secret-value"},
			in:      "my-secret-value",
			want:    "[REDACTED]",
		},
		{
			name:    "adjacent occurrences",
			secrets: []string{"abcdef"},
			in:      "abcdefabcdef",
			want:    "[REDACTED][REDACTED]",
		},
		{
			name:    "same secret twice",
			secrets: []string{"abcdef", "abcdef"},
			in:      "-abcdef-",
			want:    "-[REDACTED]-",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m mask.Masker
			for _, s := range tt.secrets {
				m.Add(s)
			}
			if diff := cmp.Diff(tt.want, m.Mask(tt.in)); diff != "" {
				t.Errorf("Mask(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestZeroValue(t *testing.T) {
	var m mask.Masker
	in := "nothing registered: hunter2 aHVudGVyMg=="
	if got := m.Mask(in); got != in {
		t.Errorf("Mask(%q) = %q, want it unchanged", in, got)
	}
	b := []byte(in)
	if got := m.MaskBytes(b); !bytes.Equal(got, b) {
		t.Errorf("MaskBytes(%q) = %q, want it unchanged", b, got)
	}
	if m.Contains(b) {
		t.Errorf("Contains(%q) = true, want false", b)
	}
}

func TestMaskBytes(t *testing.T) {
	var m mask.Masker
	m.Add("hunter2!")
	tests := []struct {
		name     string
		in       string
		want     string
		sameBack bool // whether the input slice itself is returned
	}{
		{"no match", "all clear", "all clear", true},
		{"raw", "pw=hunter2!", "pw=[REDACTED]", false},
		{"base64", "pw=aHVudGVyMiE=", "pw=[REDACTED]", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			got := m.MaskBytes(in)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("MaskBytes(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if string(in) != tt.in {
				t.Errorf("MaskBytes modified its input to %q", in)
			}
			if same := &got[0] == &in[0]; same != tt.sameBack {
				t.Errorf("MaskBytes returned its input slice: %v, want %v", same, tt.sameBack)
			}
		})
	}
}

// TestConcurrent runs Add and Mask from many goroutines; run it with -race.
// Each goroutine checks that its own secrets are masked as soon as Add
// returns, which fails if a concurrent Add loses another's update.
func TestConcurrent(t *testing.T) {
	var m mask.Masker
	const writers, perWriter = 8, 16
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				secret := fmt.Sprintf("secret-%02d-%02d", w, i)
				m.Add(secret)
				in := "value " + secret + " end"
				if got, want := m.Mask(in), "value [REDACTED] end"; got != want {
					t.Errorf("after Add(%q): Mask(%q) = %q, want %q", secret, in, got, want)
				}
			}
		})
		wg.Go(func() {
			for i := range perWriter {
				m.Mask(strings.Repeat("secret-00-00 ", i))
				m.MaskBytes([]byte("secret-01-01"))
				m.Contains([]byte("secret-02-02"))
			}
		})
	}
	wg.Wait()
	for w := range writers {
		for i := range perWriter {
			secret := fmt.Sprintf("secret-%02d-%02d", w, i)
			if got := m.Mask(secret); got != mask.Redacted {
				t.Errorf("Mask(%q) = %q after all Adds, want %q", secret, got, mask.Redacted)
			}
		}
	}
}

// FuzzMask checks that a registered secret surrounded by arbitrary text
// never survives masking.
func FuzzMask(f *testing.F) {
	f.Add("hunter2!", "user=admin password=")
	f.Add("abcabcabc", "abcabc")
	f.Add("password123", "password")
	f.Add("]abcdef", "abcdef")
	f.Add("x[REDACTED]y", "x")
	f.Fuzz(func(t *testing.T, secret, text string) {
		if len(secret) < mask.MinLen {
			t.Skip()
		}
		var m mask.Masker
		m.Add(secret)
		in := text + secret + text
		got := m.Mask(in)
		// The secret may reappear made partly of the marker's own
		// characters (for secret "]abcdef" and text "abcdef", the output is
		// "abcdef[REDACTED]abcdef"); that reveals nothing. Any occurrence
		// that does not overlap a marker is a leak.
		for i := 0; ; i++ {
			j := strings.Index(got[i:], secret)
			if j < 0 {
				break
			}
			i += j
			if !overlapsMarker(got, i, i+len(secret)) {
				t.Fatalf("Mask(%q) = %q: secret %q survives at byte %d", in, got, secret, i)
			}
		}
	})
}

// overlapsMarker reports whether s[lo:hi] overlaps an occurrence of
// mask.Redacted in s.
func overlapsMarker(s string, lo, hi int) bool {
	for i := 0; ; i++ {
		j := strings.Index(s[i:], mask.Redacted)
		if j < 0 {
			return false
		}
		i += j
		if i < hi && i+len(mask.Redacted) > lo {
			return true
		}
	}
}

// FuzzMaskBase64 checks that a registered secret of 8 bytes or more, inside
// arbitrary bytes encoded as base64, cannot be decoded from the masked text.
func FuzzMaskBase64(f *testing.F) {
	f.Add([]byte("hunter2!"), []byte("user:"), []byte("\n"))
	f.Add([]byte("0123456789abcdef"), []byte("x"), []byte(""))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00"), []byte("\x00\x00"), []byte("\x00"))
	f.Fuzz(func(t *testing.T, secret, prefix, suffix []byte) {
		if len(secret) < 8 || len(secret)+len(prefix)+len(suffix) > 4096 {
			t.Skip()
		}
		var m mask.Masker
		m.Add(string(secret))
		blob := append(append(append([]byte(nil), prefix...), secret...), suffix...)
		for _, e := range encodings {
			in := e.enc.EncodeToString(blob)
			got := m.Mask(in)
			if decodes(got, e.enc, secret) {
				t.Fatalf("%s: Mask(%q) = %q, which still decodes to the secret %q", e.name, in, got, secret)
			}
		}
	})
}

func TestNoAllocationWhenClean(t *testing.T) {
	var m mask.Masker
	for i := range 10 {
		m.Add(fmt.Sprintf("secret-number-%d", i))
	}
	line := strings.Repeat("an ordinary log line, base64 c2VjcmV0LW51bWJlcg== 0123456789 ", 64)
	b := []byte(line)
	tests := []struct {
		name string
		f    func()
	}{
		{"Mask", func() { m.Mask(line) }},
		{"MaskBytes", func() { m.MaskBytes(b) }},
		{"Contains", func() { m.Contains(b) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.f); n != 0 {
				t.Errorf("%s allocates %v times per call on a line with no secret, want 0", tt.name, n)
			}
		})
	}
}
