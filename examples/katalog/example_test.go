package katalogexamples_test

import (
	"fmt"

	katalogexamples "github.com/c5c3/reconciler-sdk/examples/katalog"
	"github.com/c5c3/reconciler-sdk/katalog"
)

// The example Katalogs' CRD entries in the order the engine starts them (a dependsOn
// target first), and the sample custom resources.
func Example() {
	dir, err := katalogexamples.Dir()
	if err != nil {
		fmt.Println(err)
		return
	}
	kats, err := katalogexamples.Load(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range katalog.StartOrder(kats...) {
		fmt.Printf("%s: %s.%s\n", c.Name, c.APITypes.Plural, c.APITypes.Group)
	}
	samples, err := katalogexamples.Samples(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range samples {
		fmt.Println("sample", s.GetKind(), s.GetName())
	}
	// Output:
	// database: databases.platform.io
	// application: applications.platform.io
	// regionalapp: regionalapps.platform.io
	// sample Application shop
	// sample Database shop
	// sample RegionalApp edge
}
