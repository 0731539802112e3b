package shard_test

import (
	"fmt"

	"github.com/c5c3/reconciler-sdk/shard"
)

// Three replicas split the hash space of UIDs; each custom resource belongs to exactly
// one of them, and the API server can select each slice.
func Example() {
	split := shard.Assign([]string{"operator-0", "operator-1", "operator-2"}, 0)
	owners := 0
	for _, ranges := range split {
		if ranges.Owns("4c6b7c0f-2b64-4d2a-9c1e-0f5d6f6e3a11") {
			owners++
		}
	}
	fmt.Println("owners:", owners)
	fmt.Println(shard.Full().Selector())
	// Output:
	// owners: 1
	// shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')
}
