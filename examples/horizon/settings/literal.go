package settings

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxLiteralDepth bounds the nesting of containers in an ExtraConfig value, well below
// the nesting Python's parser refuses (200 open brackets).
const maxLiteralDepth = 64

// maxIntDigits bounds the digits of a decimal int literal, below the 4300 digits that
// Python 3.11 and later refuse to convert.
const maxIntDigits = 4000

// errNotLiteral is the cause of every checkLiteral error; callers wrap the result into
// ErrInvalidSettings.
var errNotLiteral = errors.New("not a literal")

// checkLiteral reports whether src is one Python literal expression on one line, of the
// subset that ast.literal_eval evaluates and that [Render] documents. Errors give the
// byte offset of the problem but never quote src.
func checkLiteral(src string) error {
	switch {
	case src == "":
		return fmt.Errorf("%w: the value is empty", errNotLiteral)
	case !utf8.ValidString(src):
		return fmt.Errorf("%w: the value is not valid UTF-8", errNotLiteral)
	}
	if i := strings.IndexAny(src, "\n\r"); i >= 0 {
		return fmt.Errorf("%w: line break at byte %d (a value is one line)", errNotLiteral, i)
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		return fmt.Errorf("%w: NUL at byte %d", errNotLiteral, i)
	}
	p := &litParser{src: src}
	if _, err := p.value(0); err != nil {
		return err
	}
	p.space()
	if p.pos != len(src) {
		return p.fail("unexpected text after the literal")
	}
	return nil
}

// litParser is a recursive-descent parser of one literal in src.
type litParser struct {
	src string
	pos int
}

func (p *litParser) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", errNotLiteral, what, p.pos)
}

