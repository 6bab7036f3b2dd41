// Package mask hides known secret values in text before it is written to
// logs, transcripts and other output that outlives the process.
//
// A [Masker] holds the secrets registered with [Masker.Add]. For each secret
// it masks the raw value and the encodings a secret most often travels in:
//
//   - base64 in the four alphabets of encoding/base64 (standard, URL, and
//     both without padding), including the secret sitting inside a longer
//     base64 blob at any byte alignment, as in an HTTP basic-auth header or
//     a base64-encoded config file;
//   - URL escaping, in both the url.QueryEscape and url.PathEscape forms.
//
// Every match is replaced by [Redacted]. When two registered forms could
// match at the same place, the longer one wins, so a secret that contains
// another secret is masked whole.
//
// # Concurrency
//
// A Masker is safe for concurrent use by multiple goroutines. Add is
// serialized; Mask, MaskBytes and Contains never wait for Add: each uses the
// secrets registered when it starts.
//
// # Security
//
// Masking is a safety net against accidents, not a security boundary. It
// does not protect against:
//
//   - secrets shorter than [MinLen] bytes, which Add ignores: masking every
//     occurrence of a 1–5 byte string would destroy logs and hide nothing;
//   - a secret of 6 or 7 bytes embedded in a longer base64 blob at some
//     byte alignments: too few of its characters are independent of its
//     neighbours to match safely (secrets of 8 bytes or more are masked at
//     every alignment);
//   - any other encoding or transformation: hex, JSON or shell quoting,
//     compression, encryption, upper-casing, a secret split across lines
//     or across separate calls to Mask when text is streamed;
//   - two different secrets that overlap in the text: the leftmost match is
//     masked and the rest of the other secret may remain visible;
//   - up to two bytes at the end of a secret embedded in a base64 blob,
//     and a few bits of its first byte, remaining decodable next to the
//     [Redacted] marker.
package mask
