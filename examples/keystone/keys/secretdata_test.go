package keys_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

func TestFromSecretData(t *testing.T) {
	tests := map[string]struct {
		data    map[string][]byte
		want    keys.Repository
		wantErr string
	}{
		"fresh repository": {
			data: map[string][]byte{"0": testKey(0), "1": testKey(1)},
			want: keys.Repository{0: testKey(0), 1: testKey(1)},
		},
		"indices with gaps and more than one digit": {
			data: map[string][]byte{"0": testKey(0), "9": testKey(9), "10": testKey(10), "11": testKey(11)},
			want: keys.Repository{0: testKey(0), 9: testKey(9), 10: testKey(10), 11: testKey(11)},
		},
		"nil data": {
			wantErr: "invalid key repository: no staged key 0; no primary key (an index above 0)",
		},
		"leading zero would claim index 1 twice": {
			data:    map[string][]byte{"0": testKey(0), "1": testKey(1), "01": testKey(2)},
			wantErr: `invalid key repository: data key "01": not a key index (a non-negative decimal number without sign or leading zeros)`,
		},
		"plus sign": {
			data:    map[string][]byte{"0": testKey(0), "+1": testKey(1)},
			wantErr: `invalid key repository: data key "+1": not a key index (a non-negative decimal number without sign or leading zeros)`,
		},
		"negative index": {
			data:    map[string][]byte{"0": testKey(0), "1": testKey(1), "-1": testKey(2)},
			wantErr: `invalid key repository: data key "-1": not a key index (a non-negative decimal number without sign or leading zeros)`,
		},
		"space": {
			data:    map[string][]byte{"0": testKey(0), " 1": testKey(1)},
			wantErr: `invalid key repository: data key " 1": not a key index (a non-negative decimal number without sign or leading zeros)`,
		},
		"name that is not a number": {
			data:    map[string][]byte{"0": testKey(0), "1": testKey(1), "primary": testKey(2)},
			wantErr: `invalid key repository: data key "primary": not a key index (a non-negative decimal number without sign or leading zeros)`,
		},
		"empty name": {
			data:    map[string][]byte{"": testKey(2), "0": testKey(0), "1": testKey(1)},
			wantErr: `invalid key repository: data key "": not a key index (a non-negative decimal number without sign or leading zeros)`,
		},
		"index beyond int": {
			data:    map[string][]byte{"0": testKey(0), "99999999999999999999": testKey(1)},
			wantErr: `invalid key repository: data key "99999999999999999999": not a key index (a non-negative decimal number without sign or leading zeros)`,
		},
		"invalid key is named by index": {
			data:    map[string][]byte{"0": testKey(0), "1": testKey(1)[:40]},
			wantErr: "invalid key repository: key 1: 40 characters, want 44 characters of URL-safe base64",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := keys.FromSecretData(tc.data)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("FromSecretData: %v", err)
				}
				if diff := cmp.Diff(tc.want, got, redactKeys); diff != "" {
					t.Errorf("repository (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, keys.ErrInvalidRepository) {
				t.Fatalf("FromSecretData = %v, want ErrInvalidRepository", err)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			for _, v := range tc.data {
				assertNoKeyMaterial(t, err.Error(), v)
			}
		})
	}
}

// TestSecretDataSharesNoBytes checks that neither direction of the conversion aliases the
// caller's bytes: changing the Secret data afterwards changes no repository, and the
// other way round.
func TestSecretDataSharesNoBytes(t *testing.T) {
	data := map[string][]byte{"0": testKey(0), "1": testKey(1)}
	repo, err := keys.FromSecretData(data)
	if err != nil {
		t.Fatal(err)
	}
	clear(data["0"])
	if diff := cmp.Diff(keys.Repository{0: testKey(0), 1: testKey(1)}, repo, redactKeys); diff != "" {
		t.Errorf("changing the Secret data changed the repository (-want +got):\n%s", diff)
	}
	out := repo.SecretData()
	clear(out["1"])
	if diff := cmp.Diff(keys.Repository{0: testKey(0), 1: testKey(1)}, repo, redactKeys); diff != "" {
		t.Errorf("changing SecretData's result changed the repository (-want +got):\n%s", diff)
	}
}

func TestSecretData(t *testing.T) {
	repo := keys.Repository{0: testKey(0), 9: testKey(9), 10: testKey(10)}
	want := map[string][]byte{"0": testKey(0), "9": testKey(9), "10": testKey(10)}
	if diff := cmp.Diff(want, repo.SecretData(), redactKeys); diff != "" {
		t.Errorf("SecretData (-want +got):\n%s", diff)
	}
}
