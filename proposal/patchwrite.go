package proposal

import (
	"bytes"
	"fmt"

	"github.com/paddockdev/paddock/internal/diff"
)

// Git file modes, as they appear in patches.
const (
	modeFile    uint32 = 0o100644
	modeExec    uint32 = 0o100755
	modeSymlink uint32 = 0o120000
)

const zeroOID = "0000000000000000000000000000000000000000"

// fileDiff is one file's change as written into a patch. A side that does
// not exist has an empty path and mode 0.
type fileDiff struct {
	oldPath, newPath string
	oldMode, newMode uint32
	old, new         []byte
	// score is the similarity of a rename, 0–100; a rename is a diff with
	// both paths set and different.
	score int
	// binary forces a binary patch.
	binary bool
}

// writeFileDiff appends d to b in git's format (as git diff --full-index
// --binary -M writes it) and returns its line stats and whether it was
// written as a binary patch.
func writeFileDiff(b *bytes.Buffer, d *fileDiff, context int) (diff.Stats, bool, error) {
	oldName, newName := d.oldPath, d.newPath
	if oldName == "" {
		oldName = newName
	}
	if newName == "" {
		newName = oldName
	}
	var line []byte
	line = append(line, "diff --git "...)
	if needsQuote("a/"+oldName) || needsQuote("b/"+newName) {
		line = quoteTwo(line, "a/", oldName)
		line = append(line, ' ')
		line = quoteTwo(line, "b/", newName)
	} else {
		line = append(line, "a/"+oldName+" b/"+newName...)
	}
	line = append(line, '\n')
	switch {
	case d.oldMode == 0:
		line = fmt.Appendf(line, "new file mode %06o\n", d.newMode)
	case d.newMode == 0:
		line = fmt.Appendf(line, "deleted file mode %06o\n", d.oldMode)
	case d.oldMode != d.newMode:
		line = fmt.Appendf(line, "old mode %06o\nnew mode %06o\n", d.oldMode, d.newMode)
	}
	if d.oldMode != 0 && d.newMode != 0 && oldName != newName {
		line = fmt.Appendf(line, "similarity index %d%%\nrename from ", d.score)
		line = quoteName(line, oldName)
		line = append(line, "\nrename to "...)
		line = quoteName(line, newName)
		line = append(line, '\n')
	}
	oldOID, newOID := zeroOID, zeroOID
	if d.oldMode != 0 {
		oldOID = diff.BlobID(d.old)
	}
	if d.newMode != 0 {
		newOID = diff.BlobID(d.new)
	}
	b.Write(line)
	if oldOID == newOID {
		return diff.Stats{}, false, nil
	}
	fmt.Fprintf(b, "index %s..%s", oldOID, newOID)
	if d.oldMode == d.newMode {
		fmt.Fprintf(b, " %06o", d.oldMode)
	}
	b.WriteByte('\n')
	if d.binary || diff.IsBinary(d.old) || diff.IsBinary(d.new) {
		if err := diff.BinaryPatch(b, d.old, d.new); err != nil {
			return diff.Stats{}, true, err
		}
		return diff.Stats{}, true, nil
	}
	if len(d.old) == 0 && len(d.new) == 0 {
		// git writes no ---/+++ lines when there is no hunk.
		return diff.Stats{}, false, nil
	}
	line = line[:0]
	if d.oldMode == 0 {
		line = append(line, "--- /dev/null\n"...)
	} else {
		line = append(line, "--- "...)
		line = quoteTwo(line, "a/", oldName)
		if hasSpace(oldName) {
			line = append(line, '\t')
		}
		line = append(line, '\n')
	}
	if d.newMode == 0 {
		line = append(line, "+++ /dev/null\n"...)
	} else {
		line = append(line, "+++ "...)
		line = quoteTwo(line, "b/", newName)
		if hasSpace(newName) {
			line = append(line, '\t')
		}
		line = append(line, '\n')
	}
	b.Write(line)
	st, err := diff.Unified(b, d.old, d.new, context)
	return st, false, err
}

// isBinaryPair reports whether a change between old and new is written as a
// binary patch.
func isBinaryPair(old, new []byte) bool { return diff.IsBinary(old) || diff.IsBinary(new) }
