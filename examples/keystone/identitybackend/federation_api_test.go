package identitybackend_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

const condFederation = identitybackend.ConditionFederationReady

// startFederationOperator runs the backend controller for ns (its events recorded by
// the manager's recorder SetupWithManager sets) and giveUp as the federation cleanup's bound (0: the default); every Keystone's API
// is a fresh stand-in.
func startFederationOperator(t *testing.T, ns string, giveUp time.Duration) *operator {
	t.Helper()
	ks := keystonetest.New("admin", adminPassword)
	t.Cleanup(ks.Close)
	opts := identitybackend.DefaultOptions()
	opts.PollInterval = poll
	opts.KeystoneURL = func(*v1alpha1.Keystone) string { return ks.URL }
	opts.OutboundPolicy = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	opts.FederationGiveUpAfter = giveUp
	var operatorOpts testenv.OperatorOptions
	operatorOpts.FieldManager, operatorOpts.Namespace, operatorOpts.Manager.Logger = fieldManager, ns, ctrl.Log
	op := env.StartOperator(t, operatorOpts, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		// No Recorder: SetupWithManager gives it the manager's, as in the shipped command.
		rec, err := identitybackend.NewReconciler(resolver, opts)
		if err != nil {
			return err
		}
		return rec.SetupWithManager(ctx, mgr)
	})
	return &operator{resolver: op.Resolver, keystone: ks, local: op.Resolver.Local().Client, opts: opts}
}

