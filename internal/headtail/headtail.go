// Package headtail is a writer that keeps the first and the last bytes
// written to it, up to a cap, and says whether it dropped the middle: the
// output cap of sandbox exec, where the start (what ran) and the end (how it
// failed) matter most.
package headtail

import (
	"bytes"
	"io"
	"sync"
)

// Marker is put where the middle was dropped.
const Marker = "\n… [output truncated] …\n"

// Buffer keeps the first max/2 and the last max-max/2 bytes written to it
// (see [New]) and passes everything to its tee writer as well. It is safe
// for concurrent use.
type Buffer struct {
	mu      sync.Mutex
	max     int
	tee     io.Writer
	head    []byte
	tail    []byte // ring of the last max-max/2 bytes
	tailPos int
	dropped bool
}

// Write keeps what fits and always reports all of p written.
func (c *Buffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tee != nil {
		c.tee.Write(p) // a failing observer must not stop the process
	}
	if c.max < 0 {
		c.head = append(c.head, p...)
		return len(p), nil
	}
	headMax := c.max / 2
	n := len(p)
	if room := headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tailMax := c.max - headMax
	for len(p) > 0 && tailMax > 0 {
		if len(c.tail) < tailMax {
			k := min(tailMax-len(c.tail), len(p))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		// Full: overwrite the oldest bytes.
		c.dropped = true
		if len(p) >= tailMax {
			copy(c.tail, p[len(p)-tailMax:])
			c.tailPos = 0
			p = nil
			break
		}
		k := copy(c.tail[c.tailPos:], p)
		c.tailPos = (c.tailPos + k) % tailMax
		p = p[k:]
	}
	if len(p) > 0 {
		c.dropped = true
	}
	return n, nil
}

// Bytes returns the kept output, with Marker where the middle was dropped,
// and whether it was.
func (c *Buffer) Bytes() ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := bytes.Clone(c.head)
	if c.dropped {
		out = append(out, Marker...)
	}
	out = append(out, c.tail[c.tailPos:]...)
	out = append(out, c.tail[:c.tailPos]...)
	return out, c.dropped
}

// New returns a Buffer that keeps max bytes (max < 0 keeps everything) and
// copies everything to tee, which may be nil. A failing tee does not stop
// the writes.
func New(max int, tee io.Writer) *Buffer { return &Buffer{max: max, tee: tee} }