func (p *litParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

// space skips spaces and tabs.
func (p *litParser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// value parses one literal and reports whether it is hashable (usable as a dict key or
// set element).
func (p *litParser) value(depth int) (hashable bool, err error) {
	if depth > maxLiteralDepth {
		return false, p.fail(fmt.Sprintf("nesting deeper than %d", maxLiteralDepth))
	}
	p.space()
	c := p.peek()
	switch {
	case c == '(':
		return p.tuple(depth)
	case c == '[':
		p.pos++
		return false, p.items(depth, ']', false)
	case c == '{':
		return false, p.dictOrSet(depth)
	case c == '\'' || c == '"':
		return true, p.str(false, false)
	case c == '+' || c == '-' || c == '.' || isDigit(c):
		return true, p.number()
	case isIdentStart(c):
		start := p.pos
		for p.pos < len(p.src) && isIdentChar(p.src[p.pos]) {
			p.pos++
		}
		word := p.src[start:p.pos]
		if q := p.peek(); q == '\'' || q == '"' {
			switch strings.ToLower(word) {
			case "r":
				return true, p.str(true, false)
			case "u":
				return true, p.str(false, false)
			case "b":
				return true, p.str(false, true)
			case "br", "rb":
				return true, p.str(true, true)
			}
			p.pos = start
			return false, p.fail("unsupported string prefix")
		}
		switch word {
		case "True", "False", "None":
			return true, nil
		}
		p.pos = start
		return false, p.fail("a name (only True, False and None are literals)")
	case c == 0 && p.pos == len(p.src):
		return false, p.fail("missing value")
	default:
		return false, p.fail(fmt.Sprintf("unexpected character %q", c))
	}
}

// tuple parses "()", "(x)" (just x) or a tuple "(x, ...)" at "(".
func (p *litParser) tuple(depth int) (bool, error) {
	p.pos++
	p.space()
	if p.peek() == ')' {
		p.pos++
		return true, nil
	}
	hashable, err := p.value(depth + 1)
	if err != nil {
		return false, err
	}
	p.space()
	switch p.peek() {
	case ')':
		p.pos++
		return hashable, nil
	case ',':
		p.pos++
	default:
		return false, p.fail("expected \",\" or \")\"")
	}
	for {
		p.space()
		if p.peek() == ')' {
			p.pos++
			return hashable, nil
		}
		h, err := p.value(depth + 1)
		if err != nil {
			return false, err
		}
		hashable = hashable && h
		p.space()
		switch p.peek() {
		case ',':
			p.pos++
		case ')':
			p.pos++
			return hashable, nil
		default:
			return false, p.fail("expected \",\" or \")\"")
		}
	}
}

// items parses comma-separated values up to the closing bracket, the opening one
// already consumed; with mustHash, every value must be hashable.
func (p *litParser) items(depth int, closing byte, mustHash bool) error {
	for {
		p.space()
		if p.peek() == closing {
			p.pos++
			return nil
		}
		start := p.pos
		h, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		if mustHash && !h {
			p.pos = start
			return p.fail("unhashable set element")
		}
		p.space()
		switch p.peek() {
		case ',':
			p.pos++
		case closing:
			p.pos++
			return nil
		default:
			return p.fail(fmt.Sprintf("expected \",\" or %q", closing))
		}
	}
}

// dictOrSet parses "{}", a dict "{k: v, ...}" or a set "{x, ...}" at "{".
func (p *litParser) dictOrSet(depth int) error {
	p.pos++
	p.space()
	if p.peek() == '}' {
		p.pos++
		return nil
	}
	start := p.pos
	h, err := p.value(depth + 1)
	if err != nil {
		return err
	}
	p.space()
	if p.peek() != ':' {
		if !h {
			p.pos = start
			return p.fail("unhashable set element")
		}
		switch p.peek() {
		case ',':
			p.pos++
			return p.items(depth, '}', true)
		case '}':
			p.pos++
			return nil
		}
		return p.fail("expected \",\", \":\" or \"}\"")
	}
	if !h {
		p.pos = start
		return p.fail("unhashable dict key")
	}
	for {
		// At the ":" after a key.
		p.pos++
		if _, err := p.value(depth + 1); err != nil {
			return err
		}
		p.space()
		switch p.peek() {
		case '}':
			p.pos++
			return nil
		case ',':
			p.pos++
		default:
			return p.fail("expected \",\" or \"}\"")
		}
		p.space()
		if p.peek() == '}' {
			p.pos++
			return nil
		}
		start := p.pos
		h, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		if !h {
			p.pos = start
			return p.fail("unhashable dict key")
		}
		p.space()
		if p.peek() != ':' {
			return p.fail("expected \":\"")
		}
	}
}

// number parses an optionally signed number, and "real ± imaginary" as
// ast.literal_eval allows it.
func (p *litParser) number() error {
	if c := p.peek(); c == '+' || c == '-' {
		p.pos++
		p.space()
	}
	imaginary, err := p.unsigned()
	if err != nil {
		return err
	}
	if imaginary {
		return nil
	}
	save := p.pos
	p.space()
	if c := p.peek(); c != '+' && c != '-' {
		p.pos = save
		return nil
	}
	p.pos++
	p.space()
	if !isDigit(p.peek()) && p.peek() != '.' {
		return p.fail("expected an imaginary number")
	}
	imaginary, err = p.unsigned()
	if err != nil {
		return err
	}
	if !imaginary {
		return p.fail("arithmetic other than real ± imaginary")
	}
	return nil
}

// unsigned parses one Python number token and reports whether it is imaginary.
func (p *litParser) unsigned() (imaginary bool, err error) {
	start := p.pos
	s := p.src
	// digitpart consumes digit (["_"] digit)* of the given class and returns how many
	// digits it read (zero when there is none at p.pos).
	digitpart := func(ok func(byte) bool) (int, error) {
		n := 0
		for p.pos < len(s) {
			c := s[p.pos]
			switch {
			case ok(c):
				n++
				p.pos++
			case c == '_' && n > 0 && p.pos+1 < len(s) && ok(s[p.pos+1]):
				p.pos++
			case c == '_':
				return n, p.fail("misplaced \"_\" in a number")
			default:
				return n, nil
			}
		}
		return n, nil
	}
	end := func() (bool, error) {
		if c := p.peek(); isIdentChar(c) || c == '.' {
			return false, p.fail("invalid number")
		}
		return imaginary, nil
	}

	if p.peek() == '0' && p.pos+1 < len(s) {
		var ok func(byte) bool
		switch s[p.pos+1] {
		case 'x', 'X':
			ok = isHex
		case 'o', 'O':
			ok = func(c byte) bool { return c >= '0' && c <= '7' }
		case 'b', 'B':
			ok = func(c byte) bool { return c == '0' || c == '1' }
		}
		if ok != nil {
			p.pos += 2
			if p.peek() == '_' {
				p.pos++
			}
			n, err := digitpart(ok)
			if err != nil {
				return false, err
			}
			if n == 0 {
				return false, p.fail("missing digits in a number")
			}
			return end()
		}
	}

	intDigits, err := digitpart(isDigit)
	if err != nil {
		return false, err
	}
	float := false
	if p.peek() == '.' {
		p.pos++
		float = true
		frac, err := digitpart(isDigit)
		if err != nil {
			return false, err
		}
		if intDigits == 0 && frac == 0 {
			p.pos = start
			return false, p.fail("invalid number")
		}
	} else if intDigits == 0 {
		return false, p.fail("expected a number")
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.pos++
		float = true
		if c := p.peek(); c == '+' || c == '-' {
			p.pos++
		}
		n, err := digitpart(isDigit)
		if err != nil {
			return false, err
		}
		if n == 0 {
			return false, p.fail("missing exponent digits")
		}
	}
	if c := p.peek(); c == 'j' || c == 'J' {
		p.pos++
		imaginary = true
		return end()
	}
	if !float {
		digits := strings.ReplaceAll(s[start:p.pos], "_", "")
		if digits[0] == '0' && strings.Trim(digits, "0") != "" {
			p.pos = start
			return false, p.fail("leading zero in a decimal integer")
		}
		if len(digits) > maxIntDigits {
			p.pos = start
			return false, p.fail(fmt.Sprintf("integer of more than %d digits", maxIntDigits))
		}
	}
	return end()
}

// str parses a string literal at its opening quote (after any prefix).
func (p *litParser) str(raw, bytesLit bool) error {
	q := p.src[p.pos]
	triple := strings.HasPrefix(p.src[p.pos:], strings.Repeat(string(q), 3))
	if triple {
		p.pos += 3
	} else {
		p.pos++
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == q && (!triple || strings.HasPrefix(p.src[p.pos:], strings.Repeat(string(q), 3))):
			if triple {
				p.pos += 3
			} else {
				p.pos++
			}
			if p.peek() == '\'' || p.peek() == '"' || isIdentChar(p.peek()) {
				return p.fail("text right after a string (implicit concatenation and prefixes are not supported)")
			}
			return nil
		case c == '\\':
			if p.pos+1 == len(p.src) {
				return p.fail("unterminated string")
			}
			if raw {
				p.pos += 2
				continue
			}
			if err := p.escape(bytesLit); err != nil {
				return err
			}
		case bytesLit && c >= 0x80:
			return p.fail("non-ASCII character in a bytes literal")
		default:
			p.pos++
		}
	}
	return p.fail("unterminated string")
}

// escape parses one backslash escape of a non-raw string at its backslash.
func (p *litParser) escape(bytesLit bool) error {
	hexDigits := func(n int) (rune, error) {
		if p.pos+2+n > len(p.src) {
			return 0, p.fail("truncated escape")
		}
		var v rune
		for i := 0; i < n; i++ {
			c := p.src[p.pos+2+i]
			if !isHex(c) {
				return 0, p.fail("invalid escape")
			}
			v = v*16 + rune(hexValue(c))
		}
		return v, nil
	}
	c := p.src[p.pos+1]
	switch {
	case strings.IndexByte("\\'\"abfnrtv", c) >= 0:
		p.pos += 2
	case c >= '0' && c <= '7':
		p.pos += 2
		for i := 0; i < 2 && p.peek() >= '0' && p.peek() <= '7'; i++ {
			p.pos++
		}
	case c == 'x':
		if _, err := hexDigits(2); err != nil {
			return err
		}
		p.pos += 4
	case (c == 'u' || c == 'U') && !bytesLit:
		n := 4
		if c == 'U' {
			n = 8
		}
		v, err := hexDigits(n)
		if err != nil {
			return err
		}
		if v > utf8.MaxRune || v >= 0xd800 && v <= 0xdfff {
			return p.fail("escape of an invalid code point")
		}
		p.pos += 2 + n
	default:
		return p.fail("unsupported escape (use a raw string for a literal backslash)")
	}
	return nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isHex(c byte) bool        { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) || c >= 0x80 }

func hexValue(c byte) int {
	switch {
	case isDigit(c):
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	default:
		return int(c-'A') + 10
	}
}
