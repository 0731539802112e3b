package policy

import "strings"

// Substitutions returns the target keys the role name takes from the target, such as
// "role.name" for "role:%(role.name)s", in order of appearance.
func (e *RoleCheck) Substitutions() []string { return mustSubstitutions(e.Name) }

// Substitutions returns the target keys Match takes from the target, such as
// "target.project.id" for "project_id:%(target.project.id)s", in order of appearance.
func (e *GenericCheck) Substitutions() []string { return mustSubstitutions(e.Match) }

// Substitutions returns the target keys Match takes from the target, such as
// "enabled" for "True:%(enabled)s", in order of appearance.
func (e *LiteralCheck) Substitutions() []string { return mustSubstitutions(e.Match) }

// mustSubstitutions lists the well-formed substitutions of s and skips the rest (a
// node built in code may hold a malformed one; Parse never returns such a node).
func mustSubstitutions(s string) []string {
	keys, _ := substitutions(s, 0)
	return keys
}

// pyConversions are the conversion characters of Python's %-formatting.
const pyConversions = "sracdiuoxXeEfFgG%"

// substitutions parses the %-formatting that oslo.policy applies to MATCH with the
// target as mapping ("%(key)s" % target) and returns the keys. It rejects what makes
// Python raise something other than KeyError, which oslo.policy does not catch: an
// unclosed key, a positional conversion (there is no positional argument), a '*'
// width or precision, an unsupported conversion character, a '%' at the end. off is
// the byte offset of s in the expression.
func substitutions(s string, off int) ([]string, error) {
	var keys []string
	for i := 0; i < len(s); {
		pct := strings.IndexByte(s[i:], '%')
		if pct < 0 {
			break
		}
		start := i + pct
		i = start + 1
		if i < len(s) && s[i] == '%' {
			i++
			continue
		}
		if i >= len(s) || s[i] != '(' {
			return nil, syntaxErr(off+start, ErrMalformedCheck,
				"%%-conversion without a (key); write %%(key)s to take a value from the target, %%%% for a literal %%")
		}
		depth, keyStart := 1, i+1
		for i++; i < len(s) && depth > 0; i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				depth--
			}
		}
		if depth > 0 {
			return nil, syntaxErr(off+start, ErrMalformedCheck, "%%( is never closed by ')'")
		}
		key := s[keyStart : i-1]
		for i < len(s) && strings.IndexByte("-+ #0", s[i]) >= 0 {
			i++
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i < len(s) && s[i] == '.' {
			i++
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
		}
		for i < len(s) && strings.IndexByte("hlL", s[i]) >= 0 {
			i++
		}
		if i >= len(s) {
			return nil, syntaxErr(off+start, ErrMalformedCheck, "%%(%s) has no conversion character (write %%(%s)s)", excerpt(key), excerpt(key))
		}
		if strings.IndexByte(pyConversions, s[i]) < 0 {
			return nil, syntaxErr(off+start, ErrMalformedCheck, "%%(%s) is followed by %q, not a conversion character such as s", excerpt(key), s[i])
		}
		// Python looks the key up even for %(key)%.
		keys = append(keys, key)
		i++
	}
	return keys, nil
}
