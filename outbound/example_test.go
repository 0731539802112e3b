package outbound_test

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/c5c3/reconciler-sdk/outbound"
)

// A client with the default policy refuses a server on loopback; the administrator's
// allow list admits it.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	_, err := outbound.DefaultPolicy().Client(5 * time.Second).Get(srv.URL + "/?token=abc")
	var refused *outbound.RefusedError
	fmt.Println(errors.As(err, &refused), refused.Range)

	cidrs, hosts, _ := outbound.ParseAllowList([]string{"127.0.0.0/8"})
	allowed := outbound.Policy{AllowCIDRs: cidrs, AllowHosts: hosts}
	resp, err := allowed.Client(5 * time.Second).Get(srv.URL)
	if err == nil {
		_ = resp.Body.Close()
	}
	fmt.Println(err == nil, resp.StatusCode)
	fmt.Println(outbound.RedactString("https://admin:pw@api.example.com/v3?token=abc"))
	// Output:
	// true loopback
	// true 200
	// https://api.example.com/v3
}

// An operator's command line opens the policy of its outbound requests only where the
// administrator says so.
func ExampleBindFlags() {
	var p outbound.Policy
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	outbound.BindFlags(fs, &p, "health checks")
	if err := fs.Parse([]string{"--outbound-allow", "10.0.0.0/8,registry.internal"}); err != nil {
		fmt.Println(err)
	}
	fmt.Println(p.AllowCIDRs, p.AllowHosts, p.AllowCrossHostRedirects)
	// Output: [10.0.0.0/8] [registry.internal] false
}
