package database

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/job"
)

func TestGeneratePassword(t *testing.T) {
	const n = 4096
	pw, err := generatePassword(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(pw) != n {
		t.Fatalf("len = %d, want %d", len(pw), n)
	}
	counts := map[byte]int{}
	for _, b := range pw {
		if !strings.ContainsRune(passwordAlphabet, rune(b)) {
			t.Fatalf("character %q outside the alphabet", b)
		}
		counts[b]++
	}
	// 4096 draws over 62 symbols: every symbol is expected about 66 times; a symbol
	// never drawn (or drawn 3x too often) means a broken mapping, not bad luck.
	for _, r := range passwordAlphabet {
		if c := counts[byte(r)]; c == 0 || c > 200 {
			t.Errorf("symbol %q drawn %d times in %d", r, c, n)
		}
	}
	other, err := generatePassword(PasswordLength)
	if err != nil {
		t.Fatal(err)
	}
	again, err := generatePassword(PasswordLength)
	if err != nil {
		t.Fatal(err)
	}
	if string(other) == string(again) {
		t.Error("two generated passwords are equal")
	}
}

func TestFailure(t *testing.T) {
	tests := map[string]struct {
		err  error
		want string
	}{
		"RunJob's text": {
			err:  fmt.Errorf("run Job ns/db-sync: %w: BackoffLimitExceeded: Job has reached the specified backoff limit", job.ErrJobFailed),
			want: "BackoffLimitExceeded: Job has reached the specified backoff limit",
		},
		"other text": {err: errors.New("boom"), want: "boom"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := failure(tc.err); got != tc.want {
				t.Errorf("failure() = %q, want %q", got, tc.want)
			}
		})
	}
}
