package health_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"k8s.io/apimachinery/pkg/types"

	"github.com/c5c3/reconciler-sdk/health"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// ExampleProber_Check is the HealthCheck step of a reconciler: probe the cluster-local
// login page (here an httptest server stands in for it), set the returned condition and
// return the result. The second pass within the TTL is answered from the cache.
func ExampleProber_Check() {
	login := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`<form id="login">`))
	}))
	defer login.Close()

	opts := health.DefaultOptions()
	// The stand-in listens on loopback, which the default outbound policy refuses.
	opts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	prober := health.NewProber(opts) // one per controller
	uid := types.UID("horizon-uid")  // the CR's metadata.uid

	for range 2 {
		cond, res, err := prober.Check(context.Background(), uid, login.URL+"/auth/login/", "HorizonAPIReady")
		fmt.Println(cond.Type, cond.Status, cond.Reason, res.RequeueAfter, err)
	}

	login.Close()
	prober.Forget(uid) // e.g. the CR was deleted
	cond, res, err := prober.Check(context.Background(), uid, login.URL+"/auth/login/", "HorizonAPIReady")
	fmt.Println(cond.Type, cond.Status, cond.Reason, res.RequeueAfter, err)
	// Output:
	// HorizonAPIReady True APIHealthy 0s <nil>
	// HorizonAPIReady True APIHealthy 0s <nil>
	// HorizonAPIReady False ConnectionFailed 10s <nil>
}
