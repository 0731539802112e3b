package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ksv1alpha1 "github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi"
	"github.com/c5c3/reconciler-sdk/outbound"
)

// The backend the Keystone scene applies, the sample with the SAML provider added,
// passes the controller's own federation checks (which the admission webhook runs
// too), and names the Keystone of the minimal sample.
func TestSampleBackendWithSAMLValidates(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadBackendSample(root, "openstack")
	if err != nil {
		t.Fatal(err)
	}
	addSAMLProvider(b)
	if errs := identitybackend.ValidateFederation(b); len(errs) > 0 {
		t.Fatalf("the demo's backend does not validate: %v", errs.ToAggregate())
	}
	var ids []string
	for _, p := range b.Spec.Federation.IdentityProviders {
		ids = append(ids, p.ID+"/"+p.Protocol)
	}
	if len(ids) != 2 || ids[0] != "corp-oidc/openid" || ids[1] != samlProviderID+"/saml2" {
		t.Errorf("providers %v, want corp-oidc/openid and %s/saml2", ids, samlProviderID)
	}
	k, err := loadKeystoneSample(root, "openstack")
	if err != nil {
		t.Fatal(err)
	}
	if b.Namespace != k.Namespace || b.Spec.KeystoneRef.Name != k.Name {
		t.Errorf("backend %s/%s names Keystone %s, want the sample Keystone %s/%s",
			b.Namespace, b.Name, b.Spec.KeystoneRef.Name, k.Namespace, k.Name)
	}
	if got := keystoneAdminUser(k); got != "admin" {
		t.Errorf("admin user of the sample Keystone %q, want admin", got)
	}
}

// A backend sample that declares no OpenID Connect provider is refused with an error
// naming the file and the field.
func TestLoadBackendSampleRefusesAnotherShape(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, backendSamplePath)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("apiVersion: keystone.openstack.c5c3.io/v1alpha1\nkind: KeystoneIdentityBackend\n"+
		"metadata:\n  name: ldap\nspec:\n  keystoneRef:\n    name: keystone\n  domain: corp\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := loadBackendSample(root, "openstack")
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "spec.federation.identityProviders") {
		t.Errorf("error %v, want one naming %s and spec.federation.identityProviders", err, path)
	}
}

// The identity API stand-in answers the health check's GET /v3 with a version document
// the check accepts, and passes the Keystone API calls to keystonetest: the admin user
// is refused until setAdminPassword, then signs in and reaches the domain and
// OS-FEDERATION routes.
func TestIdentityAPIServesVersionAndKeystone(t *testing.T) {
	api, err := newIdentityAPI("admin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	res, err := http.Get(api.URL() + keystone.VersionPath)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := keystone.VersionDocumentValid(res.StatusCode, res.Header, body); res.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("GET /v3: %d, check %v; body %s", res.StatusCode, err, body)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil || doc["version"] == nil {
		t.Errorf("GET /v3 body %s is not a version document: %v", body, err)
	}

	ctx := context.Background()
	client := func() *keystoneapi.Client {
		c, err := keystoneapi.New(api.URL(), keystoneapi.Credentials{Username: "admin", Password: "synced-password", ProjectName: "admin"},
			keystoneapi.Options{Policy: outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if err := client().Authenticate(ctx); !errors.Is(err, keystoneapi.ErrUnauthorized) {
		t.Fatalf("sign-in before the password is set: %v, want ErrUnauthorized", err)
	}
	api.setAdminPassword("synced-password")
	c := client()
	d, err := c.GetDomainByName(ctx, "Default")
	if err != nil || d.ID == "" {
		t.Fatalf("GET /v3/domains?name=Default through the stand-in: %v, %v", d, err)
	}
	if _, err := c.GetIdentityProvider(ctx, "corp-oidc"); !errors.Is(err, keystoneapi.ErrNotFound) {
		t.Errorf("GET of a provider not created yet: %v, want ErrNotFound", err)
	}
	created, err := c.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "corp-oidc", DomainID: d.ID,
		RemoteIDs: []string{"https://sso.corp.example.com/realms/corp"}, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetIdentityProvider(ctx, "corp-oidc")
	if err != nil || got.DomainID != d.ID || created.ID != "corp-oidc" {
		t.Errorf("provider read back %+v, %v; want corp-oidc in domain %s", got, err, d.ID)
	}
	if p, ok := api.ks.IdentityProvider("corp-oidc"); !ok || p.DomainID != d.ID {
		t.Errorf("keystonetest holds %+v, %t; want corp-oidc in domain %s", p, ok, d.ID)
	}
}

// backendCondition reads a condition only when it was written for the backend's
// generation, and the table ends with Ready.
func TestBackendConditionIsForTheCurrentGeneration(t *testing.T) {
	b := &ksv1alpha1.KeystoneIdentityBackend{}
	b.Generation = 3
	b.Status.Conditions = append(b.Status.Conditions,
		cond("FederationReady", "False", identitybackend.ReasonWaitingForFederationSecret, "identity provider corp-saml: ...", 3),
		cond("Ready", "True", "AllReady", "all ready", 2))
	if r, ok := backendCondition(b, "FederationReady"); !ok || r.Reason != identitybackend.ReasonWaitingForFederationSecret {
		t.Errorf("FederationReady = %+v, %t", r, ok)
	}
	if _, ok := backendCondition(b, "Ready"); ok {
		t.Error("a Ready written for generation 2 counts for generation 3")
	}
	rows := rowsIn(b, backendConditionOrder)
	if rows[len(rows)-1].Type != "Ready" || len(rows) != 4 {
		t.Errorf("rows %+v, want DomainReady, FederationReady, ConfigProjected, Ready", rows)
	}
}
