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
		"same value different key":   {a: map[string]string{"keystone.conf": "x"}, b: map[string]string{"glance.conf": "x"}},
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
	data := map[string]string{"keystone.conf": "[DEFAULT]\ndebug = false\n", "policy.yaml": "{}", "a": ""}
	got := config.ContentHash(data)
	if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(got) {
		t.Fatalf("hash %q is not 8 lower-case hex characters", got)
	}
	for range 20 {
		same := map[string]string{"policy.yaml": "{}", "a": "", "keystone.conf": "[DEFAULT]\ndebug = false\n"}
		if h := config.ContentHash(same); h != got {
			t.Fatalf("hash changed between equal maps: %s vs %s", got, h)
		}
	}
	// The documented encoding, computed independently.
	h := sha256.New()
	for _, s := range []string{"a", "", "keystone.conf", "[DEFAULT]\ndebug = false\n", "policy.yaml", "{}"} {
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
	// Values longer than the internal copy buffer hash like the encoding says.
	long := string(make([]byte, 10000))
	h.Reset()
	h.Write(binary.BigEndian.AppendUint64(nil, 1))
	h.Write([]byte("k"))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(long))))
	h.Write([]byte(long))
	if got, want := config.ContentHash(map[string]string{"k": long}), hex.EncodeToString(h.Sum(nil))[:8]; got != want {
		t.Errorf("long value hash %s, want %s", got, want)
	}
}
