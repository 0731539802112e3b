package main

import (
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
)

// versionDocument is what Keystone serves at keystone.VersionPath, which the health
// check accepts (keystone.VersionDocumentValid).
const versionDocument = `{"version": {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
 "links": [{"rel": "self", "href": "http://keystone.openstack.svc:5000/v3/"}],
 "media-types": [{"base": "application/json", "type": "application/vnd.openstack.identity-v3+json"}]}}
`

// identityAPI is the stand-in for the identity API of the Keystone's pods (no
// container runs on the demo's fake node), at one loopback URL: it answers the health
// check's GET /v3 with the version document itself and hands every other request
// (tokens, domains, OS-FEDERATION identity providers, mappings and protocols) to a
// keystonetest stand-in, which holds what the KeystoneIdentityBackend controller
// creates there.
type identityAPI struct {
	front *httptest.Server
	ks    *keystonetest.Server
}

// newIdentityAPI starts the stand-in for the admin user adminUser. Until
// setAdminPassword runs it accepts no password: its initial one is random and never
// leaves it. Close it when done.
func newIdentityAPI(adminUser string) (*identityAPI, error) {
	ks := keystonetest.New(adminUser, rand.Text())
	target, err := url.Parse(ks.URL)
	if err != nil {
		ks.Close()
		return nil, fmt.Errorf("the keystonetest stand-in's URL %s: %w", ks.URL, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+keystone.VersionPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, versionDocument)
	})
	mux.Handle("/", httputil.NewSingleHostReverseProxy(target))
	return &identityAPI{front: httptest.NewServer(mux), ks: ks}, nil
}

// URL is the identity API's endpoint (http://127.0.0.1:<port>).
func (a *identityAPI) URL() string { return a.front.URL }

// setAdminPassword makes the stand-in accept password for the admin user, as
// keystone-manage bootstrap sets it from the admin password Secret.
func (a *identityAPI) setAdminPassword(password string) { a.ks.SetAdminPassword(password) }

// Close stops both servers.
func (a *identityAPI) Close() {
	a.front.Close()
	a.ks.Close()
}
