package keys

import (
	cryptorand "crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"slices"
)

// Setup creates a fresh repository with a staged key 0 and a primary key 1, as
// keystone-manage fernet_setup and credential_setup do. It reads the primary key's
// [KeySize] bytes from rand first and the staged key's next; a nil rand reads from
// crypto/rand. It fails when rand fails or returns the same bytes twice.
//
// The operator calls Setup once per repository and never again while a backup of the
// repository may still be restored.
func Setup(rand io.Reader) (Repository, error) {
	repo := Repository{}
	for _, i := range []int{1, StagedIndex} {
		key, err := newKey(rand, repo)
		if err != nil {
			return nil, fmt.Errorf("creating key %d: %w", i, err)
		}
		repo[i] = key
	}
	return repo, nil
}

// newKey reads [KeySize] bytes from rand (crypto/rand when nil) and returns them encoded.
// It refuses bytes equal to a key of existing: a source that repeats itself is broken, and
// a repeated key would make a rotation change nothing.
func newKey(rand io.Reader, existing Repository) ([]byte, error) {
	if rand == nil {
		rand = cryptorand.Reader
	}
	raw := make([]byte, KeySize)
	if _, err := io.ReadFull(rand, raw); err != nil {
		return nil, fmt.Errorf("reading %d random bytes: %w", KeySize, err)
	}
	key := []byte(base64.URLEncoding.EncodeToString(raw))
	for _, i := range existing.indices() {
		if slices.Equal(existing[i], key) {
			return nil, fmt.Errorf("the random source returned the bytes of key %d again", i)
		}
	}
	return key, nil
}
