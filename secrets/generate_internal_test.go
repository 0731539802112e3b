package secrets

import (
	"strings"
	"testing"
)

func TestRandomAlphanumeric(t *testing.T) {
	for _, n := range []int{MinGeneratedLength, DefaultGeneratedLength, MaxGeneratedLength} {
		v, err := randomAlphanumeric(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != n {
			t.Errorf("length %d, want %d", len(v), n)
		}
		for _, b := range v {
			if !strings.ContainsRune(alphabet, rune(b)) {
				t.Fatalf("character %q outside the alphabet", b)
			}
		}
	}
}

// TestRandomAlphanumericUniform checks that rejection sampling leaves no character
// favoured. Over 62,000 draws each character is expected 1,000 times (standard
// deviation about 31) and the first eight together 8,000 times (about 89); the bounds
// are ten deviations wide, so the test does not flake. A plain modulo would fold the
// byte values 248-255 onto the first eight characters and draw them about 9,700 times.
func TestRandomAlphanumericUniform(t *testing.T) {
	const perChar = 1000
	v, err := randomAlphanumeric(len(alphabet) * perChar)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[byte]int{}
	for _, b := range v {
		counts[b]++
	}
	for i := range len(alphabet) {
		if n := counts[alphabet[i]]; n < perChar-310 || n > perChar+310 {
			t.Errorf("character %q drawn %d times, want %d±310", alphabet[i], n, perChar)
		}
	}
	firstEight := 0
	for i := range 8 {
		firstEight += counts[alphabet[i]]
	}
	if firstEight < 8*perChar-890 || firstEight > 8*perChar+890 {
		t.Errorf("first eight characters drawn %d times, want %d±890 (modulo bias?)", firstEight, 8*perChar)
	}
	seen := map[string]bool{}
	for range 1000 {
		v, err := randomAlphanumeric(DefaultGeneratedLength)
		if err != nil {
			t.Fatal(err)
		}
		if seen[string(v)] {
			t.Fatal("a 32-character value repeated within 1000 draws")
		}
		seen[string(v)] = true
	}
}
