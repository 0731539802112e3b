package keystonetest_test

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
)

// Example authenticates against the stand-in with plain HTTP, creates a domain, and
// shows that a password change revokes the token.
func Example() {
	s := keystonetest.New("admin", "pw")
	defer s.Close()
	auth := `{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"admin","domain":{"name":"Default"},"password":"pw"}}},` +
		`"scope":{"project":{"name":"admin","domain":{"name":"Default"}}}}}`
	resp, err := http.Post(s.URL+"/v3/auth/tokens", "application/json", strings.NewReader(auth))
	if err != nil {
		panic(err)
	}
	_ = resp.Body.Close()
	token := resp.Header.Get("X-Subject-Token")
	fmt.Println("authenticate:", resp.StatusCode)

	create := func() int {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/v3/domains", strings.NewReader(`{"domain":{"name":"corp"}}`))
		req.Header.Set("X-Auth-Token", token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	fmt.Println("create:", create())
	fmt.Println("create again:", create())
	d, _ := s.Domain("corp")
	fmt.Println("stored:", d.Name, d.Enabled)
	s.SetAdminPassword("new")
	fmt.Println("after a password change:", create())
	fmt.Println("creates:", s.Calls("POST /v3/domains"))
	// Output:
	// authenticate: 201
	// create: 201
	// create again: 409
	// stored: corp true
	// after a password change: 401
	// creates: 3
}
