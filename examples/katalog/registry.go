package katalogexamples

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/c5c3/reconciler-sdk/outbound"
)

// RegistryHost is the registry platform.yaml's registry check calls, host and port: a
// Service named registry in the namespace registry. The Katalog fixes it, so that no
// Application can point the engine's requests anywhere else; the Application's image
// goes into the path escaped (urlquery), so it cannot add a path, a query or another host.
const RegistryHost = "registry.registry.svc:5000"

// StandInClient returns an HTTP client for katalog.EngineOptions.HTTPClient that plays a
// name server for RegistryHost: the requests for it go to standIn, the URL of a local
// stand-in registry (an httptest server, the demo's), with their Host header kept;
// every other request goes where its URL says. It connects through policy, so allow the
// stand-in's address there (outbound.LoopbackPrefixes for one on loopback). The tests
// and hack/katalog-demo use it to run platform.yaml unchanged.
func StandInClient(standIn string, policy outbound.Policy) (*http.Client, error) {
	u, err := url.Parse(standIn)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("stand-in registry %q: want an http or https URL", outbound.RedactString(standIn))
	}
	c := policy.Client(0)
	c.Transport = &standInTransport{scheme: u.Scheme, host: u.Host, next: c.Transport}
	return c, nil
}

// standInTransport sends the requests for RegistryHost to host.
type standInTransport struct {
	scheme, host string
	next         http.RoundTripper
}

// RoundTrip sends a copy of req, pointed at the stand-in when it is for RegistryHost.
func (s *standInTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != RegistryHost {
		return s.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host = s.scheme, s.host
	out.Host = RegistryHost
	return s.next.RoundTrip(out)
}
