package keys_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

func TestCheckRotationSafety(t *testing.T) {
	const day = 24 * time.Hour
	tests := map[string]struct {
		maxActiveKeys                               int
		rotateEvery, expiration, allowExpiredWindow time.Duration
		wantErr                                     string
		wantIs                                      error
	}{
		"keystone defaults rotated daily": {
			maxActiveKeys: 3, rotateEvery: day, expiration: time.Hour,
		},
		"exactly on the bound": {
			maxActiveKeys: 6, rotateEvery: 6 * time.Hour, expiration: day,
		},
		"expiration plus window exactly on the bound": {
			maxActiveKeys: 5, rotateEvery: time.Hour, expiration: time.Hour, allowExpiredWindow: 2 * time.Hour,
		},
		"one nanosecond beyond the bound": {
			maxActiveKeys: 6, rotateEvery: 6 * time.Hour, expiration: day + time.Nanosecond,
			wantErr: "unsafe key rotation: with maxActiveKeys 6 and a rotation every 6h0m0s a key is removed 24h0m0s after the rotation that retires it, " +
				"but a token needs it for token expiration 24h0m0.000000001s + allow-expired window 0s; maxActiveKeys must be at least 7",
			wantIs: keys.ErrUnsafeRotation,
		},
		"allow-expired window counts": {
			maxActiveKeys: 3, rotateEvery: day, expiration: time.Hour, allowExpiredWindow: 2 * day,
			wantErr: "unsafe key rotation: with maxActiveKeys 3 and a rotation every 24h0m0s a key is removed 24h0m0s after the rotation that retires it, " +
				"but a token needs it for token expiration 1h0m0s + allow-expired window 48h0m0s; maxActiveKeys must be at least 5",
			wantIs: keys.ErrUnsafeRotation,
		},
		"credential repository: zero expiration, migration within the interval": {
			maxActiveKeys: 3, rotateEvery: day, allowExpiredWindow: day,
		},
		"maxActiveKeys below three": {
			maxActiveKeys: 2, rotateEvery: day, expiration: time.Hour,
			wantErr: "invalid key rotation settings: maxActiveKeys 2 is below 3 (staged, primary and one secondary)",
			wantIs:  keys.ErrInvalidRotationSettings,
		},
		"zero interval": {
			maxActiveKeys: 3, expiration: time.Hour,
			wantErr: "invalid key rotation settings: rotation interval 0s is not positive",
			wantIs:  keys.ErrInvalidRotationSettings,
		},
		"negative expiration": {
			maxActiveKeys: 3, rotateEvery: day, expiration: -time.Hour,
			wantErr: "invalid key rotation settings: token expiration -1h0m0s is negative",
			wantIs:  keys.ErrInvalidRotationSettings,
		},
		"negative window": {
			maxActiveKeys: 3, rotateEvery: day, expiration: time.Hour, allowExpiredWindow: -time.Second,
			wantErr: "invalid key rotation settings: allow-expired window -1s is negative",
			wantIs:  keys.ErrInvalidRotationSettings,
		},
		"no int is enough": {
			maxActiveKeys: 1 << 20, rotateEvery: time.Nanosecond, expiration: math.MaxInt64, allowExpiredWindow: math.MaxInt64,
			wantErr: "unsafe key rotation: with maxActiveKeys 1048576 and a rotation every 1ns a key is removed 1.048574ms after the rotation that retires it, " +
				"but a token needs it for token expiration 2562047h47m16.854775807s + allow-expired window 2562047h47m16.854775807s; maxActiveKeys must be at least 9223372036854775807",
			wantIs: keys.ErrUnsafeRotation,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := keys.CheckRotationSafety(tc.maxActiveKeys, tc.rotateEvery, tc.expiration, tc.allowExpiredWindow)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckRotationSafety: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantIs) {
				t.Fatalf("CheckRotationSafety = %v, want %v", err, tc.wantIs)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMinSafeActiveKeys(t *testing.T) {
	tests := map[string]struct {
		rotateEvery, expiration, allowExpiredWindow time.Duration
		want                                        int
	}{
		"never below three":             {rotateEvery: 24 * time.Hour, expiration: time.Hour, want: 3},
		"nothing to keep":               {rotateEvery: time.Hour, want: 3},
		"exact multiple":                {rotateEvery: 6 * time.Hour, expiration: 24 * time.Hour, want: 6},
		"rounds up":                     {rotateEvery: 6 * time.Hour, expiration: 24*time.Hour + 1, want: 7},
		"window counts":                 {rotateEvery: time.Hour, expiration: time.Hour, allowExpiredWindow: 2 * time.Hour, want: 5},
		"sum beyond time.Duration":      {rotateEvery: math.MaxInt64 / 4, expiration: math.MaxInt64, allowExpiredWindow: math.MaxInt64, want: 11},
		"no int is enough":              {rotateEvery: time.Nanosecond, expiration: math.MaxInt64, allowExpiredWindow: math.MaxInt64, want: math.MaxInt},
		"interval that is not positive": {rotateEvery: 0, expiration: time.Hour, want: math.MaxInt},
		"negative durations count as 0": {rotateEvery: time.Hour, expiration: -time.Hour, allowExpiredWindow: -time.Hour, want: 3},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := keys.MinSafeActiveKeys(tc.rotateEvery, tc.expiration, tc.allowExpiredWindow)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("MinSafeActiveKeys (-want +got):\n%s", diff)
			}
		})
	}
}
