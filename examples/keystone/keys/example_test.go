package keys_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

// Example sets up a repository, stores it as Secret data, and rotates it with
// maxActiveKeys 3 after checking that a daily rotation keeps every token decryptable.
// Production code passes nil (crypto/rand); the example uses a seeded source so that it
// prints the same every time, and prints indices only, never keys.
func Example() {
	rand := rand.NewChaCha8([32]byte{1})
	const maxActiveKeys = 3
	if err := keys.CheckRotationSafety(maxActiveKeys, 24*time.Hour, time.Hour, 2*time.Hour); err != nil {
		fmt.Println(err)
		return
	}

	repo, err := keys.Setup(rand)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(repo)
	for range 3 {
		repo, err = repo.Rotate(rand, maxActiveKeys)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(repo)
	}

	data := repo.SecretData()
	names := make([]string, 0, len(data))
	for name := range data {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Println("Secret data keys:", names)

	restored, err := keys.FromSecretData(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("restored primary:", restored.Primary())

	// Output:
	// key repository: staged 0, primary 1
	// key repository: staged 0, primary 2, secondaries [1]
	// key repository: staged 0, primary 3, secondaries [2]
	// key repository: staged 0, primary 4, secondaries [3]
	// Secret data keys: [0 3 4]
	// restored primary: 4
}

// ExampleCheckRotationSafety shows the refusal of a rotation schedule that would remove
// keys of tokens still inside Keystone's allow-expired window, and the smallest safe
// maxActiveKeys.
func ExampleCheckRotationSafety() {
	err := keys.CheckRotationSafety(3, 6*time.Hour, 24*time.Hour, 48*time.Hour)
	fmt.Println(errors.Is(err, keys.ErrUnsafeRotation))
	fmt.Println(err)
	fmt.Println(keys.MinSafeActiveKeys(6*time.Hour, 24*time.Hour, 48*time.Hour))

	// Output:
	// true
	// unsafe key rotation: with maxActiveKeys 3 and a rotation every 6h0m0s a key is removed 6h0m0s after the rotation that retires it, but a token needs it for token expiration 24h0m0s + allow-expired window 48h0m0s; maxActiveKeys must be at least 14
	// 14
}

// ExampleRepository_Validate shows that a validation error names the key by index only.
func ExampleRepository_Validate() {
	repo := keys.Repository{0: []byte("not-a-key"), 1: []byte(strings.Repeat("A", 44))}
	err := repo.Validate()
	fmt.Println(errors.Is(err, keys.ErrInvalidRepository))
	fmt.Println(err)

	// Output:
	// true
	// invalid key repository: key 0: 9 characters, want 44 characters of URL-safe base64; key 1: decodes to 33 bytes, want 32
}
