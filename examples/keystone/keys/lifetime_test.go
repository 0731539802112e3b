package keys_test

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

// deterministicRand returns a reproducible source of key bytes for seed.
func deterministicRand(seed uint64) io.Reader {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return rand.NewChaCha8(s)
}

// mustSetup returns Setup(rand) or stops the test.
func mustSetup(t testing.TB, rand io.Reader) keys.Repository {
	t.Helper()
	repo, err := keys.Setup(rand)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	return repo
}

// mustRotate returns repo rotated n times or stops the test.
func mustRotate(t testing.TB, repo keys.Repository, rand io.Reader, maxActiveKeys, n int) keys.Repository {
	t.Helper()
	for range n {
		next, err := repo.Rotate(rand, maxActiveKeys)
		if err != nil {
			t.Fatalf("Rotate(%d): %v", maxActiveKeys, err)
		}
		repo = next
	}
	return repo
}

// mustEncrypt returns a fernet token for plaintext under key index of repo.
func mustEncrypt(t testing.TB, repo keys.Repository, index int, plaintext string, now time.Time) string {
	t.Helper()
	iv := make([]byte, 16)
	iv[0] = byte(index)
	token, err := fernetEncrypt(repo[index], []byte(plaintext), now, iv)
	if err != nil {
		t.Fatalf("encrypting with key %d: %v", index, err)
	}
	return token
}

// TestTokenSurvivesMaxActiveKeysMinusTwoRotations proves with real fernet tokens that a
// token encrypted with the primary still decrypts after N more rotations if and only if
// N <= maxActiveKeys-2, whatever the age of the repository when the token is issued, and
// that it decrypts with the very key that encrypted it.
func TestTokenSurvivesMaxActiveKeysMinusTwoRotations(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for maxActiveKeys := keys.MinActiveKeys; maxActiveKeys <= 8; maxActiveKeys++ {
		for warmUp := range maxActiveKeys + 2 {
			for n := range maxActiveKeys + 3 {
				name := fmt.Sprintf("maxActiveKeys=%d/warmUp=%d/rotations=%d", maxActiveKeys, warmUp, n)
				t.Run(name, func(t *testing.T) {
					rnd := deterministicRand(uint64(maxActiveKeys*10_000 + warmUp*100 + n))
					repo := mustRotate(t, mustSetup(t, rnd), rnd, maxActiveKeys, warmUp)
					primary := repo.Primary()
					token := mustEncrypt(t, repo, primary, "token", now)

					after := mustRotate(t, repo, rnd, maxActiveKeys, n)
					plain, by, err := fernetDecrypt(after, token)
					if want := n <= maxActiveKeys-2; want != (err == nil) {
						t.Fatalf("after %d rotations the token decrypts: %v, want %v (%s)", n, err == nil, want, after)
					}
					if err != nil {
						return
					}
					if string(plain) != "token" || by != primary {
						t.Errorf("decrypted %q with key %d, want \"token\" with key %d", plain, by, primary)
					}
				})
			}
		}
	}
}

// TestStagedKeyIsTheNextPrimary proves over many rotations that the staged key of one
// repository is the primary of the rotated one: a token encrypted with the staged key
// decrypts with the new primary alone, and a token the new primary encrypts decrypts with
// the previous repository, so a Keystone that has not yet read the rotated repository
// accepts tokens of one that has.
func TestStagedKeyIsTheNextPrimary(t *testing.T) {
	rnd := deterministicRand(42)
	repo := mustSetup(t, rnd)
	now := time.Unix(1_700_000_000, 0)
	for round := range 50 {
		maxActiveKeys := keys.MinActiveKeys + round%5
		staged := mustEncrypt(t, repo, keys.StagedIndex, "staged", now)
		next := mustRotate(t, repo, rnd, maxActiveKeys, 1)
		primary := next.Primary()
		if _, err := fernetDecryptWith(next[primary], staged); err != nil {
			t.Fatalf("round %d: a token of the staged key does not decrypt with the new primary %d: %v", round, primary, err)
		}
		fresh := mustEncrypt(t, next, primary, "fresh", now)
		if _, by, err := fernetDecrypt(repo, fresh); err != nil || by != keys.StagedIndex {
			t.Fatalf("round %d: the previous repository decrypts a token of the new primary with key %d, %v; want key 0", round, by, err)
		}
		if _, err := fernetDecryptWith(next[keys.StagedIndex], staged); err == nil {
			t.Fatalf("round %d: the new staged key decrypts a token of the old staged key", round)
		}
		repo = next
	}
}

