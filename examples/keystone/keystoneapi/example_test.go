package keystoneapi_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// Example creates a domain unless Keystone holds one of that name already, as the
// KeystoneIdentityBackend controller does.
func Example() {
	keystone := keystonetest.New("admin", "admin-password") // a stand-in of the Keystone API
	defer keystone.Close()
	keystone.AddDomain("partners", "adopted", true)

	// The stand-in listens on loopback, which the default outbound policy refuses.
	opts := keystoneapi.Options{Policy: outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}}
	c, err := keystoneapi.New(keystone.URL, keystoneapi.Credentials{
		Username: "admin", Password: "admin-password", ProjectName: "admin"}, opts)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, name := range []string{"corp", "partners"} {
		d, err := c.GetDomainByName(ctx, name)
		switch {
		case errors.Is(err, keystoneapi.ErrNotFound):
			d, err = c.CreateDomain(ctx, keystoneapi.Domain{Name: name, Enabled: true})
			if err != nil {
				panic(err)
			}
			fmt.Println("created", d.Name)
		case err != nil:
			panic(err)
		default:
			fmt.Println("adopted", d.Name, "("+d.Description+")")
		}
	}

	wrong, _ := keystoneapi.New(keystone.URL, keystoneapi.Credentials{
		Username: "admin", Password: "guess", ProjectName: "admin"}, opts)
	err = wrong.Authenticate(ctx)
	fmt.Println(errors.Is(err, keystoneapi.ErrUnauthorized), err)
	// Output:
	// created corp
	// adopted partners (adopted)
	// true keystoneapi: unauthorized: POST /v3/auth/tokens: answer 401: The request you have made requires authentication.
}
