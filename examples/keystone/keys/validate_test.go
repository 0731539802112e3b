package keys_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

// testKey returns a valid encoded key of KeySize bytes b.
func testKey(b byte) []byte {
	return []byte(base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{b}, keys.KeySize)))
}

// assertNoKeyMaterial fails when msg contains any value of values that is long enough to
// be recognised as key material.
func assertNoKeyMaterial(t *testing.T, msg string, values ...[]byte) {
	t.Helper()
	for _, v := range values {
		if len(v) >= 8 && strings.Contains(msg, string(v)) {
			t.Errorf("message %q contains key material", msg)
		}
	}
}

// repoValues returns the keys of repo.
func repoValues(repo keys.Repository) [][]byte {
	out := [][]byte{}
	for _, v := range repo {
		out = append(out, v)
	}
	return out
}

func TestValidate(t *testing.T) {
	zeros := testKey(0)
	strayBits := []byte(string(zeros[:42]) + "B=")
	tests := map[string]struct {
		repo    keys.Repository
		wantErr string
	}{
		"fresh repository": {
			repo: keys.Repository{0: testKey(0), 1: testKey(1)},
		},
		"staged, primary and secondaries with gaps": {
			repo: keys.Repository{0: testKey(0), 3: testKey(3), 7: testKey(7), 9: testKey(9)},
		},
		"empty": {
			repo:    keys.Repository{},
			wantErr: "invalid key repository: no staged key 0; no primary key (an index above 0)",
		},
		"no staged key": {
			repo:    keys.Repository{1: testKey(1), 2: testKey(2)},
			wantErr: "invalid key repository: no staged key 0",
		},
		"only the staged key": {
			repo:    keys.Repository{0: testKey(0)},
			wantErr: "invalid key repository: no primary key (an index above 0)",
		},
		"negative index": {
			repo:    keys.Repository{-1: testKey(9), 0: testKey(0), 1: testKey(1)},
			wantErr: "invalid key repository: key -1: negative index",
		},
		"truncated key": {
			repo:    keys.Repository{0: testKey(0), 1: testKey(1)[:43]},
			wantErr: "invalid key repository: key 1: 43 characters, want 44 characters of URL-safe base64",
		},
		"key with a trailing line break": {
			repo:    keys.Repository{0: testKey(0), 1: append(testKey(1), '\n')},
			wantErr: "invalid key repository: key 1: 45 characters, want 44 characters of URL-safe base64",
		},
		"empty key": {
			repo:    keys.Repository{0: {}, 1: testKey(1)},
			wantErr: "invalid key repository: key 0: 0 characters, want 44 characters of URL-safe base64",
		},
		"standard base64 alphabet": {
			repo:    keys.Repository{0: []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xff}, 32))), 1: testKey(1)},
			wantErr: "invalid key repository: key 0: not padded URL-safe base64",
		},
		"character outside the alphabet": {
			repo:    keys.Repository{0: []byte("*" + string(testKey(0)[1:])), 1: testKey(1)},
			wantErr: "invalid key repository: key 0: not padded URL-safe base64",
		},
		"stray bits before the padding": {
			repo:    keys.Repository{0: strayBits, 1: testKey(1)},
			wantErr: "invalid key repository: key 0: not padded URL-safe base64",
		},
		"44 characters without padding decode to 33 bytes": {
			repo:    keys.Repository{0: testKey(0), 2: bytes.Repeat([]byte("A"), 44)},
			wantErr: "invalid key repository: key 2: decodes to 33 bytes, want 32",
		},
		"line breaks the decoder would skip": {
			repo:    keys.Repository{0: testKey(0), 2: []byte("\n\n\n\n" + strings.Repeat("A", 40))},
			wantErr: "invalid key repository: key 2: decodes to 30 bytes, want 32",
		},
		"every problem is named": {
			repo:    keys.Repository{-3: testKey(3), 4: []byte("short"), 5: bytes.Repeat([]byte("A"), 44)},
			wantErr: "invalid key repository: no staged key 0; key -3: negative index; key 4: 5 characters, want 44 characters of URL-safe base64; key 5: decodes to 33 bytes, want 32",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.repo.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, keys.ErrInvalidRepository) {
				t.Fatalf("Validate = %v, want ErrInvalidRepository", err)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			assertNoKeyMaterial(t, err.Error(), repoValues(tc.repo)...)
		})
	}
}
