package diff

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"io"
	"strconv"
)

// binaryCheckSize is how much of a file git looks at to decide it is
// binary.
const binaryCheckSize = 8000

// IsBinary reports whether git would treat data as binary: a NUL byte in
// its first 8000 bytes. (Attributes, which can say otherwise, are the
// caller's business.)
func IsBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binaryCheckSize)], 0) >= 0
}

// BlobID returns the hexadecimal SHA-1 object id git gives a blob with
// content data, as an "index" line shows it. A binary patch needs both
// full ids in its "index" line: `git apply` refuses one without, and checks
// the old id against the file it patches.
func BlobID(data []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// BinaryPatch writes the body of a git binary patch from old to new, as
// `git diff --binary` does after the file header: "GIT binary patch\n", a
// forward hunk giving new and a reverse hunk giving old, each a "literal"
// hunk of the zlib-compressed content in git's base85 lines, ended by an
// empty line. `git apply` applies it and `git apply -R` reverses it, when
// the header's "index" line carries both full [BlobID]s. An added file has
// an empty old, a deleted one an empty new. BinaryPatch returns the first
// write error.
func BinaryPatch(w io.Writer, old, new []byte) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("GIT binary patch\n")
	if err := writeLiteral(bw, new); err != nil {
		return err
	}
	if err := writeLiteral(bw, old); err != nil {
		return err
	}
	return bw.Flush()
}

// writeLiteral writes a "literal" hunk for data.
func writeLiteral(w *bufio.Writer, data []byte) error {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return err
	}
	w.WriteString("literal " + strconv.Itoa(len(data)) + "\n")
	var line [1 + 52/4*5 + 1]byte
	for p := z.Bytes(); len(p) > 0; {
		n := min(len(p), 52)
		if n <= 26 {
			line[0] = byte('A' + n - 1)
		} else {
			line[0] = byte('a' + n - 27)
		}
		k := 1 + encode85(line[1:], p[:n])
		line[k] = '\n'
		w.Write(line[:k+1])
		p = p[n:]
	}
	_, err := w.WriteString("\n")
	return err
}

// base85 is git's base85 alphabet.
const base85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"

// encode85 writes src, in groups of 4 bytes (the last one padded with
// zeros), as 5 base85 characters each into dst, and returns the count.
func encode85(dst, src []byte) int {
	n := 0
	for len(src) > 0 {
		var acc uint32
		for i := range 4 {
			acc <<= 8
			if i < len(src) {
				acc |= uint32(src[i])
			}
		}
		for i := 4; i >= 0; i-- {
			dst[n+i] = base85[acc%85]
			acc /= 85
		}
		n += 5
		src = src[min(4, len(src)):]
	}
	return n
}
