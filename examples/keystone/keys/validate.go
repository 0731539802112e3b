package keys

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Validate checks that the repository can be used by Keystone and rotated: the staged key
// 0 is present, a primary key with an index above 0 is present, no index is negative, and
// every key is exactly [EncodedKeySize] characters of padded URL-safe base64 that decode to
// [KeySize] bytes, written the way Python's base64.urlsafe_b64encode writes them: no line
// breaks, no standard-base64 '+' or '/', no stray bits before the padding. Indices are map
// keys, so each is present once.
//
// The error wraps [ErrInvalidRepository] and names every offending index; it never
// contains a key.
func (r Repository) Validate() error {
	var problems []string
	if _, ok := r[StagedIndex]; !ok {
		problems = append(problems, "no staged key 0")
	}
	if r.Primary() <= StagedIndex {
		problems = append(problems, "no primary key (an index above 0)")
	}
	for _, i := range r.indices() {
		if i < 0 {
			problems = append(problems, fmt.Sprintf("key %d: negative index", i))
			continue
		}
		if problem := checkKey(r[i]); problem != "" {
			problems = append(problems, fmt.Sprintf("key %d: %s", i, problem))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidRepository, strings.Join(problems, "; "))
	}
	return nil
}

// checkKey describes what is wrong with one encoded key, or returns "" when nothing is.
// The description never contains the key.
func checkKey(key []byte) string {
	if len(key) != EncodedKeySize {
		return fmt.Sprintf("%d characters, want %d characters of URL-safe base64", len(key), EncodedKeySize)
	}
	decoded, err := base64.URLEncoding.Strict().DecodeString(string(key))
	if err != nil {
		return "not padded URL-safe base64"
	}
	if len(decoded) != KeySize {
		return fmt.Sprintf("decodes to %d bytes, want %d", len(decoded), KeySize)
	}
	return ""
}