// api is a Keystone API client of the stand-in, to change its objects behind the
// controller's back.
func (o *operator) api(t *testing.T) *keystoneapi.Client {
	t.Helper()
	c, err := keystoneapi.New(o.keystone.URL, keystoneapi.Credentials{Username: "admin", Password: adminPassword, ProjectName: "admin"},
		keystoneapi.Options{Policy: outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// federationReady waits for FederationReady status/reason and checks that its
// message carries no client secret.
func federationReady(t *testing.T, b *v1alpha1.KeystoneIdentityBackend, status metav1.ConditionStatus, reason string) metav1.Condition {
	t.Helper()
	c := expectReason(t, b, condFederation, status, reason)
	if strings.Contains(c.Message, clientSecret) {
		t.Fatalf("FederationReady message %q carries the client secret", c.Message)
	}
	return c
}

// federatedKeystone is a Keystone with an endpoint and its admin password.
func federatedKeystone(t *testing.T, ns string) *v1alpha1.Keystone {
	t.Helper()
	k := newKeystone(t, ns, "keystone", "http://keystone."+ns+".svc:5000")
	newAdminSecret(t, k, adminPassword)
	return k
}

// expectProvider checks that the stand-in holds provider id in domainID with
// remoteIDs, its mapping with rules (the spec's JSON) and protocol applying it.
func expectProvider(t *testing.T, ks *keystonetest.Server, id, domainID, protocol string, remoteIDs []string, rules []v1alpha1.MappingRule) {
	t.Helper()
	p, ok := ks.IdentityProvider(id)
	if !ok || p.DomainID != domainID || !p.Enabled || !slices.Equal(p.RemoteIDs, remoteIDs) {
		t.Fatalf("identity provider %s: %+v (exists %v), want domain %s, remote ids %v", id, p, ok, domainID, remoteIDs)
	}
	m, ok := ks.Mapping(id + "-mapping")
	want, _ := json.Marshal(rules)
	if !ok || !jsonEqual(t, m.Rules, want) {
		t.Fatalf("mapping %s-mapping: %s (exists %v), want %s", id, m.Rules, ok, want)
	}
	pr, ok := ks.Protocol(id, protocol)
	if !ok || pr.MappingID != id+"-mapping" {
		t.Fatalf("protocol %s/%s: %+v (exists %v)", id, protocol, pr, ok)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s, %s", a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// waitUntil polls cond until it holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true,
		func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// gone waits until b no longer exists.
func gone(t *testing.T, b *v1alpha1.KeystoneIdentityBackend) {
	t.Helper()
	waitUntil(t, "the backend is gone", func() bool {
		return apierrors.IsNotFound(env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), &v1alpha1.KeystoneIdentityBackend{}))
	})
}

// expectEvent waits for an event of reason on b of eventType and returns its note.
func expectEvent(t *testing.T, b *v1alpha1.KeystoneIdentityBackend, eventType, reason string) string {
	t.Helper()
	var note string
	waitUntil(t, "a "+eventType+" event "+reason+" is recorded", func() bool {
		var list eventsv1.EventList
		if err := env.Client.List(context.Background(), &list, client.InNamespace(b.Namespace)); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Regarding.Name == b.Name && e.Reason == reason && e.Type == eventType {
				note = e.Note
				return true
			}
		}
		return false
	})
	noSecretIn(t, note)
	if strings.Contains(note, clientSecret) {
		t.Fatalf("event %q carries the client secret", note)
	}
	return note
}

// A backend's two providers are created in Keystone with their mappings and
// protocols; drift in Keystone is PATCHed back; a provider leaving the spec is
// deleted; deleting the backend deletes the rest and lets it go.
func TestFederationRegisteredThroughTheKeystoneAPI(t *testing.T) {
	ns := env.Namespace(t)
	op := startFederationOperator(t, ns, 0)
	k := federatedKeystone(t, ns)
	b := newFederatedBackend(t, k, "corp", "corp")

	c := federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	if !strings.Contains(c.Message, "corp-oidc (openid), corp-saml (saml2)") {
		t.Fatalf("FederationReady message %q", c.Message)
	}
	d, _ := op.keystone.Domain("corp")
	rules := b.Spec.Federation.IdentityProviders[0].Mapping
	expectProvider(t, op.keystone, "corp-oidc", d.ID, "openid", []string{"https://sso.corp.example"}, rules)
	expectProvider(t, op.keystone, "corp-saml", d.ID, "saml2", []string{"https://idp.corp.example/saml"}, rules)
	if !slices.Contains(b.Finalizers, identitybackend.FederationFinalizer) {
		t.Fatalf("finalizers %v lack %s", b.Finalizers, identitybackend.FederationFinalizer)
	}
	for _, st := range b.Status.IdentityProviders {
		if !st.CreatedProvider || !st.CreatedMapping || !st.CreatedProtocol || st.MappingID != st.ID+"-mapping" {
			t.Fatalf("status.identityProviders %+v: all three created here", b.Status.IdentityProviders)
		}
	}
	if len(b.Status.IdentityProviders) != 2 {
		t.Fatalf("status.identityProviders %+v", b.Status.IdentityProviders)
	}
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)

	// Drift behind the controller's back is put right on the next pass. The provider's
	// PATCHes are counted before the drift: the backend polls while it is not
	// projected, so a pass may repair the provider before the drift's last call
	// returns, and that repair is the one PATCH besides the drift's own.
	patches := op.keystone.Calls("PATCH /v3/OS-FEDERATION/identity_providers/corp-oidc")
	ctx := context.Background()
	api := op.api(t)
	if _, err := api.UpdateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "corp-oidc", RemoteIDs: []string{"https://evil.example"}, Enabled: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.UpdateMapping(ctx, keystoneapi.Mapping{ID: "corp-oidc-mapping",
		Rules: json.RawMessage(`[{"local":[{"group":{"id":"admins"}}],"remote":[{"type":"OIDC-email"}]}]`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.UpdateProtocol(ctx, "corp-oidc", keystoneapi.Protocol{ID: "openid", MappingID: "corp-saml-mapping"}); err != nil {
		t.Fatal(err)
	}
	touch(t, b)
	// Wait for all three repairs: a pass already running when the drift was made may
	// repair the protocol and leave the provider to the next pass.
	wantRules, _ := json.Marshal(rules)
	waitUntil(t, "the drift is PATCHed back", func() bool {
		idp, _ := op.keystone.IdentityProvider("corp-oidc")
		m, found := op.keystone.Mapping("corp-oidc-mapping")
		p, _ := op.keystone.Protocol("corp-oidc", "openid")
		return idp.Enabled && slices.Equal(idp.RemoteIDs, []string{"https://sso.corp.example"}) &&
			found && jsonEqual(t, m.Rules, wantRules) && p.MappingID == "corp-oidc-mapping"
	})
	expectProvider(t, op.keystone, "corp-oidc", d.ID, "openid", []string{"https://sso.corp.example"}, rules)
	if n := op.keystone.Calls("PATCH /v3/OS-FEDERATION/identity_providers/corp-oidc"); n != patches+2 {
		t.Fatalf("provider PATCHed %d times since the drift, want twice (the drift and one repair)", n-patches)
	}
	if n := op.keystone.Calls("PUT /v3/OS-FEDERATION/identity_providers/corp-oidc"); n != 1 {
		t.Fatalf("provider PUT %d times, want once", n)
	}

	// A spec change reaches Keystone: a new remote id, a new rule.
	updateBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
		idp := &b.Spec.Federation.IdentityProviders[0]
		idp.RemoteIDs = append(idp.RemoteIDs, "https://sso2.corp.example")
		idp.Description = "Corp SSO"
		idp.Mapping = append(idp.Mapping, v1alpha1.MappingRule{
			Local:  []v1alpha1.MappingLocal{{Group: &v1alpha1.MappedGroup{ID: "g1"}}},
			Remote: []v1alpha1.MappingRemote{{Type: "OIDC-groups", AnyOneOf: []string{"admins"}}}})
	})
	federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	expectProvider(t, op.keystone, "corp-oidc", d.ID, "openid", []string{"https://sso.corp.example", "https://sso2.corp.example"},
		b.Spec.Federation.IdentityProviders[0].Mapping)
	if p, _ := op.keystone.IdentityProvider("corp-oidc"); p.Description != "Corp SSO" {
		t.Fatalf("description %q", p.Description)
	}

	// A provider that leaves the spec is deleted with its mapping and protocol.
	updateBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Spec.Federation.IdentityProviders = b.Spec.Federation.IdentityProviders[:1]
	})
	federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	if _, ok := op.keystone.IdentityProvider("corp-saml"); ok {
		t.Fatal("corp-saml left the spec but stays in Keystone")
	}
	if _, ok := op.keystone.Mapping("corp-saml-mapping"); ok {
		t.Fatal("corp-saml's mapping stays in Keystone")
	}
	if len(b.Status.IdentityProviders) != 1 || b.Status.IdentityProviders[0].ID != "corp-oidc" {
		t.Fatalf("status.identityProviders %+v", b.Status.IdentityProviders)
	}

	// Deleting the backend deletes what it created; the domain stays.
	if err := env.Client.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	gone(t, b)
	if _, ok := op.keystone.IdentityProvider("corp-oidc"); ok {
		t.Fatal("corp-oidc stays in Keystone after the backend's deletion")
	}
	if _, ok := op.keystone.Mapping("corp-oidc-mapping"); ok {
		t.Fatal("corp-oidc's mapping stays in Keystone")
	}
	if _, ok := op.keystone.Domain("corp"); !ok {
		t.Fatal("the domain went with the backend")
	}
	expectEvent(t, b, "Normal", identitybackend.EventFederationRemoved)
	if s := loggedSecret(clientSecret, adminPassword); s != "" {
		t.Fatalf("a log line carries a secret: %s", dumpLogsWith(s))
	}
}

