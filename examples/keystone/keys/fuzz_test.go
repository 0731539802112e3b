package keys_test

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

// FuzzFromSecretData feeds FromSecretData Secret data with three arbitrary data keys and
// values. Whatever the input, it must not panic; a refusal wraps ErrInvalidRepository
// and repeats no value; an accepted repository is valid, round-trips through SecretData
// unchanged, names exactly the data keys it was given, and rotates unless its primary has
// the highest possible index.
func FuzzFromSecretData(f *testing.F) {
	seed := mustSetup(f, deterministicRand(9))
	f.Add("0", seed[0], "1", seed[1], "2", []byte(nil))
	f.Add("0", seed[0], "7", seed[1], "12", testKey(12))
	f.Add("0", seed[0], "01", seed[1], "", []byte("x"))
	f.Add("-1", seed[0], "+2", seed[1], "1e3", testKey(3))
	f.Add("0", []byte(strings.Repeat("A", 44)), "1", seed[1], "99999999999999999999", []byte("\n"))
	f.Add("0", seed[0], strconv.Itoa(math.MaxInt), seed[1], "", []byte(nil))
	f.Fuzz(func(t *testing.T, name1 string, value1 []byte, name2 string, value2 []byte, name3 string, value3 []byte) {
		data := map[string][]byte{}
		for _, kv := range []struct {
			name  string
			value []byte
		}{{name1, value1}, {name2, value2}, {name3, value3}} {
			if kv.value != nil {
				data[kv.name] = kv.value
			}
		}
		before := map[string][]byte{}
		for name, value := range data {
			before[name] = slices.Clone(value)
		}

		repo, err := keys.FromSecretData(data)
		if diff := cmp.Diff(before, data, redactKeys); diff != "" {
			t.Fatalf("FromSecretData changed its input (-before +after):\n%s", diff)
		}
		if err != nil {
			if !errors.Is(err, keys.ErrInvalidRepository) {
				t.Fatalf("error %v does not wrap ErrInvalidRepository", err)
			}
			if repo != nil {
				t.Fatalf("FromSecretData returned %s with its error", repo)
			}
			for _, value := range data {
				// The error may name data keys (they are not secret): a value that is
				// itself part of a data key name cannot be told apart from it.
				if len(value) >= 16 && strings.Contains(err.Error(), string(value)) && !partOfAName(data, string(value)) {
					t.Fatalf("error repeats a value: %v", err)
				}
			}
			return
		}

		if err := repo.Validate(); err != nil {
			t.Fatalf("FromSecretData accepted an invalid repository: %v", err)
		}
		if diff := cmp.Diff(data, repo.SecretData(), redactKeys); diff != "" {
			t.Fatalf("SecretData does not give back the input (-input +SecretData):\n%s", diff)
		}
		for name := range data {
			if i, err := strconv.Atoi(name); err != nil || strconv.Itoa(i) != name {
				t.Fatalf("accepted data key %q that is not a canonical index", name)
			}
		}
		rotated, err := repo.Rotate(deterministicRand(1), keys.MinActiveKeys)
		if repo.Primary() == math.MaxInt {
			if !errors.Is(err, keys.ErrInvalidRepository) {
				t.Fatalf("Rotate with primary %d = %v, want ErrInvalidRepository", repo.Primary(), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Rotate of an accepted repository: %v", err)
		}
		if rotated.Primary() != repo.Primary()+1 {
			t.Fatalf("rotated primary %d, want %d", rotated.Primary(), repo.Primary()+1)
		}
	})
}

// partOfAName reports whether v occurs in one of data's keys, as it is or as the
// error quotes it.
func partOfAName(data map[string][]byte, v string) bool {
	for name := range data {
		// The error quotes names (%q): an escape such as \x00 followed by digits can
		// spell a value that the raw name does not hold.
		if strings.Contains(name, v) || strings.Contains(strconv.Quote(name), v) {
			return true
		}
	}
	return false
}
