package health_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/health"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// ExampleProber_Flow is the health-check step of a reconciler: probe the cluster-local
// login page (here an httptest server stands in for it) and hand the outcome to
// reconcile.Settle. The second pass within the TTL is answered from the cache.
func ExampleProber_Flow() {
	login := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`<form id="login">`))
	}))
	defer login.Close()

	opts := health.DefaultOptions()
	// The stand-in listens on loopback, which the default outbound policy refuses.
	opts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	prober := health.NewProber(opts) // one per controller
	// The custom resource (any client.Object): its UID keys the cache.
	app := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "demo", UID: "app-uid"}}

	for range 2 {
		out, err := prober.Flow(context.Background(), app, "APIReady", login.URL+"/auth/login/")
		fmt.Println(out.Condition.Type, out.Condition.Status, out.Condition.Reason, out.Result.RequeueAfter, err)
	}

	login.Close()
	prober.Forget(app.UID) // e.g. the CR was deleted
	out, err := prober.Flow(context.Background(), app, "APIReady", login.URL+"/auth/login/")
	fmt.Println(out.Condition.Type, out.Condition.Status, out.Condition.Reason, out.Result.RequeueAfter, err)
	// Output:
	// APIReady True APIHealthy 0s <nil>
	// APIReady True APIHealthy 0s <nil>
	// APIReady False ConnectionFailed 10s <nil>
}
