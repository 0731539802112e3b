package identitybackend_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// renderedPassphrase returns the OIDCCryptoPassphrase of provider id in the federation
// Secret ns/secret, failing when the fragment carries none.
func renderedPassphrase(t *testing.T, ns, secret, id string) string {
	t.Helper()
	conf := string(secretData(t, ns, secret)["httpd-openid-"+id+".conf"])
	for _, line := range strings.Split(conf, "\n") {
		if v, ok := strings.CutPrefix(line, "OIDCCryptoPassphrase "); ok {
			return strings.Trim(v, `"`)
		}
	}
	t.Fatalf("federation Secret %s holds no session passphrase of %s:\n%s", secret, id, conf)
	return ""
}

// passphraseSecret reads k's session passphrase Secret.
func passphraseSecret(t *testing.T, k *v1alpha1.Keystone) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: k.Namespace, Name: names.OpenIDPassphraseSecretName(k)}, s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOneOpenIDProviderPerKeystone: a Keystone serves one OpenID Connect provider, the
// first of its oldest backend declaring one. A newer backend's OpenID Connect provider
// is neither registered nor rendered (FederationReady False, TooManyOpenIDProviders,
// naming the field, the holder and the limit), its SAML provider is, and the older
// provider keeps working; once the older backend goes the newer one's provider takes
// its place. A second OpenID Connect provider of one backend, written past the
// webhook, is refused the same way.
func TestOneOpenIDProviderPerKeystone(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := federatedKeystone(t, ns)
	corp := newFederatedBackend(t, k, "corp", "corp")
	federationReady(t, corp, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of a second
	alpha := newFederatedBackend(t, k, "alpha", "alpha")

	c := federationReady(t, alpha, metav1.ConditionFalse, identitybackend.ReasonTooManyOpenIDProviders)
	for _, want := range []string{
		"identity provider alpha-oidc (spec.federation.identityProviders[0]) is neither rendered nor registered in Keystone",
		"identity provider corp-oidc of KeystoneIdentityBackend corp, older, is its OpenID Connect provider",
		"a Keystone serves at most one", "remove it from spec.federation",
	} {
		if !strings.Contains(c.Message, want) {
			t.Fatalf("FederationReady message %q lacks %q", c.Message, want)
		}
	}
	expectReason(t, alpha, reconcile.ConditionReady, metav1.ConditionFalse, identitybackend.ReasonTooManyOpenIDProviders)
	waitUntil(t, "alpha's SAML provider is registered", func() bool {
		_, ok := op.keystone.Protocol("alpha-saml", "saml2")
		return ok
	})
	if _, ok := op.keystone.IdentityProvider("alpha-oidc"); ok {
		t.Fatal("the second OpenID Connect provider was registered in Keystone")
	}
	federationReady(t, corp, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	corpDomain, _ := op.keystone.Domain("corp")
	expectProvider(t, op.keystone, "corp-oidc", corpDomain.ID, "openid", []string{"https://sso.corp.example"}, corp.Spec.Federation.IdentityProviders[0].Mapping)

	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	msg := keystoneCondition(k).Message
	for _, want := range []string{
		"identity providers corp-oidc, corp-saml, alpha-saml rendered into Secret",
		"left out: identity provider alpha-oidc of alpha (a second OpenID Connect provider of Keystone keystone: " +
			"identity provider corp-oidc of KeystoneIdentityBackend corp, older, is its OpenID Connect provider",
	} {
		if !strings.Contains(msg, want) {
			t.Fatalf("IdentityBackendsReady message %q lacks %q", msg, want)
		}
	}
	data := secretData(t, ns, federationSecret(k))
	if _, ok := data["httpd-openid-alpha-oidc.conf"]; ok || data["httpd-openid-corp-oidc.conf"] == nil || data["httpd-saml2-alpha-saml.conf"] == nil {
		t.Fatalf("federation Secret holds %s: want corp's OpenID Connect provider and alpha's SAML provider, not alpha's OpenID Connect provider", keys(data))
	}

	// The older backend goes: the newer backend's provider is the Keystone's now.
	if err := env.Client.Delete(ctx, corp); err != nil {
		t.Fatal(err)
	}
	gone(t, corp)
	federationReady(t, alpha, metav1.ConditionTrue, identitybackend.ReasonIdentityProvidersRegistered)
	alphaDomain, _ := op.keystone.Domain("alpha")
	expectProvider(t, op.keystone, "alpha-oidc", alphaDomain.ID, "openid", []string{"https://sso.alpha.example"}, alpha.Spec.Federation.IdentityProviders[0].Mapping)
	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	if data := secretData(t, ns, federationSecret(k)); data["httpd-openid-alpha-oidc.conf"] == nil {
		t.Fatalf("federation Secret holds %s, not alpha's OpenID Connect provider", keys(data))
	}

	// A second OpenID Connect provider of the same backend, past the webhook: the
	// first stays served, the second is refused.
	updateBackend(t, alpha, func(b *v1alpha1.KeystoneIdentityBackend) {
		second := *b.Spec.Federation.IdentityProviders[0].DeepCopy()
		second.ID, second.RemoteIDs = "alpha-oidc2", []string{"https://sso2.alpha.example"}
		b.Spec.Federation.IdentityProviders = append(b.Spec.Federation.IdentityProviders, second)
	})
	c = federationReady(t, alpha, metav1.ConditionFalse, identitybackend.ReasonTooManyOpenIDProviders)
	if !strings.Contains(c.Message, "identity provider alpha-oidc2 (spec.federation.identityProviders[2]) is neither rendered nor registered in Keystone: "+
		"a second OpenID Connect provider of Keystone keystone: identity provider alpha-oidc of KeystoneIdentityBackend alpha is its OpenID Connect provider") {
		t.Fatalf("FederationReady message %q", c.Message)
	}
	if _, ok := op.keystone.IdentityProvider("alpha-oidc2"); ok {
		t.Fatal("the backend's second OpenID Connect provider was registered in Keystone")
	}
	expectProvider(t, op.keystone, "alpha-oidc", alphaDomain.ID, "openid", []string{"https://sso.alpha.example"}, alpha.Spec.Federation.IdentityProviders[0].Mapping)
	expectDomainReady(t, alpha)
	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	if msg := keystoneCondition(k).Message; !strings.Contains(msg, "left out: identity provider alpha-oidc2 of alpha (a second OpenID Connect provider") {
		t.Fatalf("IdentityBackendsReady message %q", msg)
	}
	data = secretData(t, ns, federationSecret(k))
	if _, ok := data["httpd-openid-alpha-oidc2.conf"]; ok || data["httpd-openid-alpha-oidc.conf"] == nil {
		t.Fatalf("federation Secret holds %s", keys(data))
	}
}

// TestOpenIDSessionPassphrase: the session passphrase of an OpenID Connect provider is
// random, generated once into a Secret the Keystone controls, one key per provider:
// the same over passes, a new client secret and a restarted operator; another
// provider and another Keystone get their own; it is not derived from the client
// secret and reaches no condition, event or log.
func TestOpenIDSessionPassphrase(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := federatedKeystone(t, ns)
	corp := newFederatedBackend(t, k, "corp", "corp")
	expectReason(t, corp, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	first := federationSecret(k)
	pass := renderedPassphrase(t, ns, first, "corp-oidc")
	s := passphraseSecret(t, k)
	if string(s.Data["corp-oidc"]) != pass || len(pass) != 32 {
		t.Fatalf("Secret %s holds %d characters under corp-oidc, the fragment %d: want the same 32", s.Name, len(s.Data["corp-oidc"]), len(pass))
	}
	if !metav1.IsControlledBy(s, k) {
		t.Fatalf("Secret %s owners %v: want Keystone %s as its controller", s.Name, s.OwnerReferences, k.Name)
	}
	sum := sha256.Sum256([]byte("keystone-openid-session\x00corp-oidc\x00" + clientSecret))
	if pass == hex.EncodeToString(sum[:]) || strings.Contains(pass, clientSecret) {
		t.Fatal("the session passphrase is derived from the client secret")
	}

	// Another pass: the same Secrets.
	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	if got := federationSecret(k); got != first {
		t.Fatalf("a second pass rendered %s, want %s", got, first)
	}

	// A new client secret: new documents, the same passphrase.
	cs := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "corp-client"}, cs); err != nil {
		t.Fatal(err)
	}
	cs.Data["secret"] = []byte(clientSecret + "-rotated")
	if err := env.Client.Update(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	rotated := federationSecret(k)
	if rotated == first {
		t.Fatal("the new client secret rendered no new federation Secret")
	}
	if got := renderedPassphrase(t, ns, rotated, "corp-oidc"); got != pass {
		t.Fatal("a new client secret changed the session passphrase")
	}

	// A restarted operator (a new manager, its cache empty) renders the same.
	restarted := startManager(t, ns, false)
	if _, err := restarted.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	if got := federationSecret(k); got != rotated {
		t.Fatalf("the restarted operator rendered %s, want %s", got, rotated)
	}

	// Another Keystone's provider has a passphrase of its own, in its own Secret.
	k2 := newKeystone(t, ns, "other", "http://other:5000")
	newAdminSecret(t, k2, adminPassword)
	other := newFederatedBackend(t, k2, "other", "other")
	expectReason(t, other, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	if _, err := op.runStep(t, k2); err != nil {
		t.Fatal(err)
	}
	otherPass := renderedPassphrase(t, ns, federationSecret(k2), "other-oidc")
	if otherPass == pass {
		t.Fatal("two Keystones' providers share a session passphrase")
	}
	if s2 := passphraseSecret(t, k2); !metav1.IsControlledBy(s2, k2) || string(s2.Data["other-oidc"]) != otherPass {
		t.Fatalf("Secret %s: owners %v, keys %s", s2.Name, s2.OwnerReferences, keys(s2.Data))
	}

	// Another provider of the same Keystone gets a key of its own; the first stays.
	updateBackend(t, corp, func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Federation.IdentityProviders[0].ID = "corp-sso" })
	expectDomainReady(t, corp)
	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	ssoPass := renderedPassphrase(t, ns, federationSecret(k), "corp-sso")
	if s := passphraseSecret(t, k); ssoPass == pass || string(s.Data["corp-sso"]) != ssoPass || string(s.Data["corp-oidc"]) != pass {
		t.Fatalf("after renaming the provider: Secret %s holds %s; want corp-oidc kept and a new passphrase for corp-sso", s.Name, keys(s.Data))
	}

	for _, obj := range []*v1alpha1.Keystone{k, k2} {
		for _, c := range obj.Status.Conditions {
			for _, p := range []string{pass, otherPass, ssoPass} {
				if strings.Contains(c.Message, p) {
					t.Fatalf("condition %s of Keystone %s carries a session passphrase", c.Type, obj.Name)
				}
			}
		}
	}
	for _, b := range []*v1alpha1.KeystoneIdentityBackend{corp, other} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
			t.Fatal(err)
		}
		for _, c := range b.Status.Conditions {
			if strings.Contains(c.Message, pass) || strings.Contains(c.Message, otherPass) {
				t.Fatalf("condition %s of %s carries a session passphrase", c.Type, b.Name)
			}
		}
	}
	var events corev1.EventList
	if err := env.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Message, pass) {
			t.Fatalf("event %s carries a session passphrase", e.Name)
		}
	}
	if s := loggedSecret(pass, otherPass, ssoPass); s != "" {
		t.Fatal("a log line carries a session passphrase")
	}
}

