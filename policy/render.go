package policy

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxSimpleKey is the longest quoted rule name written as an implicit YAML key; YAML
// parsers (PyYAML, go-yaml) limit implicit keys to 1024 characters, so longer names
// use the explicit "? key" form.
const maxSimpleKey = 1000

// Render writes rules as a policy.yaml document, one double-quoted line per rule sorted
// by name (oslo.policy's sample style), so any text survives PyYAML; an empty map renders
// as "". It does not judge the expressions ([Validate]), and fails, wrapping
// [ErrInvalidRule] and naming the rule, only on text that is not valid UTF-8.
func Render(rules map[string]string) (string, error) {
	if len(rules) == 0 {
		return "", nil
	}
	names := make([]string, 0, len(rules))
	size := 0
	for name, expr := range rules {
		if !utf8.ValidString(name) {
			return "", fmt.Errorf("%w: rule name %q is not valid UTF-8", ErrInvalidRule, name)
		}
		if !utf8.ValidString(expr) {
			return "", fmt.Errorf("%w: rule %q: expression %q is not valid UTF-8", ErrInvalidRule, name, expr)
		}
		names = append(names, name)
		size += len(name) + len(expr) + 8
	}
	slices.Sort(names)
	var b strings.Builder
	b.Grow(size)
	for _, name := range names {
		key := yamlQuote(name)
		if len(key) > maxSimpleKey {
			b.WriteString("? ")
			b.WriteString(key)
			b.WriteByte('\n')
		} else {
			b.WriteString(key)
		}
		b.WriteString(": ")
		b.WriteString(yamlQuote(rules[name]))
		b.WriteByte('\n')
	}
	return b.String(), nil
}

// yamlQuote returns s as a YAML double-quoted scalar, escaping what YAML 1.1 and 1.2
// parsers would otherwise read as a line break, fold, or reject as non-printable.
func yamlQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0x85:
			b.WriteString(`\N`)
		case 0xa0:
			b.WriteString(`\_`)
		case 0x2028:
			b.WriteString(`\L`)
		case 0x2029:
			b.WriteString(`\P`)
		default:
			if yamlPrintable(r) {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// yamlPrintable reports the YAML c-printable set minus the byte-order mark.
func yamlPrintable(r rune) bool {
	switch {
	case r >= 0x20 && r <= 0x7e:
		return true
	case r >= 0xa0 && r <= 0xd7ff:
		return true
	case r >= 0xe000 && r <= 0xfffd:
		return r != 0xfeff
	case r >= 0x10000 && r <= 0x10ffff:
		return true
	}
	return false
}
