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

// ContentHash returns the hash [CreateImmutableConfigMap] and [CreateImmutableSecret]
// append to a base name: the first [HashLength] hex characters of a SHA-256 over data's
// keys in sorted order, each key and value prefixed by its length (8 bytes big-endian),
// so no two different maps encode alike. A string and a []byte map of the same content
// hash alike.
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
