package keystone_test

import (
	"fmt"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
)

// The health check accepts the version document Keystone serves on /v3 and refuses
// anything else, such as a web server's default page answered with 200.
func ExampleVersionDocumentValid() {
	fmt.Println(keystone.VersionDocumentValid(200, nil, []byte(`{"version": {"id": "v3.14", "status": "stable"}}`)))
	fmt.Println(keystone.VersionDocumentValid(200, nil, []byte(`{"version": {"id": "v2.0"}}`)))
	// Output:
	// <nil>
	// version document has version.id "v2.0", want v3.x
}