// Objects that exist in Keystone before the backend are adopted: kept matching the
// spec, but not deleted with the backend.
func TestFederationAdoptsAndLeavesAdopted(t *testing.T) {
	ns := env.Namespace(t)
	op := startFederationOperator(t, ns, 0)
	k := federatedKeystone(t, ns)
	ctx := context.Background()
	api := op.api(t)
	d, err := api.CreateDomain(ctx, keystoneapi.Domain{Name: "corp", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.CreateIdentityProvider(ctx, keystoneapi.IdentityProvider{ID: "corp-oidc", DomainID: d.ID, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.CreateMapping(ctx, keystoneapi.Mapping{ID: "corp-oidc-mapping", Rules: json.RawMessage(`[{"local":[{"user":{"name":"x"}}],"remote":[{"type":"x"}]}]`)}); err != nil {
		t.Fatal(err)
	}
	b := newFederatedBackend(t, k, "corp", "corp")
	federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	expectProvider(t, op.keystone, "corp-oidc", d.ID, "openid", []string{"https://sso.corp.example"}, b.Spec.Federation.IdentityProviders[0].Mapping)
	st := b.Status.IdentityProviders[slices.IndexFunc(b.Status.IdentityProviders, func(s v1alpha1.IdentityProviderStatus) bool { return s.ID == "corp-oidc" })]
	if st.CreatedProvider || st.CreatedMapping || !st.CreatedProtocol {
		t.Fatalf("corp-oidc status %+v: provider and mapping adopted, protocol created", st)
	}
	if err := env.Client.Delete(ctx, b); err != nil {
		t.Fatal(err)
	}
	gone(t, b)
	if _, ok := op.keystone.IdentityProvider("corp-oidc"); !ok {
		t.Fatal("the adopted provider was deleted")
	}
	if _, ok := op.keystone.Mapping("corp-oidc-mapping"); !ok {
		t.Fatal("the adopted mapping was deleted")
	}
	if _, ok := op.keystone.Protocol("corp-oidc", "openid"); ok {
		t.Fatal("the protocol created here stays")
	}
	if _, ok := op.keystone.IdentityProvider("corp-saml"); ok {
		t.Fatal("corp-saml, created here, stays")
	}
}

// Every reason of FederationReady is reached (TooManyOpenIDProviders in
// TestOneOpenIDProviderPerKeystone).
func TestFederationReasons(t *testing.T) {
	ns := env.Namespace(t)
	op := startFederationOperator(t, ns, 0)

	// No federation: True, NoIdentityProviders, no finalizer.
	k := newKeystone(t, ns, "keystone", "")
	plain := newBackend(t, k, "plain", "plain", "")
	federationReady(t, plain, metav1.ConditionTrue, identitybackend.ReasonNoIdentityProviders)
	if len(plain.Finalizers) != 0 {
		t.Fatalf("a backend without federation carries finalizers %v", plain.Finalizers)
	}

	// DomainReady False (the Keystone has no endpoint): WaitingForKeystone.
	b := newFederatedBackend(t, k, "corp", "corp")
	federationReady(t, b, metav1.ConditionFalse, identitybackend.ReasonWaitingForKeystone)
	expectReason(t, b, reconcile.ConditionReady, metav1.ConditionFalse, identitybackend.ReasonWaitingForKeystone)

	// Keystone answers 503 to a federation call: KeystoneUnreachable.
	op.keystone.Refuse(http.MethodGet, keystonetest.RouteIdentityProvider, http.StatusServiceUnavailable, "Service Unavailable")
	setEndpoint(t, k, "http://keystone."+ns+".svc:5000")
	newAdminSecret(t, k, adminPassword)
	c := federationReady(t, b, metav1.ConditionFalse, identitybackend.ReasonKeystoneUnreachable)
	if !strings.Contains(c.Message, "GET /v3/OS-FEDERATION/identity_providers/corp-oidc: answer 503") {
		t.Fatalf("KeystoneUnreachable message %q", c.Message)
	}

	// 401 to a federation call (after a fresh authentication): AdminCredentialsRejected.
	op.keystone.Refuse(http.MethodGet, keystonetest.RouteIdentityProvider, http.StatusUnauthorized, "The request you have made requires authentication.")
	federationReady(t, b, metav1.ConditionFalse, identitybackend.ReasonAdminCredentialsRejected)

	// Keystone refuses: a remote id another provider holds (409).
	op.keystone.Refuse(http.MethodGet, keystonetest.RouteIdentityProvider, 0, "")
	d, _ := op.keystone.Domain("corp")
	if _, err := op.api(t).CreateIdentityProvider(context.Background(), keystoneapi.IdentityProvider{ID: "foreign", DomainID: d.ID,
		RemoteIDs: []string{"https://sso.corp.example"}, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	c = federationReady(t, b, metav1.ConditionFalse, identitybackend.ReasonFederationRejected)
	if !strings.Contains(c.Message, "identity provider corp-oidc") || !strings.Contains(c.Message, "answer 409: Duplicate remote ID: https://sso.corp.example") {
		t.Fatalf("FederationRejected message %q", c.Message)
	}
	if err := op.api(t).DeleteIdentityProvider(context.Background(), "foreign"); err != nil {
		t.Fatal(err)
	}
	federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)

	// The client secret goes: WaitingForFederationSecret, the SAML provider stays.
	deleteSecret(t, ns, "corp-client")
	touch(t, b)
	c = federationReady(t, b, metav1.ConditionFalse, identitybackend.ReasonWaitingForFederationSecret)
	if !strings.Contains(c.Message, "identity provider corp-oidc: client secret Secret "+ns+"/corp-client does not exist") {
		t.Fatalf("WaitingForFederationSecret message %q", c.Message)
	}
	expectReason(t, b, reconcile.ConditionReady, metav1.ConditionFalse, identitybackend.ReasonWaitingForFederationSecret)
	newSecret(t, ns, "corp-client", "secret", clientSecret)
	federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)

	// A federation the webhook would refuse (two providers with one remote id, which
	// the CRD's schema cannot see): FederationInvalid, nothing sent.
	puts := op.keystone.Calls("PUT /v3/OS-FEDERATION/identity_providers/corp-oidc")
	updateBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Spec.Federation.IdentityProviders[1].RemoteIDs = b.Spec.Federation.IdentityProviders[0].RemoteIDs
	})
	c = federationReady(t, b, metav1.ConditionFalse, identitybackend.ReasonFederationInvalid)
	if !strings.Contains(c.Message, "spec.federation.identityProviders[1].remoteIDs[0]") {
		t.Fatalf("FederationInvalid message %q", c.Message)
	}
	if n := op.keystone.Calls("PUT /v3/OS-FEDERATION/identity_providers/corp-oidc"); n != puts {
		t.Fatal("an invalid federation reached Keystone")
	}

	// A provider of that id in another domain: FederationRejected naming both.
	updateBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Spec.Federation.IdentityProviders[1].RemoteIDs = []string{"https://idp.corp.example/saml"}
	})
	federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	other := newFederatedBackend(t, k, "other", "other")
	updateBackend(t, other, func(o *v1alpha1.KeystoneIdentityBackend) {
		// Its SAML provider alone, under corp's id: corp's OpenID Connect provider is
		// the Keystone's one.
		o.Spec.Federation.IdentityProviders = o.Spec.Federation.IdentityProviders[1:]
		o.Spec.Federation.IdentityProviders[0].ID = "corp-oidc"
		o.Spec.Federation.IdentityProviders[0].RemoteIDs = []string{"https://sso.other.example"}
	})
	c = federationReady(t, other, metav1.ConditionFalse, identitybackend.ReasonFederationRejected)
	if !strings.Contains(c.Message, "Keystone holds it in domain "+d.ID+", not in domain other") {
		t.Fatalf("FederationRejected message %q", c.Message)
	}
	expectReason(t, other, reconcile.ConditionReady, metav1.ConditionFalse, identitybackend.ReasonFederationRejected)
	if p, _ := op.keystone.IdentityProvider("corp-oidc"); p.DomainID != d.ID {
		t.Fatalf("corp-oidc moved to domain %s", p.DomainID)
	}
}

