package httpauth_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/go-logr/logr"

	"github.com/c5c3/reconciler-sdk/httpauth"
)

// A handler behind a Guard: a request without a bearer token never reaches it.
func ExampleGuard() {
	g, err := httpauth.New(env.Config, nil, logr.Discard()) // the operator's own rest config
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(g.Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "the metrics")
	})))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	// Output:
	// 401 Bearer realm="kubernetes"
}