// TestFederationResyncWhileReady: a Ready backend checks Keystone again every
// Options.ResyncInterval, so an identity provider, its mapping and its protocol
// deleted there behind the operator's back are created again with no other event.
func TestFederationResyncWhileReady(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	op := startManagerWith(t, ns, "", true, func(o *identitybackend.Options, _ *keystonetest.Server) {
		o.ResyncInterval = time.Second
	})
	k := federatedKeystone(t, ns)
	b := newFederatedBackend(t, k, "corp", "corp")
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	domains, err := op.runStep(t, k)
	if err != nil {
		t.Fatal(err)
	}
	d := newDeployment(t, k, domains)
	mountProjection(t, d, domains, federationSecret(k))
	markAvailable(t, d)
	expectReason(t, b, reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady)

	api := op.api(t)
	if err := api.DeleteProtocol(ctx, "corp-oidc", "openid"); err != nil {
		t.Fatal(err)
	}
	if err := api.DeleteMapping(ctx, "corp-oidc-mapping"); err != nil {
		t.Fatal(err)
	}
	if err := api.DeleteIdentityProvider(ctx, "corp-oidc"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the deleted provider, mapping and protocol are created again", func() bool {
		_, idp := op.keystone.IdentityProvider("corp-oidc")
		_, m := op.keystone.Mapping("corp-oidc-mapping")
		_, p := op.keystone.Protocol("corp-oidc", "openid")
		return idp && m && p
	})
	dom, _ := op.keystone.Domain("corp")
	expectProvider(t, op.keystone, "corp-oidc", dom.ID, "openid", []string{"https://sso.corp.example"}, b.Spec.Federation.IdentityProviders[0].Mapping)
	expectReason(t, b, reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady)
}
