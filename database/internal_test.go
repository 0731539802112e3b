package database

import (
	"errors"
	"fmt"
	"testing"

	"github.com/c5c3/reconciler-sdk/job"
)

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
