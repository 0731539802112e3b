package settings

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckLiteral checks the verdict and the reported position for values that
// python_test.go cross-checks with Python, so the verdicts hold without python3 too.
func TestCheckLiteral(t *testing.T) {
	tests := []struct {
		src  string
		want string // "" for accepted, else a substring of the error
	}{
		{"True", ""},
		{"[1, 'a', (None,), {'k': {1, 2}}, b'x', r'\\d', 1.5e-3, -2, 1+2j]", ""},
		{`"""a"b"""`, ""},
		{"", "the value is empty"},
		{"1\n2", "line break at byte 1"},
		{"1\r2", "line break at byte 1"},
		{"'\x00'", "NUL at byte 1"},
		{"'\xff'", "not valid UTF-8"},
		{"x", "a name (only True, False and None are literals) at byte 0"},
		{"[1, os]", "a name (only True, False and None are literals) at byte 4"},
		{"f'x'", "unsupported string prefix at byte 0"},
		{"1; 2", "unexpected text after the literal at byte 1"},
		{"1 # c", "unexpected text after the literal at byte 2"},
		{"(1 2)", `expected "," or ")" at byte 3`},
		{"[1 2]", `expected "," or ']' at byte 3`},
		{"{1: 2 3}", `expected "," or "}" at byte 6`},
		{"{[1]: 2}", "unhashable dict key at byte 1"},
		{"{1: 2, [3]: 4}", "unhashable dict key at byte 7"},
		{"{[1]}", "unhashable set element at byte 1"},
		{"{1, [2]}", "unhashable set element at byte 4"},
		{"{(1, [2])}", "unhashable set element at byte 1"},
		{"{1: 2, 3}", `expected ":" at byte 8`},
		{"1 + 2", "arithmetic other than real ± imaginary"},
		{"1 + x", "expected an imaginary number at byte 4"},
		{"01", "leading zero in a decimal integer at byte 0"},
		{"1__0", `misplaced "_" in a number at byte 1`},
		{"0x", "missing digits in a number at byte 2"},
		{"1e", "missing exponent digits at byte 2"},
		{"1a", "invalid number at byte 1"},
		{".", "invalid number at byte 0"},
		{"-", "expected a number at byte 1"},
		{`"abc`, "unterminated string at byte 4"},
		{`"\`, "unterminated string at byte 1"},
		{`'a''b'`, "text right after a string"},
		{`"\q"`, "unsupported escape (use a raw string for a literal backslash) at byte 1"},
		{`"\x4g"`, "invalid escape at byte 1"},
		{`"\u12zz"`, "invalid escape at byte 1"},
		{`"\U0011000`, "truncated escape at byte 1"},
		{`"\udfff"`, "escape of an invalid code point at byte 1"},
		{`b"é"`, "non-ASCII character in a bytes literal at byte 2"},
		{"(", "missing value at byte 1"},
		{"@", `unexpected character '@' at byte 0`},
		{strings.Repeat("(", 70), "nesting deeper than 64 at byte 65"},
		{strings.Repeat("1", 4001), "integer of more than 4000 digits at byte 0"},
	}
	for _, tt := range tests {
		err := checkLiteral(tt.src)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("checkLiteral(%q) = %v, want nil", tt.src, err)
		case tt.want != "" && err == nil:
			t.Errorf("checkLiteral(%q) = nil, want an error with %q", tt.src, tt.want)
		case tt.want != "" && (!strings.Contains(err.Error(), tt.want) || !errors.Is(err, errNotLiteral)):
			t.Errorf("checkLiteral(%q) = %v, want errNotLiteral with %q", tt.src, err, tt.want)
		}
	}
}