// deleteSecret deletes Secret ns/name.
func deleteSecret(t *testing.T, ns, name string) {
	t.Helper()
	if err := env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}); err != nil {
		t.Fatal(err)
	}
}

// Each federation call Keystone refuses (403, injected per verb and route) turns
// FederationReady False with reason FederationRejected naming the call and carrying
// Keystone's message; lifting the refusal lets the next pass finish.
func TestFederationFaultsPerVerb(t *testing.T) {
	ns := env.Namespace(t)
	op := startFederationOperator(t, ns, 0)
	k := federatedKeystone(t, ns)
	const idps = "/v3/OS-FEDERATION/identity_providers/"
	var b *v1alpha1.KeystoneIdentityBackend
	refused := func(t *testing.T, method, route, call string, cause func()) {
		t.Helper()
		op.keystone.Refuse(method, route, http.StatusForbidden, "You are not authorized to perform the requested action: "+method)
		cause()
		c := federationReady(t, b, metav1.ConditionFalse, identitybackend.ReasonFederationRejected)
		if !strings.Contains(c.Message, method+" "+call+": answer 403: You are not authorized to perform the requested action: "+method) {
			t.Fatalf("FederationRejected message %q does not name %s %s with Keystone's message", c.Message, method, call)
		}
		op.keystone.Refuse(method, route, 0, "")
	}
	refused(t, http.MethodPut, keystonetest.RouteIdentityProvider, idps+"corp-oidc", func() { b = newFederatedBackend(t, k, "corp", "corp") })
	if _, ok := op.keystone.IdentityProvider("corp-oidc"); ok {
		t.Fatal("the refused PUT created the provider")
	}
	registered := func() {
		t.Helper()
		federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	}
	registered()
	touchIt := func() { touch(t, b) }

	refused(t, http.MethodGet, keystonetest.RouteIdentityProvider, idps+"corp-oidc", touchIt)
	registered()
	refused(t, http.MethodPatch, keystonetest.RouteIdentityProvider, idps+"corp-oidc", func() {
		updateBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
			b.Spec.Federation.IdentityProviders[0].Description = "changed"
		})
	})
	registered()
	refused(t, http.MethodGet, keystonetest.RouteMapping, "/v3/OS-FEDERATION/mappings/corp-oidc-mapping", touchIt)
	registered()
	refused(t, http.MethodPatch, keystonetest.RouteMapping, "/v3/OS-FEDERATION/mappings/corp-oidc-mapping", func() {
		updateBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
			idp := &b.Spec.Federation.IdentityProviders[0]
			idp.Mapping = append(idp.Mapping, v1alpha1.MappingRule{
				Local:  []v1alpha1.MappingLocal{{Group: &v1alpha1.MappedGroup{ID: "g1"}}},
				Remote: []v1alpha1.MappingRemote{{Type: "OIDC-groups"}}})
		})
	})
	registered()
	refused(t, http.MethodGet, keystonetest.RouteProtocol, idps+"corp-oidc/protocols/openid", touchIt)
	registered()
	refused(t, http.MethodPatch, keystonetest.RouteProtocol, idps+"corp-oidc/protocols/openid", func() {
		if !op.keystone.SetProtocolMapping("corp-oidc", "openid", "corp-saml-mapping") {
			t.Fatal("no protocol corp-oidc/openid")
		}
		touch(t, b)
	})
	registered()
	if p, _ := op.keystone.Protocol("corp-oidc", "openid"); p.MappingID != "corp-oidc-mapping" {
		t.Fatalf("the protocol's drift stays: %+v", p)
	}

	// The added providers are SAML providers (copies of corp-saml): a Keystone serves
	// one OpenID Connect provider.
	addProvider := func(id string) func() {
		return func() {
			updateBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
				p := *b.Spec.Federation.IdentityProviders[1].DeepCopy()
				p.ID, p.RemoteIDs = id, []string{"https://" + id + ".example"}
				b.Spec.Federation.IdentityProviders = append(b.Spec.Federation.IdentityProviders, p)
			})
		}
	}
	refused(t, http.MethodPut, keystonetest.RouteMapping, "/v3/OS-FEDERATION/mappings/extra-mapping", addProvider("extra"))
	registered()
	refused(t, http.MethodPut, keystonetest.RouteProtocol, idps+"extra2/protocols/saml2", addProvider("extra2"))
	registered()
	expectProvider(t, op.keystone, "extra2", b.Status.DomainID, "saml2", []string{"https://extra2.example"}, b.Spec.Federation.IdentityProviders[3].Mapping)

	drop := func(id string) func() {
		return func() {
			updateBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
				b.Spec.Federation.IdentityProviders = slices.DeleteFunc(b.Spec.Federation.IdentityProviders,
					func(p v1alpha1.IdentityProviderSpec) bool { return p.ID == id })
			})
		}
	}
	refused(t, http.MethodDelete, keystonetest.RouteProtocol, idps+"extra2/protocols/saml2", drop("extra2"))
	registered()
	if _, ok := op.keystone.IdentityProvider("extra2"); ok {
		t.Fatal("extra2 left the spec but stays in Keystone")
	}
	refused(t, http.MethodDelete, keystonetest.RouteMapping, "/v3/OS-FEDERATION/mappings/extra-mapping", drop("extra"))
	registered()
	if _, ok := op.keystone.Mapping("extra-mapping"); ok {
		t.Fatal("extra's mapping stays in Keystone")
	}

	// The backend's deletion: a refused DELETE holds it (FederationRejected,
	// "deleting:"), then it goes.
	op.keystone.Refuse(http.MethodDelete, keystonetest.RouteIdentityProvider, http.StatusForbidden, "You are not authorized to perform the requested action: DELETE")
	if err := env.Client.Delete(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the refused deletion is reported", func() bool {
		var got v1alpha1.KeystoneIdentityBackend
		if env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), &got) != nil {
			return false
		}
		for _, c := range got.Status.Conditions {
			if c.Type == condFederation && c.Reason == identitybackend.ReasonFederationRejected &&
				strings.HasPrefix(c.Message, "deleting:") && strings.Contains(c.Message, "DELETE "+idps) {
				noSecretIn(t, c.Message)
				return true
			}
		}
		return false
	})
	op.keystone.Refuse(http.MethodDelete, keystonetest.RouteIdentityProvider, 0, "")
	gone(t, b)
	for _, id := range []string{"corp-oidc", "corp-saml"} {
		if _, ok := op.keystone.IdentityProvider(id); ok {
			t.Fatalf("%s stays in Keystone after the backend's deletion", id)
		}
	}
	expectEvent(t, b, "Normal", identitybackend.EventFederationRemoved)
}

