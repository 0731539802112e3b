package keys_test

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

// TestRotateProperties rotates one repository thousands of times with a maxActiveKeys that
// changes at random (also downwards) and checks every rotation against keystone-manage
// fernet_rotate: the receiver is untouched, the old staged key is the new primary at
// Primary()+1, the new staged key is new, exactly the staged key and the maxActiveKeys-1
// highest other indices remain, every kept key keeps its bytes, no key is ever generated
// twice, and the result survives the Secret data round trip.
func TestRotateProperties(t *testing.T) {
	keyRand := deterministicRand(7)
	choice := rand.New(rand.NewPCG(1, 2))
	repo := mustSetup(t, keyRand)
	seen := map[string]bool{string(repo[0]): true, string(repo[1]): true}
	for round := range 1000 {
		maxActiveKeys := keys.MinActiveKeys + choice.IntN(6)
		before := cloneRepo(repo)

		next, err := repo.Rotate(keyRand, maxActiveKeys)
		if err != nil {
			t.Fatalf("round %d: Rotate(%d): %v", round, maxActiveKeys, err)
		}
		if err := next.Validate(); err != nil {
			t.Fatalf("round %d: rotated repository: %v", round, err)
		}
		primary := repo.Primary() + 1
		if got := next.Primary(); got != primary {
			t.Fatalf("round %d: primary %d, want %d", round, got, primary)
		}
		if !slices.Equal(next[primary], repo[keys.StagedIndex]) {
			t.Fatalf("round %d: the new primary %d is not the old staged key", round, primary)
		}
		if seen[string(next[keys.StagedIndex])] {
			t.Fatalf("round %d: the new staged key was generated before", round)
		}
		seen[string(next[keys.StagedIndex])] = true

		others := append(repo.Secondaries(), repo.Primary(), primary)
		want := append([]int{keys.StagedIndex}, others[max(0, len(others)-(maxActiveKeys-1)):]...)
		if diff := cmp.Diff(want, indicesOf(next)); diff != "" {
			t.Fatalf("round %d: indices after Rotate(%d) (-want +got):\n%s", round, maxActiveKeys, diff)
		}
		for _, i := range want[1 : len(want)-1] {
			if !slices.Equal(next[i], repo[i]) {
				t.Fatalf("round %d: key %d changed", round, i)
			}
		}
		if want := slices.Concat([]int{keys.StagedIndex}, next.Secondaries(), []int{next.Primary()}); !slices.Equal(want, indicesOf(next)) {
			t.Fatalf("round %d: staged, secondaries and primary %v do not cover the indices %v", round, want, indicesOf(next))
		}

		// The receiver did not change, and the result shares no bytes with it: clearing
		// every key of a copy of the result leaves the receiver as it was.
		scratch := next
		next = cloneRepo(scratch)
		for _, key := range scratch {
			clear(key)
		}
		if diff := cmp.Diff(before, repo, redactKeys); diff != "" {
			t.Fatalf("round %d: Rotate changed its receiver, or shares bytes with it (-before +after):\n%s", round, diff)
		}

		roundTrip, err := keys.FromSecretData(next.SecretData())
		if err != nil {
			t.Fatalf("round %d: FromSecretData(SecretData()): %v", round, err)
		}
		if diff := cmp.Diff(next, roundTrip, redactKeys); diff != "" {
			t.Fatalf("round %d: Secret data round trip (-want +got):\n%s", round, diff)
		}
		repo = next
	}
}

// cloneRepo returns a deep copy of repo.
func cloneRepo(repo keys.Repository) keys.Repository {
	out := keys.Repository{}
	for i, key := range repo {
		out[i] = slices.Clone(key)
	}
	return out
}

// indicesOf returns the indices of repo in ascending order.
func indicesOf(repo keys.Repository) []int {
	out := make([]int, 0, len(repo))
	for i := range repo {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// redactKeys makes cmp.Diff show a short SHA-256 fingerprint of each key instead of the key.
var redactKeys = cmp.Transformer("fingerprint", func(key []byte) string {
	sum := sha256.Sum256(key)
	return "sha256:" + hex.EncodeToString(sum[:6])
})
