package katalogexamples_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	katalogexamples "github.com/c5c3/reconciler-sdk/examples/katalog"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// Play the registry platform.yaml's registry check calls with a local server: the
// requests for RegistryHost reach it with their Host header kept. The server listens
// on loopback, so the client's policy allows loopback; give the client to the engine as
// katalog.EngineOptions.HTTPClient.
func ExampleStandInClient() {
	standIn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("stand-in got", r.Host, r.URL.Path)
	}))
	defer standIn.Close()
	c, err := katalogexamples.StandInClient(standIn.URL, outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.Get("http://" + katalogexamples.RegistryHost + "/v2/nginx/manifests/latest")
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output:
	// stand-in got registry.registry.svc:5000 /v2/nginx/manifests/latest
	// 200
}