// TestCheckRotationSafetyAgreesWithTokens runs Keystone's rotation over time with real
// fernet tokens: the repository is rotated every rotateEvery, tokens are issued with the
// primary at the start, middle and last nanosecond of a primary's time, and each is
// decrypted with the repository of the last instant it is still needed
// (issue + expiration + allow-expired window). CheckRotationSafety must accept exactly
// the configurations in which no token is lost.
func TestCheckRotationSafetyAgreesWithTokens(t *testing.T) {
	epoch := time.Unix(1_700_000_000, 0)
	for maxActiveKeys := keys.MinActiveKeys; maxActiveKeys <= 7; maxActiveKeys++ {
		for _, rotateEvery := range []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour} {
			for _, expiration := range []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour, 72 * time.Hour} {
				for _, window := range []time.Duration{0, 30 * time.Minute, 48 * time.Hour} {
					name := fmt.Sprintf("maxActiveKeys=%d/every=%s/expiration=%s/window=%s", maxActiveKeys, rotateEvery, expiration, window)
					t.Run(name, func(t *testing.T) {
						lost := simulateLostTokens(t, maxActiveKeys, rotateEvery, expiration, window, epoch)
						err := keys.CheckRotationSafety(maxActiveKeys, rotateEvery, expiration, window)
						if err != nil && !errors.Is(err, keys.ErrUnsafeRotation) {
							t.Fatalf("CheckRotationSafety: %v, want nil or ErrUnsafeRotation", err)
						}
						if (lost > 0) != (err != nil) {
							t.Errorf("%d tokens lost their key, CheckRotationSafety = %v", lost, err)
						}
						if minimum := keys.MinSafeActiveKeys(rotateEvery, expiration, window); (maxActiveKeys >= minimum) != (lost == 0) {
							t.Errorf("MinSafeActiveKeys = %d, but with %d keys %d tokens are lost", minimum, maxActiveKeys, lost)
						}
					})
				}
			}
		}
	}
}

// simulateLostTokens returns how many of the sampled tokens cannot be decrypted at the last
// instant they are needed.
func simulateLostTokens(t *testing.T, maxActiveKeys int, rotateEvery, expiration, window time.Duration, epoch time.Time) int {
	t.Helper()
	rnd := deterministicRand(uint64(maxActiveKeys) ^ uint64(rotateEvery) ^ uint64(expiration) ^ uint64(window))
	// repos[k] is the repository from the k-th rotation (at k*rotateEvery) to the next.
	repos := []keys.Repository{mustSetup(t, rnd)}
	at := func(d time.Duration) keys.Repository {
		k := int(d / rotateEvery)
		for len(repos) <= k {
			repos = append(repos, mustRotate(t, repos[len(repos)-1], rnd, maxActiveKeys, 1))
		}
		return repos[k]
	}
	lost := 0
	for k := range 3 {
		start := time.Duration(k) * rotateEvery
		for _, issued := range []time.Duration{start, start + rotateEvery/2, start + rotateEvery - 1} {
			repo := at(issued)
			token := mustEncrypt(t, repo, repo.Primary(), "token", epoch.Add(issued))
			if _, _, err := fernetDecrypt(at(issued+expiration+window-1), token); err != nil {
				lost++
			}
		}
	}
	return lost
}
