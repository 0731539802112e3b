package keys

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// KeySize is the length in bytes of a decoded key: 16 bytes of HMAC-SHA256 signing key
// followed by 16 bytes of AES-128 encryption key.
const KeySize = 32

// EncodedKeySize is the length of a key as stored in a repository: [KeySize] bytes in
// padded URL-safe base64.
const EncodedKeySize = 44

// StagedIndex is the index of the staged key, the next primary.
const StagedIndex = 0

// MinActiveKeys is the smallest maxActiveKeys [Repository.Rotate] and
// [CheckRotationSafety] accept: the staged key, the primary and one secondary, so the
// primary retired by a rotation is still there to decrypt what it encrypted.
const MinActiveKeys = 3

// ErrInvalidRepository is wrapped by every error about the content of a repository: a
// missing staged or primary key, a key that is not [EncodedKeySize] characters of padded
// URL-safe base64 encoding [KeySize] bytes, a negative index, or a Secret data key that is
// not a decimal index.
var ErrInvalidRepository = errors.New("invalid key repository")

// ErrInvalidRotationSettings is wrapped by every error about rotation settings that make
// no sense on their own: maxActiveKeys below [MinActiveKeys], a rotation interval that is
// not positive, or a negative token expiration or allow-expired window.
var ErrInvalidRotationSettings = errors.New("invalid key rotation settings")

// ErrUnsafeRotation is wrapped by the error [CheckRotationSafety] returns when a rotation
// could remove a key that a token or credential still needs.
var ErrUnsafeRotation = errors.New("unsafe key rotation")

// Repository is a Keystone key repository: each index maps to the key file's content, a
// key of [KeySize] random bytes in padded URL-safe base64 ([EncodedKeySize] bytes).
// Index 0 ([StagedIndex]) is the staged key, the highest index the primary key, and every
// other index a secondary key. Build one with [Setup] or [FromSecretData]; a Repository
// built by hand is checked by [Repository.Validate] and by every method that changes or
// converts it.
//
// String, GoString and MarshalLog name the indices and their roles only, so printing or
// logging a Repository never reveals a key.
type Repository map[int][]byte

// Primary returns the index of the primary key, the highest index. It returns 0 when the
// repository holds only the staged key and -1 when it is empty; [Repository.Validate]
// refuses both.
func (r Repository) Primary() int {
	primary := -1
	for i := range r {
		primary = max(primary, i)
	}
	return primary
}

// Staged returns the index of the staged key, [StagedIndex], or -1 when the repository
// has no staged key; [Repository.Validate] refuses that.
func (r Repository) Staged() int {
	if _, ok := r[StagedIndex]; !ok {
		return -1
	}
	return StagedIndex
}

// Secondaries returns the indices of the secondary keys, every index between the staged
// key and the primary, in ascending order: the oldest first, which is the order
// [Repository.Rotate] removes them in. It returns an empty, non-nil slice when there are
// none.
func (r Repository) Secondaries() []int {
	primary := r.Primary()
	secondaries := []int{}
	for i := range r {
		if i > StagedIndex && i < primary {
			secondaries = append(secondaries, i)
		}
	}
	slices.Sort(secondaries)
	return secondaries
}

// indices returns every index in ascending order.
func (r Repository) indices() []int {
	indices := make([]int, 0, len(r))
	for i := range r {
		indices = append(indices, i)
	}
	slices.Sort(indices)
	return indices
}

// clone returns a deep copy that shares no key bytes with r.
func (r Repository) clone() Repository {
	out := make(Repository, len(r))
	for i, key := range r {
		out[i] = slices.Clone(key)
	}
	return out
}

// String describes the repository by its indices and their roles, for example
// "key repository: staged 0, primary 3, secondaries [1 2]". It never contains a key.
func (r Repository) String() string {
	var b strings.Builder
	b.WriteString("key repository: ")
	if len(r) == 0 {
		b.WriteString("empty")
		return b.String()
	}
	parts := []string{}
	if r.Staged() == StagedIndex {
		parts = append(parts, "staged 0")
	}
	if primary := r.Primary(); primary > StagedIndex {
		parts = append(parts, "primary "+strconv.Itoa(primary))
	}
	secondaries := r.Secondaries()
	if len(secondaries) > 0 {
		parts = append(parts, fmt.Sprintf("secondaries %v", secondaries))
	}
	negative := []int{}
	for _, i := range r.indices() {
		if i < 0 {
			negative = append(negative, i)
		}
	}
	if len(negative) > 0 {
		parts = append(parts, fmt.Sprintf("negative indices %v", negative))
	}
	b.WriteString(strings.Join(parts, ", "))
	return b.String()
}

// GoString returns the same description as [Repository.String], so the %#v verb of the
// fmt package does not print the keys either.
func (r Repository) GoString() string {
	return r.String()
}

// MarshalLog returns the same description as [Repository.String]; logr calls it when a
// Repository is logged as a value, so structured logs do not carry the keys either.
func (r Repository) MarshalLog() any {
	return r.String()
}
