package config_test

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"regexp"
	"testing"

	"github.com/c5c3/reconciler-sdk/config"
)

func TestContentHashIsUnambiguous(t *testing.T) {
	cases := map[string]struct{ a, b map[string]string }{
		"key/value boundary":         {a: map[string]string{"a": "bc"}, b: map[string]string{"ab": "c"}},
		"entry boundary":             {a: map[string]string{"a": "b\nc=d"}, b: map[string]string{"a": "b", "c": "d"}},
		"separator-like bytes":       {a: map[string]string{"a": "b=c"}, b: map[string]string{"a=b": "c"}},
		"empty value vs no entry":    {a: map[string]string{"a": ""}, b: map[string]string{}},
		"value moved to next entry":  {a: map[string]string{"a": "x", "b": ""}, b: map[string]string{"a": "", "b": "x"}},
		"length-prefix lookalike":    {a: map[string]string{"a": "\x00\x00\x00\x00\x00\x00\x00\x01b"}, b: map[string]string{"a": "", "b": ""}},
		"same value different key":   {a: map[string]string{"identity.conf": "x"}, b: map[string]string{"glance.conf": "x"}},
		"one byte different content": {a: map[string]string{"k": "debug = true"}, b: map[string]string{"k": "debug = True"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if ha, hb := config.ContentHash(tc.a), config.ContentHash(tc.b); ha == hb {
				t.Errorf("%v and %v share hash %s", tc.a, tc.b, ha)
			}
		})
	}
}

func TestContentHashFormatAndDeterminism(t *testing.T) {
	data := map[string]string{"identity.conf": "[DEFAULT]\ndebug = false\n", "policy.yaml": "{}", "a": ""}
	got := config.ContentHash(data)
	if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(got) {
		t.Fatalf("hash %q is not 8 lower-case hex characters", got)
	}
	for range 20 {
		same := map[string]string{"policy.yaml": "{}", "a": "", "identity.conf": "[DEFAULT]\ndebug = false\n"}
		if h := config.ContentHash(same); h != got {
			t.Fatalf("hash changed between equal maps: %s vs %s", got, h)
		}
	}
	// The documented encoding, computed independently.
	h := sha256.New()
	for _, s := range []string{"a", "", "identity.conf", "[DEFAULT]\ndebug = false\n", "policy.yaml", "{}"} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(s))))
		h.Write([]byte(s))
	}
	if want := hex.EncodeToString(h.Sum(nil))[:8]; got != want {
		t.Errorf("hash %s, want %s from the documented encoding", got, want)
	}
	bytesData := map[string][]byte{}
	for k, v := range data {
		bytesData[k] = []byte(v)
	}
	if hb := config.ContentHash(bytesData); hb != got {
		t.Errorf("[]byte map hashes to %s, string map to %s", hb, got)
	}
	// Values around and beyond the internal copy buffer (4096 bytes) hash like the
	// encoding says. The content varies with a period (251, a prime) that does not divide
	// the buffer size, so a chunk that is dropped, repeated, truncated or out of order
	// changes the bytes hashed; the expected hash is computed over the whole value at once.
	for _, n := range []int{4095, 4096, 4097, 10000} {
		long := make([]byte, n)
		for i := range long {
			long[i] = byte(i % 251)
		}
		h.Reset()
		h.Write(binary.BigEndian.AppendUint64(nil, 1))
		h.Write([]byte("k"))
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(long))))
		h.Write(long)
		want := hex.EncodeToString(h.Sum(nil))[:8]
		if got := config.ContentHash(map[string]string{"k": string(long)}); got != want {
			t.Errorf("%d-byte string value hash %s, want %s", n, got, want)
		}
		if got := config.ContentHash(map[string][]byte{"k": long}); got != want {
			t.Errorf("%d-byte []byte value hash %s, want %s", n, got, want)
		}
	}
}
