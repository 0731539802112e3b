package keys_test

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

func TestRotate(t *testing.T) {
	errBroken := errors.New("entropy source broken")
	newStaged := func() io.Reader { return bytes.NewReader(bytes.Repeat([]byte{0xaa}, 32)) }
	tests := map[string]struct {
		repo          keys.Repository
		maxActiveKeys int
		rand          io.Reader
		want          keys.Repository
		wantErr       string
		wantIs        error
	}{
		"fresh repository gains a secondary": {
			repo:          keys.Repository{0: testKey(0), 1: testKey(1)},
			maxActiveKeys: 3,
			want:          keys.Repository{0: testKey(0xaa), 1: testKey(1), 2: testKey(0)},
		},
		"full repository loses its oldest secondary": {
			repo:          keys.Repository{0: testKey(0), 1: testKey(1), 2: testKey(2)},
			maxActiveKeys: 3,
			want:          keys.Repository{0: testKey(0xaa), 2: testKey(2), 3: testKey(0)},
		},
		"room for more keys": {
			repo:          keys.Repository{0: testKey(0), 1: testKey(1), 2: testKey(2)},
			maxActiveKeys: 5,
			want:          keys.Repository{0: testKey(0xaa), 1: testKey(1), 2: testKey(2), 3: testKey(0)},
		},
		"gaps are kept, the lowest indices go": {
			repo:          keys.Repository{0: testKey(0), 2: testKey(2), 5: testKey(5), 9: testKey(9)},
			maxActiveKeys: 4,
			want:          keys.Repository{0: testKey(0xaa), 5: testKey(5), 9: testKey(9), 10: testKey(0)},
		},
		"lowered maxActiveKeys removes several secondaries at once": {
			repo:          keys.Repository{0: testKey(0), 1: testKey(1), 2: testKey(2), 3: testKey(3), 4: testKey(4), 5: testKey(5)},
			maxActiveKeys: 3,
			want:          keys.Repository{0: testKey(0xaa), 5: testKey(5), 6: testKey(0)},
		},
		"maxActiveKeys below three": {
			repo:          keys.Repository{0: testKey(0), 1: testKey(1)},
			maxActiveKeys: 2,
			wantErr:       "invalid key rotation settings: maxActiveKeys 2 is below 3 (staged, primary and one secondary)",
			wantIs:        keys.ErrInvalidRotationSettings,
		},
		"invalid repository": {
			repo:          keys.Repository{1: testKey(1)},
			maxActiveKeys: 3,
			wantErr:       "rotating: invalid key repository: no staged key 0",
			wantIs:        keys.ErrInvalidRepository,
		},
		"primary at the highest index": {
			repo:          keys.Repository{0: testKey(0), math.MaxInt: testKey(1)},
			maxActiveKeys: 3,
			wantErr:       "rotating: invalid key repository: primary key " + strconv.Itoa(math.MaxInt) + " has the highest possible index",
			wantIs:        keys.ErrInvalidRepository,
		},
		"failing source": {
			repo:          keys.Repository{0: testKey(0), 1: testKey(1)},
			maxActiveKeys: 3,
			rand:          iotest.ErrReader(errBroken),
			wantErr:       "creating the new staged key 0: reading 32 random bytes: entropy source broken",
			wantIs:        errBroken,
		},
		"source that returns an existing key": {
			repo:          keys.Repository{0: testKey(0), 1: testKey(1), 2: testKey(0xaa)},
			maxActiveKeys: 3,
			wantErr:       "creating the new staged key 0: the random source returned the bytes of key 2 again",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rand := tc.rand
			if rand == nil {
				rand = newStaged()
			}
			before := cloneRepo(tc.repo)
			got, err := tc.repo.Rotate(rand, tc.maxActiveKeys)
			if diff := cmp.Diff(before, tc.repo, redactKeys); diff != "" {
				t.Errorf("Rotate changed its receiver (-before +after):\n%s", diff)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Rotate: %v", err)
				}
				if diff := cmp.Diff(tc.want, got, redactKeys); diff != "" {
					t.Errorf("repository (-want +got):\n%s", diff)
				}
				return
			}
			if got != nil {
				t.Errorf("Rotate returned %s with its error", got)
			}
			if err == nil {
				t.Fatalf("Rotate succeeded, want %q", tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v does not wrap %v", err, tc.wantIs)
			}
			assertNoKeyMaterial(t, err.Error(), repoValues(tc.repo)...)
		})
	}
}
