package v1_test

import (
	"encoding/json"
	"fmt"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
)

// ExampleSecretStoreRefSpec shows the two kinds of store a CR can select, as they
// appear in its spec.
func ExampleSecretStoreRefSpec() {
	for _, ref := range []commonv1.SecretStoreRefSpec{
		{Kind: commonv1.ClusterSecretStoreKind, Name: "openbao-cluster-store"},
		{Kind: commonv1.SecretStoreKind, Name: "tenant-store"},
	} {
		out, err := json.Marshal(ref)
		if err != nil {
			panic(err)
		}
		fmt.Println(string(out))
	}
	// Output:
	// {"kind":"ClusterSecretStore","name":"openbao-cluster-store"}
	// {"kind":"SecretStore","name":"tenant-store"}
}
