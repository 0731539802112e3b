package settings

import "testing"

// TestPyString checks the escaping of each kind of character.
func TestPyString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain text/with:punctuation", `"plain text/with:punctuation"`},
		{`a"b`, `"a\"b"`},
		{`'`, `"'"`},
		{`a\b`, `"a\\b"`},
		{`\"`, `"\\\""`},
		{"\n\r\t", `"\n\r\t"`},
		{"\x00\x01\x1f\x7f", `"\x00\x01\x1f\x7f"`},
		{"\v\f", `"\x0b\x0c"`},
		{"\u0085\u00a0", `"\x85\xa0"`},
		{"\u2028\u2029\ufeff\u202e\u200d", `"\u2028\u2029\ufeff\u202e\u200d"`},
		{"\U000e0001", `"\U000e0001"`},
		{"Grüße 日本 😀 \ufffd", "\"Grüße 日本 😀 \ufffd\""},
		{"e\u0301", "\"e\u0301\""},
		{"\xff", "\"\ufffd\""},
	}
	for _, tt := range tests {
		if got := pyString(tt.in); got != tt.want {
			t.Errorf("pyString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
