package mask

import (
	"cmp"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Redacted replaces every masked occurrence of a secret.
const Redacted = "[REDACTED]"

// MinLen is the length in bytes of the shortest secret [Masker.Add] accepts.
// Shorter values are ignored: masking every occurrence of a 1–5 byte string
// would make logs unreadable while hiding little of value.
const MinLen = 6

// minCore is the shortest alignment-independent base64 run that is masked.
// Eight characters carry 48 bits, so a false match in unrelated base64 is
// vanishingly rare.
const minCore = 8

// A Masker replaces registered secrets, and their common encodings, with
// [Redacted].
//
// The zero value is ready to use and masks nothing. A Masker is safe for
// concurrent use and must not be copied after first use.
type Masker struct {
	mu sync.Mutex // serializes Add
	// m is replaced whole by Add, so readers need no lock. Nil until the
	// first secret is added.
	m atomic.Pointer[matcher]
}

// Add registers secret so that later calls to Mask, MaskBytes and Contains
// find it, raw or in any of the encodings listed in the package
// documentation.
//
// Secrets shorter than [MinLen] bytes, including the empty string, are
// ignored. Adding a secret twice has no further effect.
//
// Add rebuilds the Masker's matcher, which takes time proportional to the
// total length of all secrets registered so far; it is meant to be called
// once per secret, not once per log line.
func (m *Masker) Add(secret string) {
	if len(secret) < MinLen {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()

	old := m.m.Load()
	if old != nil {
		if _, ok := old.secrets[secret]; ok {
			return
		}
	}
	secrets := map[string]struct{}{secret: {}}
	set := make(map[string]struct{})
	if old != nil {
		for s := range old.secrets {
			secrets[s] = struct{}{}
		}
		for _, p := range old.patterns {
			set[p] = struct{}{}
		}
	}
	for _, p := range forms(secret) {
		set[p] = struct{}{}
	}
	m.m.Store(newMatcher(secrets, set))
}

// Mask returns s with every occurrence of every registered form of every
// registered secret replaced by [Redacted]. When nothing matches it returns
// s without allocating.
func (m *Masker) Mask(s string) string {
	mt := m.m.Load()
	if mt == nil {
		return s
	}
	i, n := find(mt, s, 0)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i >= 0 {
		b.WriteString(s[last:i])
		b.WriteString(Redacted)
		last = i + n
		i, n = find(mt, s, last)
	}
	b.WriteString(s[last:])
	return b.String()
}

// MaskBytes is like [Masker.Mask] for a byte slice. It never modifies b: it
// returns b itself when nothing was masked and a new slice otherwise.
func (m *Masker) MaskBytes(b []byte) []byte {
	mt := m.m.Load()
	if mt == nil {
		return b
	}
	i, n := find(mt, b, 0)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	last := 0
	for i >= 0 {
		out = append(out, b[last:i]...)
		out = append(out, Redacted...)
		last = i + n
		i, n = find(mt, b, last)
	}
	return append(out, b[last:]...)
}

// Contains reports whether b holds any form of any registered secret that
// [Masker.Mask] would replace. It is meant for tests and audits that scan
// output for leaks.
func (m *Masker) Contains(b []byte) bool {
	mt := m.m.Load()
	if mt == nil {
		return false
	}
	i, _ := find(mt, b, 0)
	return i >= 0
}

// forms returns every string that masks secret, possibly with duplicates.
func forms(secret string) []string {
	b := []byte(secret)
	out := []string{
		secret,
		base64.StdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		url.QueryEscape(secret),
		url.PathEscape(secret),
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for shift := range 3 {
			if c := core(enc, shift, b); len(c) >= minCore {
				out = append(out, c)
			}
		}
	}
	return out
}

// core returns the base64 characters that encode secret, and nothing else,
// when secret starts shift bytes (0, 1 or 2) past a 3-byte boundary of a
// longer base64-encoded blob.
//
// Base64 turns each 3-byte group into 4 characters of 6 bits each. Inside a
// blob the secret may start at any byte, so the characters that encode it
// depend on its offset modulo 3 and on its neighbours. Encoding shift filler
// bytes followed by the secret reproduces the blob's characters from the
// 3-byte boundary before the secret; of those:
//
//   - the first ceil(8*shift/6) characters (0, 2 or 3) hold bits of the
//     filler, that is of whatever precedes the secret in the blob;
//   - the characters after the last complete 3-byte group hold bits of
//     whatever follows the secret, or padding.
//
// Every character in between depends only on the secret, so that run
// appears in any blob holding the secret at this alignment. Masking it
// leaves at most 4 bits of the secret's first byte and its last two bytes
// decodable. Runs shorter than minCore are not returned: they would match
// unrelated base64 too often to be worth masking.
func core(enc *base64.Encoding, shift int, secret []byte) string {
	buf := make([]byte, shift+len(secret))
	copy(buf[shift:], secret)
	e := enc.EncodeToString(buf)
	start := (8*shift + 5) / 6
	end := 4 * (len(buf) / 3)
	if end-start < minCore {
		return ""
	}
	return e[start:end]
}

// window is the number of leading bytes of each pattern that the matcher
// indexes. Every pattern is at least this long: raw secrets and their URL
// escapes are at least MinLen bytes, base64 forms at least minCore.
const window = MinLen

// filterBits is log2 of the number of bits in matcher.filter.
const filterBits = 16

// A matcher finds the leftmost, then longest, occurrence of any of a set of
// patterns. It is immutable once built.
//
// It slides a window of the next 6 bytes along the text and tests a hash of
// it against a bit filter of the patterns' first 6 bytes; only on a hit does
// it compare whole patterns. Text that holds no secret thus costs a few
// instructions per byte and no allocation. (strings.Replacer has the same
// leftmost-first semantics but walks a trie at nearly every position once
// the base64 forms cover most of the alphabet, which is several times
// slower; see BenchmarkMask.)
type matcher struct {
	secrets  map[string]struct{}
	patterns []string // longest first, then lexically
	// byPrefix maps the first window bytes of each pattern, as loaded by
	// key, to the patterns that start with them, longest first.
	byPrefix map[uint64][]string
	filter   [1 << filterBits / 64]uint64
}

func newMatcher(secrets, set map[string]struct{}) *matcher {
	mt := &matcher{
		secrets:  secrets,
		patterns: make([]string, 0, len(set)),
		byPrefix: make(map[uint64][]string),
	}
	for p := range set {
		mt.patterns = append(mt.patterns, p)
	}
	// At any position the first pattern that matches wins, so longest first
	// makes the longest match win: a secret that contains another
	// registered secret is masked whole, not left visible around the
	// shorter one's marker.
	slices.SortFunc(mt.patterns, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	for _, p := range mt.patterns {
		k := key(p)
		mt.byPrefix[k] = append(mt.byPrefix[k], p)
		h := hash(k)
		mt.filter[h/64] |= 1 << (h % 64)
	}
	return mt
}

// key packs the first window bytes of s into an integer, s[0] lowest.
func key(s string) uint64 {
	var k uint64
	for i := range window {
		k |= uint64(s[i]) << (8 * i)
	}
	return k
}

func hash(k uint64) uint64 {
	return (k * 0x9e3779b97f4a7c15) >> (64 - filterBits)
}

// find returns the position and length of the leftmost, then longest,
// pattern occurring in s at or after from; or -1, 0 if there is none.
func find[T string | []byte](mt *matcher, s T, from int) (int, int) {
	if len(s)-from < window {
		return -1, 0
	}
	// Before the iteration for position i, k holds s[i-1:i+window-1]; the
	// first iteration's s[from-1] is a zero byte that shifts out at once.
	var k uint64
	for j := range window - 1 {
		k |= uint64(s[from+j]) << (8 * (j + 1))
	}
	for i := from; i+window <= len(s); i++ {
		k = k>>8 | uint64(s[i+window-1])<<(8*(window-1))
		if h := hash(k); mt.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		for _, p := range mt.byPrefix[k] {
			if len(p) <= len(s)-i && string(s[i:i+len(p)]) == p {
				return i, len(p)
			}
		}
	}
	return -1, 0
}
