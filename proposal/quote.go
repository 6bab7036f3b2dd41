package proposal

import (
	"strconv"
	"strings"
)

// needsQuote reports whether git (core.quotePath=true, the default) writes
// name in C-style quotes: when it holds a control character, a double quote,
// a backslash, DEL or any byte of 0x80 and above.
func needsQuote(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x7f {
			return true
		}
	}
	return false
}

// quoteName appends name as git writes it in patch headers: verbatim, or
// in C-style double quotes with git's escapes and octal for other bytes.
func quoteName(b []byte, name string) []byte {
	if !needsQuote(name) {
		return append(b, name...)
	}
	b = append(b, '"')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch c {
		case '\a':
			b = append(b, `\a`...)
		case '\b':
			b = append(b, `\b`...)
		case '\t':
			b = append(b, `\t`...)
		case '\n':
			b = append(b, `\n`...)
		case '\v':
			b = append(b, `\v`...)
		case '\f':
			b = append(b, `\f`...)
		case '\r':
			b = append(b, `\r`...)
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		default:
			if c < 0x20 || c >= 0x7f {
				b = append(b, '\\', '0'+c>>6, '0'+(c>>3)&7, '0'+c&7)
			} else {
				b = append(b, c)
			}
		}
	}
	return append(b, '"')
}

// quoteTwo appends prefix+name quoted as a whole, as git's quote_two does.
func quoteTwo(b []byte, prefix, name string) []byte {
	return quoteName(b, prefix+name)
}

// gitMode formats a git file mode (100644, 100755, 120000) as git writes it.
func gitModeString(m uint32) string {
	return strconv.FormatUint(uint64(m), 8)
}

// hasSpace reports whether git adds a tab after the name on ---/+++ lines.
func hasSpace(name string) bool { return strings.IndexByte(name, ' ') >= 0 }
