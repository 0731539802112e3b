package health_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/c5c3/reconciler-sdk/health"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// A CR without an endpoint is not probed: Check reports EndpointNotReady and sends no
// request; once it has one, the path under it is requested.
func TestEndpointURL(t *testing.T) {
	requested := ""
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { requested = r.URL.Path }))
	defer srv.Close()
	opts := health.DefaultOptions()
	opts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	p := health.NewProber(opts)

	out, err := p.Flow(context.Background(), app, "APIReady", health.EndpointURL("", "/v3"))
	if cond := out.Condition; err != nil || cond.Reason != health.ReasonEndpointNotReady || requested != "" {
		t.Fatalf("no endpoint: %+v, %v, requested %q; want EndpointNotReady and no request", out, err, requested)
	}
	out, err = p.Flow(context.Background(), app, "APIReady", health.EndpointURL(srv.URL, "/v3"))
	if cond := out.Condition; err != nil || cond.Reason != health.ReasonHealthy || requested != "/v3" {
		t.Fatalf("with an endpoint: %+v, %v, requested %q; want Healthy after a GET of /v3", out, err, requested)
	}
}

func ExampleEndpointURL() {
	fmt.Printf("%q\n", health.EndpointURL("", "/v3"))
	fmt.Println(health.EndpointURL("http://identity.demo.svc:5000", "/v3"))
	// Output:
	// ""
	// http://identity.demo.svc:5000/v3
}
