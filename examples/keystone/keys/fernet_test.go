package keys_test

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
)

// This file holds a small fernet implementation used only to prove, with real tokens, what
// the repository's keys can decrypt. A fernet token is the padded URL-safe base64 of
//
//	0x80 | timestamp (8 bytes, big-endian Unix seconds) | IV (16 bytes) | ciphertext | HMAC (32 bytes)
//
// where the ciphertext is AES-128-CBC with PKCS#7 padding under the second half of the
// decoded key, and the HMAC is HMAC-SHA256 under the first half over everything before it.

const fernetVersion = 0x80

// errFernetNoKey is returned by fernetDecrypt when no key of the repository decrypts a token.
var errFernetNoKey = errors.New("no key decrypts the token")

// fernetHalves decodes an encoded repository key into its signing and encryption halves.
func fernetHalves(encoded []byte) (signing, encryption []byte, err error) {
	raw, err := base64.URLEncoding.DecodeString(string(encoded))
	if err != nil || len(raw) != keys.KeySize {
		return nil, nil, fmt.Errorf("not a fernet key")
	}
	return raw[:16], raw[16:], nil
}

// fernetEncrypt returns the token for plaintext under the encoded key, issued at now with iv.
func fernetEncrypt(encoded, plaintext []byte, now time.Time, iv []byte) (string, error) {
	signing, encryption, err := fernetHalves(encoded)
	if err != nil {
		return "", err
	}
	block, err := aes.NewCipher(encryption)
	if err != nil {
		return "", err
	}
	pad := aes.BlockSize - len(plaintext)%aes.BlockSize
	padded := append(slices.Clone(plaintext), bytes.Repeat([]byte{byte(pad)}, pad)...)
	ciphertext := make([]byte, len(padded))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ciphertext, padded)

	msg := []byte{fernetVersion}
	msg = binary.BigEndian.AppendUint64(msg, uint64(now.Unix()))
	msg = append(msg, iv...)
	msg = append(msg, ciphertext...)
	mac := hmac.New(sha256.New, signing)
	mac.Write(msg)
	return base64.URLEncoding.EncodeToString(mac.Sum(msg)), nil
}

// fernetDecryptWith returns the plaintext of token under one encoded key.
func fernetDecryptWith(encoded []byte, token string) ([]byte, error) {
	signing, encryption, err := fernetHalves(encoded)
	if err != nil {
		return nil, err
	}
	raw, err := base64.URLEncoding.DecodeString(token)
	if err != nil {
		return nil, fmt.Errorf("token is not URL-safe base64")
	}
	const header = 1 + 8 + aes.BlockSize
	if len(raw) < header+aes.BlockSize+sha256.Size || raw[0] != fernetVersion {
		return nil, fmt.Errorf("not a fernet token")
	}
	body, sum := raw[:len(raw)-sha256.Size], raw[len(raw)-sha256.Size:]
	mac := hmac.New(sha256.New, signing)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), sum) {
		return nil, fmt.Errorf("HMAC does not match")
	}
	ciphertext := body[header:]
	if len(ciphertext)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("ciphertext is not whole blocks")
	}
	block, err := aes.NewCipher(encryption)
	if err != nil {
		return nil, err
	}
	plain := make([]byte, len(ciphertext))
	cipher.NewCBCDecrypter(block, body[9:header]).CryptBlocks(plain, ciphertext)
	pad := int(plain[len(plain)-1])
	if pad < 1 || pad > aes.BlockSize || !bytes.Equal(plain[len(plain)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, fmt.Errorf("bad padding")
	}
	return plain[:len(plain)-pad], nil
}

// fernetDecrypt decrypts token with the keys of repo, primary first, as Keystone's
// MultiFernet does, and returns the plaintext and the index of the key that decrypted it.
func fernetDecrypt(repo keys.Repository, token string) ([]byte, int, error) {
	indices := make([]int, 0, len(repo))
	for i := range repo {
		indices = append(indices, i)
	}
	slices.Sort(indices)
	slices.Reverse(indices)
	for _, i := range indices {
		if plain, err := fernetDecryptWith(repo[i], token); err == nil {
			return plain, i, nil
		}
	}
	return nil, -1, errFernetNoKey
}

// TestFernetHelper checks the test-only fernet implementation against the published
// example token of the fernet format, and that it refuses a wrong key and tampered tokens,
// so the rotation tests built on it can fail.
func TestFernetHelper(t *testing.T) {
	const (
		secret = "cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4="
		token  = "gAAAAAAdwJ6wAAECAwQFBgcICQoLDA0ODy021cpGVWKZ_eEwCGM4BLLF_5CV9dOPmrhuVUPgJobwOz7JcbmrR64jVmpU4IwqDA=="
	)
	now, err := time.Parse(time.RFC3339, "1985-10-26T01:20:00-07:00")
	if err != nil {
		t.Fatal(err)
	}
	iv := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	got, err := fernetEncrypt([]byte(secret), []byte("hello"), now, iv)
	if err != nil {
		t.Fatal(err)
	}
	if got != token {
		t.Errorf("fernetEncrypt = %s, want the published token %s", got, token)
	}
	plain, err := fernetDecryptWith([]byte(secret), token)
	if err != nil || string(plain) != "hello" {
		t.Errorf("fernetDecryptWith(published token) = %q, %v; want \"hello\"", plain, err)
	}

	other := []byte(base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{7}, keys.KeySize)))
	if _, err := fernetDecryptWith(other, token); err == nil {
		t.Error("a token decrypted with a different key")
	}
	raw, _ := base64.URLEncoding.DecodeString(token)
	for _, at := range []int{0, 5, 20, 40, len(raw) - 1} {
		tampered := slices.Clone(raw)
		tampered[at] ^= 1
		if _, err := fernetDecryptWith([]byte(secret), base64.URLEncoding.EncodeToString(tampered)); err == nil {
			t.Errorf("a token with byte %d flipped decrypted", at)
		}
	}
}
