package settings

import (
	"fmt"
	"strings"
	"unicode"
)

// pyString is s as a double-quoted Python str literal. Backslash and the double quote
// are escaped, line feed, carriage return and tab become \n, \r and \t, and every other
// character that is not printable (ASCII and C1 controls, DEL, format characters such
// as bidirectional overrides, line and paragraph separators, non-ASCII spaces) becomes
// \xNN, \uNNNN or \UNNNNNNNN. Printable non-ASCII characters are written as they are
// (the file is UTF-8). The literal therefore always ends where it is meant to and never
// contains a line break. s should be valid UTF-8; an invalid byte is written as U+FFFD.
func pyString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r >= 0x80 && unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