// A Keystone that stays unreachable while its backend is deleted is given up after
// FederationGiveUpAfter: a Warning event names what remains, and the backend goes.
func TestFederationDeletionGivesUp(t *testing.T) {
	ns := env.Namespace(t)
	op := startFederationOperator(t, ns, time.Second)
	k := federatedKeystone(t, ns)
	b := newFederatedBackend(t, k, "corp", "corp")
	federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	op.keystone.SetUnavailable(true)
	// An unreachable Keystone leaves a registered federation True, as it leaves
	// DomainReady, also over a pass that read the backend from a cache lagging behind
	// the registration (TestLaggingCache).
	lookups := op.keystone.Calls("POST /v3/auth/tokens")
	touch(t, b)
	waitCalls(t, op, "POST /v3/auth/tokens", lookups+2)
	federationReady(t, b, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	if err := env.Client.Delete(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	gone(t, b)
	note := expectEvent(t, b, "Warning", identitybackend.EventFederationRemovalAbandoned)
	if !strings.Contains(note, "corp-oidc") || !strings.Contains(note, "answer 503") || !strings.Contains(note, "they remain there") {
		t.Fatalf("Warning event %q", note)
	}
	if _, ok := op.keystone.IdentityProvider("corp-oidc"); !ok {
		t.Fatal("the provider is gone although Keystone was unreachable")
	}

	// A backend whose Keystone is gone goes at once: Keystone's objects went with it.
	op.keystone.SetUnavailable(false)
	b2 := newFederatedBackend(t, k, "next", "next")
	federationReady(t, b2, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	op.keystone.SetUnavailable(true)
	if err := env.Client.Delete(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(context.Background(), b2); err != nil {
		t.Fatal(err)
	}
	gone(t, b2)
}
