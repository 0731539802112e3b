package capability_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/capability"
)

// ExampleIsKindServed probes the cluster behind a client: at setup, to register the
// HTTPRoute watch only when the Gateway API is installed, and on every pass against the
// RESTMapper of the target cluster a CR's children land on.
func ExampleIsKindServed() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	mapper := env.Client.RESTMapper() // in a manager: mgr.GetRESTMapper(), or cluster.GetRESTMapper()

	served, err := capability.IsKindServed(mapper, schema.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: "HTTPRoute"})
	fmt.Println("HTTPRoute served:", served, err)

	served, err = capability.IsKindServed(mapper, schema.GroupVersionKind{Group: "nothing.example.com", Version: "v1", Kind: "Thing"})
	fmt.Println("Thing served:", served, err)
	// Output:
	// HTTPRoute served: true <nil>
	// Thing served: false <nil>
}

// ExampleProbe keeps one probe per cluster, so that a kind missing on that cluster
// costs one discovery request per TTL instead of one per pass.
func ExampleProbe() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	probe, err := capability.NewProbe(env.Client.RESTMapper(), capability.DefaultProbeOptions())
	if err != nil {
		panic(err)
	}
	vpa := schema.GroupVersionKind{Group: "autoscaling.k8s.io", Version: "v1", Kind: "VerticalPodAutoscaler"}
	served, err := probe.IsKindServed(vpa)
	fmt.Println("VPA served:", served, err)
	// Output:
	// VPA served: true <nil>
}
