package config

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"maps"
	"slices"
)

// HashLength is the number of hex characters of the content hash appended to a base
// name.
const HashLength = 8

// ContentHash returns the content hash [CreateImmutableConfigMap] and
// [CreateImmutableSecret] append to a base name: the first [HashLength] hex characters
// of a SHA-256 over the keys of data in sorted order, each key and each value preceded
// by its length as 8 bytes big-endian. The length prefixes make the encoding
// unambiguous: no two different maps encode to the same bytes, whatever characters
// keys and values contain. A string and a []byte map with the same content hash
// alike.
func ContentHash[V ~string | ~[]byte](data map[string]V) string {
	h := sha256.New()
	var buf [4096]byte
	for _, key := range slices.Sorted(maps.Keys(data)) {
		writeField(h, &buf, key)
		writeField(h, &buf, data[key])
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))[:HashLength]
}

// writeField writes len(v) as 8 bytes big-endian, then v, copied through buf so that
// a string is hashed without being converted (allocated) as a whole.
func writeField[V ~string | ~[]byte](h hash.Hash, buf *[4096]byte, v V) {
	binary.BigEndian.PutUint64(buf[:8], uint64(len(v)))
	h.Write(buf[:8])
	for len(v) > 0 {
		n := copy(buf[:], v)
		h.Write(buf[:n])
		v = v[n:]
	}
}
