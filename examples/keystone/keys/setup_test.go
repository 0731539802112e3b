package keys_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

func TestSetup(t *testing.T) {
	errBroken := errors.New("entropy source broken")
	tests := map[string]struct {
		rand    io.Reader
		want    keys.Repository
		wantErr string
		wantIs  error
	}{
		"the primary is read first, the staged key next": {
			rand: bytes.NewReader(append(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)...)),
			want: keys.Repository{1: testKey(1), 0: testKey(2)},
		},
		"failing source": {
			rand:    iotest.ErrReader(errBroken),
			wantErr: "creating key 1: reading 32 random bytes: entropy source broken",
			wantIs:  errBroken,
		},
		"source that runs dry after the primary": {
			rand:    bytes.NewReader(bytes.Repeat([]byte{1}, 40)),
			wantErr: "creating key 0: reading 32 random bytes: unexpected EOF",
			wantIs:  io.ErrUnexpectedEOF,
		},
		"source that repeats itself": {
			rand:    bytes.NewReader(make([]byte, 64)),
			wantErr: "creating key 0: the random source returned the bytes of key 1 again",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := keys.Setup(tc.rand)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Setup: %v", err)
				}
				if diff := cmp.Diff(tc.want, got, redactKeys); diff != "" {
					t.Errorf("repository (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("Setup succeeded, want %q", tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v does not wrap %v", err, tc.wantIs)
			}
		})
	}
}

// TestSetupWithCryptoRand checks that a nil source reads crypto/rand: two repositories are
// valid and share no key.
func TestSetupWithCryptoRand(t *testing.T) {
	a := mustSetup(t, nil)
	b := mustSetup(t, nil)
	for _, repo := range []keys.Repository{a, b} {
		if err := repo.Validate(); err != nil {
			t.Fatalf("Setup(nil): %v", err)
		}
	}
	for _, x := range repoValues(a) {
		for _, y := range repoValues(b) {
			if bytes.Equal(x, y) {
				t.Fatal("two repositories from crypto/rand share a key")
			}
		}
	}
	if bytes.Equal(a[0], a[1]) {
		t.Fatal("the staged key equals the primary")
	}
}
