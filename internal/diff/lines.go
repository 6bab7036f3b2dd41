package diff

import "bytes"

// splitLines returns the lines of data, each with its "\n" terminator; the
// last one lacks it when data does not end with a newline.
func splitLines(data []byte) [][]byte {
	if len(data) == 0 {
		return nil
	}
	n := bytes.Count(data, []byte{'\n'})
	if data[len(data)-1] != '\n' {
		n++
	}
	lines := make([][]byte, 0, n)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i+1:i+1])
		data = data[i+1:]
	}
	return lines
}

// hasNewline reports whether line ends with its terminator.
func hasNewline(line []byte) bool {
	return len(line) > 0 && line[len(line)-1] == '\n'
}
