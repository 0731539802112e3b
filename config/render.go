package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultSection is the name of oslo.config's [DEFAULT] section, which [RenderINI]
// always writes first.
const DefaultSection = "DEFAULT"

// continuationIndent starts every continuation line of a multi-line value.
const continuationIndent = "    "

// Sections is the content of an oslo.config INI file: section name → option name →
// values. An option with one value renders as one "key = value" line; an option with
// several values renders the key once per value, in order, as oslo.config's MultiStrOpt
// expects. An option with no values is not rendered, and neither is a section without
// any rendered option.
type Sections map[string]map[string][]string

// RenderINI renders s as an oslo.config INI file, byte for byte deterministically
// ([DefaultSection] first, then sorted sections and options, values in order; the
// package documentation, "Rendering"). Input oslo.config would not read back as the same
// data is refused, naming the section and option ([ErrInvalidName],
// [ErrUnrepresentableValue]). An empty s renders as ""; s is not modified.
func RenderINI(s Sections) (string, error) {
	names := sectionOrder(s)
	var b strings.Builder
	for _, section := range names {
		if err := validateSection(section); err != nil {
			return "", err
		}
		options := s[section]
		keys := slices.Sorted(maps.Keys(options))
		rendered := 0
		for _, key := range keys {
			if err := validateKey(section, key); err != nil {
				return "", err
			}
			rendered += min(len(options[key]), 1)
		}
		if rendered == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteByte('[')
		b.WriteString(section)
		b.WriteString("]\n")
		for _, key := range keys {
			for i, value := range options[key] {
				if err := writeOption(&b, key, value); err != nil {
					return "", fmt.Errorf("section %q option %q value %d: %w", section, key, i, err)
				}
			}
		}
	}
	return b.String(), nil
}

// sectionOrder returns the section names of s: DefaultSection first, then sorted.
func sectionOrder(s Sections) []string {
	names := make([]string, 0, len(s))
	for name := range s {
		if name != DefaultSection {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if _, ok := s[DefaultSection]; ok {
		names = slices.Insert(names, 0, DefaultSection)
	}
	return names
}

// writeOption writes key = value, with continuation lines for a multi-line value.
func writeOption(b *strings.Builder, key, value string) error {
	if !utf8.ValidString(value) {
		return fmt.Errorf("%w: not valid UTF-8", ErrUnrepresentableValue)
	}
	if strings.IndexByte(value, '\r') >= 0 {
		return fmt.Errorf("%w: carriage return (oslo.config reads it as a line break)", ErrUnrepresentableValue)
	}
	first, rest, multi := strings.Cut(value, "\n")
	// Check every continuation line before writing anything.
	if multi {
		n := 1
		for line := range strings.SplitSeq(rest, "\n") {
			n++
			switch {
			case line == "":
				return fmt.Errorf("%w: line %d is empty (oslo.config ends a value at a blank line)", ErrUnrepresentableValue, n)
			case strings.TrimFunc(line, isPySpace) != line:
				return fmt.Errorf("%w: line %d starts or ends with white space (oslo.config strips it from continuation lines)", ErrUnrepresentableValue, n)
			}
		}
	}
	b.WriteString(key)
	b.WriteString(" =")
	if first != "" {
		b.WriteByte(' ')
		if needsQuotes(first) {
			b.WriteByte('"')
			b.WriteString(first)
			b.WriteByte('"')
		} else {
			b.WriteString(first)
		}
	}
	b.WriteByte('\n')
	if multi {
		for line := range strings.SplitSeq(rest, "\n") {
			b.WriteString(continuationIndent)
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return nil
}

// needsQuotes reports whether oslo.config would change the first line of a value
// read back bare: it strips white space around it and removes one pair of matching
// enclosing quotes.
func needsQuotes(first string) bool {
	if strings.TrimFunc(first, isPySpace) != first {
		return true
	}
	q := first[0]
	return (q == '"' || q == '\'') && first[len(first)-1] == q
}

// validateSection checks that [section] reads back as the same section name.
func validateSection(section string) error {
	bad := func(why string) error {
		return fmt.Errorf("section %q: %w: %s", section, ErrInvalidName, why)
	}
	switch {
	case section == "":
		return bad("empty")
	case !utf8.ValidString(section):
		return bad("not valid UTF-8")
	}
	if c := strings.IndexAny(section, "\n\r[]="); c >= 0 {
		return bad(fmt.Sprintf("contains %q", section[c:c+1]))
	}
	if strings.TrimFunc(section, isPySpace) != section {
		return bad("starts or ends with white space")
	}
	return nil
}

// validateKey checks that "key = ..." reads back as option key and starts no section,
// comment or continuation line.
func validateKey(section, key string) error {
	bad := func(why string) error {
		return fmt.Errorf("section %q option %q: %w: %s", section, key, ErrInvalidName, why)
	}
	switch {
	case key == "":
		return bad("empty")
	case !utf8.ValidString(key):
		return bad("not valid UTF-8")
	}
	if c := strings.IndexAny(key, "\n\r[]=:"); c >= 0 {
		return bad(fmt.Sprintf("contains %q", key[c:c+1]))
	}
	if key[0] == '#' || key[0] == ';' {
		return bad(fmt.Sprintf("starts with %q (a comment)", key[:1]))
	}
	if strings.TrimFunc(key, isPySpace) != key {
		return bad("starts or ends with white space")
	}
	return nil
}

// isPySpace reports whether Python's str.strip removes r: Unicode white space plus
// the information separators U+001C to U+001F.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}
