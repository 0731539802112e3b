package identitybackend_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// clientSecret is the OpenID Connect client secret of the tests' providers: it belongs
// in the federation Secret and nowhere else (no condition, event, error or log).
const clientSecret = "0idc-Cl1ent-$ecret"

// samlMetadata is the IdP metadata of the tests' SAML provider.
const samlMetadata = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.partners.example/saml"/>`

// newKeyPair returns a self-signed PEM certificate and its PEM private key.
func newKeyPair(t *testing.T) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "keystone-sp"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(0, 0).AddDate(100, 0, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// newFederatedBackend creates a backend of k for domain with an OpenID Connect
// provider <name>-oidc (client secret in Secret <name>-client, key secret) and a SAML
// provider <name>-saml (metadata in ConfigMap <name>-idp, key pair in Secret
// <name>-sp), and those three objects.
func newFederatedBackend(t *testing.T, k *v1alpha1.Keystone, name, domain string) *v1alpha1.KeystoneIdentityBackend {
	t.Helper()
	ctx := context.Background()
	newSecret(t, k.Namespace, name+"-client", "secret", clientSecret)
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: name + "-idp"},
		Data: map[string]string{"metadata.xml": samlMetadata}}); err != nil {
		t.Fatal(err)
	}
	cert, key := newKeyPair(t)
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: name + "-sp"},
		Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key}}); err != nil {
		t.Fatal(err)
	}
	mapping := []v1alpha1.MappingRule{{
		Local:  []v1alpha1.MappingLocal{{User: &v1alpha1.MappedUser{Name: "{0}"}}},
		Remote: []v1alpha1.MappingRemote{{Type: "OIDC-preferred_username"}},
	}}
	b := &v1alpha1.KeystoneIdentityBackend{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: name},
		Spec: v1alpha1.KeystoneIdentityBackendSpec{
			KeystoneRef: v1alpha1.LocalObjectReference{Name: k.Name}, Domain: domain, Driver: "sql",
			Federation: &v1alpha1.FederationSpec{
				TrustedDashboards: []string{"https://dashboard.example.com/auth/websso/"},
				IdentityProviders: []v1alpha1.IdentityProviderSpec{
					{ID: name + "-oidc", Protocol: v1alpha1.ProtocolOpenID, RemoteIDs: []string{"https://sso." + domain + ".example"},
						OpenID: &v1alpha1.OpenIDSpec{Issuer: "https://sso." + domain + ".example", ClientID: "keystone",
							ClientSecretRef: v1alpha1.SecretKeyRef{Name: name + "-client", Key: "secret"}},
						Mapping: mapping},
					{ID: name + "-saml", Protocol: v1alpha1.ProtocolSAML2, RemoteIDs: []string{"https://idp." + domain + ".example/saml"},
						SAML2: &v1alpha1.SAML2Spec{
							IdPMetadata:        v1alpha1.SAMLMetadataSource{ConfigMapKeyRef: &v1alpha1.MetadataConfigMapRef{Name: name + "-idp", Key: "metadata.xml"}},
							SPKeyPairSecretRef: v1alpha1.LocalObjectReference{Name: name + "-sp"}},
						Mapping: mapping},
				},
			},
		},
	}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// federationSecret returns the federation Secret the step's condition on k names, or "".
func federationSecret(k *v1alpha1.Keystone) string {
	_, rest, ok := strings.Cut(keystoneCondition(k).Message, "rendered into Secret ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, ";")
	return name
}

// federationSecrets lists the names of k's federation Secrets that are not being
// deleted, sorted.
func federationSecrets(t *testing.T, k *v1alpha1.Keystone) []string {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(k.Namespace),
		client.MatchingLabels{config.ConfigBaseLabel: names.FederationBaseName(k)}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		if s.DeletionTimestamp == nil {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}

// noClientSecretIn fails when text carries the client secret.
func noClientSecretIn(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, clientSecret) {
		t.Fatalf("%s carries the client secret: %q", what, text)
	}
}

// TestStepRendersFederation: the identity providers of a gated backend are rendered
// into one content-addressed Secret the Keystone controls, created once; a Keystone
// whose backends declare no federation gets none; the client secret is in the
// Secret and in no condition, error or log.
func TestStepRendersFederation(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	corp := newFederatedBackend(t, k, "corp", "corp")
	plain := newBackend(t, k, "plain", "plain", "")
	expectReason(t, corp, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	expectReason(t, plain, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)

	domains, err := op.runStep(t, k)
	if err != nil || domains == "" {
		t.Fatalf("step: %q, %v", domains, err)
	}
	msg := keystoneCondition(k).Message
	noClientSecretIn(t, "IdentityBackendsReady", msg)
	secret := federationSecret(k)
	if !strings.HasPrefix(secret, "keystone-federation-") ||
		!strings.Contains(msg, "identity providers corp-oidc, corp-saml rendered into Secret "+secret) {
		t.Fatalf("message %q", msg)
	}
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: secret}, &s); err != nil {
		t.Fatal(err)
	}
	if s.Immutable == nil || !*s.Immutable || !metav1.IsControlledBy(&s, k) {
		t.Fatalf("federation Secret: immutable %v, owners %v", s.Immutable, s.OwnerReferences)
	}
	wantKeys := []string{identitybackend.FederationConfigFile, "httpd-openid-corp-oidc.conf", "httpd-saml2-corp-saml.conf",
		"saml2-corp-saml-idp-metadata.xml", "saml2-corp-saml-sp.crt", "saml2-corp-saml-sp.key"}
	slices.Sort(wantKeys)
	if got := slices.Sorted(maps.Keys(s.Data)); !slices.Equal(got, wantKeys) {
		t.Fatalf("federation Secret holds %v, want %v", got, wantKeys)
	}
	conf := string(s.Data[identitybackend.FederationConfigFile])
	for _, want := range []string{"methods = external,password,token,oauth1,mapped,application_credential,openid,saml2\n",
		"trusted_dashboard = https://dashboard.example.com/auth/websso/\n", "[openid]\nremote_id_attribute = HTTP_OIDC_ISS\n",
		"[saml2]\nremote_id_attribute = MELLON_IDP\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("%s lacks %q:\n%s", identitybackend.FederationConfigFile, want, conf)
		}
	}
	if oidc := string(s.Data["httpd-openid-corp-oidc.conf"]); !strings.Contains(oidc, `OIDCClientSecret "`+clientSecret+`"`) ||
		!strings.Contains(oidc, `OIDCProviderMetadataURL "https://sso.corp.example/.well-known/openid-configuration"`) {
		t.Errorf("httpd-openid-corp-oidc.conf:\n%s", oidc)
	}
	if got := string(s.Data["saml2-corp-saml-idp-metadata.xml"]); got != samlMetadata {
		t.Errorf("IdP metadata %q", got)
	}
	if got := reconcileState(t, op, k); got.FederationSecret != secret || !slices.Equal(got.FederationFiles, wantKeys) {
		t.Errorf("Projection = %+v, want federation Secret %s with %v", got, secret, wantKeys)
	}

	// The same documents name the same Secret: it is created once.
	if _, err := op.runStep(t, k); err != nil || federationSecret(k) != secret {
		t.Fatalf("second step: %q (want %q), %v", federationSecret(k), secret, err)
	}
	if got := federationSecrets(t, k); !slices.Equal(got, []string{secret}) {
		t.Fatalf("federation Secrets %v, want only %s", got, secret)
	}

	// A provider whose documents went away is left out and named; the other stays.
	idp := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "corp-idp"}}
	op.deleteSeen(t, idp)
	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	msg = keystoneCondition(k).Message
	if !strings.Contains(msg, "left out: identity provider corp-saml of corp (IdP metadata ConfigMap "+ns+"/corp-idp does not exist)") ||
		!strings.Contains(msg, "identity providers corp-oidc rendered into Secret") {
		t.Fatalf("message %q", msg)
	}
	if data := secretData(t, ns, federationSecret(k)); len(data) != 2 || data["httpd-openid-corp-oidc.conf"] == nil {
		t.Fatalf("federation Secret holds %s", keys(data))
	}

	// A Keystone whose backends declare no federation gets no federation Secret.
	bare := newKeystone(t, ns, "bare", "http://bare:5000")
	newAdminSecret(t, bare, adminPassword)
	lone := newBackend(t, bare, "lone", "lone", "")
	expectReason(t, lone, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	if _, err := op.runStep(t, bare); err != nil {
		t.Fatal(err)
	}
	if got := federationSecrets(t, bare); len(got) != 0 || federationSecret(bare) != "" || reconcileState(t, op, bare).FederationSecret != "" {
		t.Fatalf("a Keystone without federation has federation Secrets %v (message %q)", got, keystoneCondition(bare).Message)
	}

	for _, b := range []*v1alpha1.KeystoneIdentityBackend{corp, plain} {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
			t.Fatal(err)
		}
		for _, c := range b.Status.Conditions {
			noClientSecretIn(t, b.Name+" "+c.Type, c.Message)
		}
	}
	assertNoClientSecretInEvents(t, ns)
	if s := loggedSecret(clientSecret, adminPassword); s != "" {
		t.Fatalf("a secret reached the logs: %s", dumpLogsWith(s))
	}
}

// TestStepFederationConflicts: a provider whose id or remote id an older backend's
// provider holds is left out and named; an invalid federation leaves the backend's
// providers out, naming the fields; the domain files are projected all the same.
func TestStepFederationConflicts(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	older := newFederatedBackend(t, k, "corp", "corp")
	expectReason(t, older, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of a second
	younger := newFederatedBackend(t, k, "alpha", "alpha")
	updateBackend(t, younger, func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Spec.Federation.IdentityProviders[0].ID = "corp-oidc"                                      // corp's id
		b.Spec.Federation.IdentityProviders[1].RemoteIDs = []string{"https://idp.corp.example/saml"} // corp's remote id
	})
	expectDomainReady(t, younger)

	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	msg := keystoneCondition(k).Message
	for _, want := range []string{
		"domains alpha, corp projected",
		"identity providers corp-oidc, corp-saml rendered into Secret",
		"identity provider corp-oidc of alpha (KeystoneIdentityBackend corp, older, declares that id)",
		`identity provider alpha-saml of alpha (its remote id "https://idp.corp.example/saml" is identity provider corp-saml's)`,
	} {
		if !strings.Contains(msg, want) {
			t.Fatalf("message %q lacks %q", msg, want)
		}
	}

	// A federation the webhook would refuse, written past it, is left out whole.
	invalid := newBackend(t, k, "invalid", "invalid", "")
	updateBackend(t, invalid, func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Spec.Federation = &v1alpha1.FederationSpec{IdentityProviders: []v1alpha1.IdentityProviderSpec{{
			ID: "inv", Protocol: v1alpha1.ProtocolSAML2,
			SAML2: &v1alpha1.SAML2Spec{IdPMetadata: v1alpha1.SAMLMetadataSource{Inline: "<html/>"},
				SPKeyPairSecretRef: v1alpha1.LocalObjectReference{Name: "sp"}},
			Mapping: []v1alpha1.MappingRule{{Local: []v1alpha1.MappingLocal{{Groups: "{0}"}},
				Remote: []v1alpha1.MappingRemote{{Type: "MELLON_groups"}}}},
		}}}
	})
	expectDomainReady(t, invalid)
	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	if msg := keystoneCondition(k).Message; !strings.Contains(msg,
		"the federation of invalid (invalid spec.federation.identityProviders[0].saml2.idpMetadata.inline)") ||
		!strings.Contains(msg, "domains alpha, corp, invalid projected") {
		t.Fatalf("message %q", msg)
	}
}

// TestStepPrunesOlderFederationSecrets: each new client secret names a new federation
// Secret; older ones beyond RetainFederationSecrets go, unless a workload mounts them.
func TestStepPrunesOlderFederationSecrets(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	b := newFederatedBackend(t, k, "corp", "corp")
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	client0 := &corev1.Secret{}
	ctx := context.Background()
	var made []string
	for i := range identitybackend.RetainFederationSecrets + 3 {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "corp-client"}, client0); err != nil {
			t.Fatal(err)
		}
		client0.Data["secret"] = []byte(fmt.Sprintf("%s-%d", clientSecret, i))
		if err := env.Client.Update(ctx, client0); err != nil {
			t.Fatal(err)
		}
		if _, err := op.runStep(t, k); err != nil {
			t.Fatal(err)
		}
		secret := federationSecret(k)
		if slices.Contains(made, secret) || secret == "" {
			t.Fatalf("client secret %d: federation Secret %q, made before %v", i, secret, made)
		}
		if i == 0 { // the pods keep mounting the first one
			d := newDeployment(t, k, "")
			d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: identitybackend.FederationVolumeName,
				VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}}
			if err := env.Client.Update(ctx, d); err != nil {
				t.Fatal(err)
			}
			waitMounted(t, op, d, secret)
		}
		made = append(made, secret)
		time.Sleep(1100 * time.Millisecond) // distinct creation timestamps
	}
	last := len(made) - 1
	want := append([]string{made[0]}, made[last-identitybackend.RetainFederationSecrets:]...)
	slices.Sort(want)
	if got := federationSecrets(t, k); !slices.Equal(got, want) {
		t.Fatalf("federation Secrets %v, want %v (the mounted first one and the %d newest)", got, want, identitybackend.RetainFederationSecrets+1)
	}
}

// waitMounted waits until the operator's cache sees d mounting secret, as the prune
// reads it.
func waitMounted(t *testing.T, op *operator, d *appsv1.Deployment, secret string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var got appsv1.Deployment
		if err := op.local.Get(context.Background(), client.ObjectKeyFromObject(d), &got); err == nil &&
			len(got.Spec.Template.Spec.Volumes) == 1 && got.Spec.Template.Spec.Volumes[0].Secret.SecretName == secret {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the operator's cache never saw Deployment %s mount %s", client.ObjectKeyFromObject(d), secret)
}

// TestStepFederationFaults fails each new API call of the federation path in turn: the
// reads of the client secret, the IdP metadata ConfigMap and the key pair Secret, the
// create of the federation Secret and the delete of an older one. Each ends the pass
// with the error, sets IdentityBackendsReady False IdentityBackendsError naming what
// failed, never quotes the client secret, and the next pass recovers.
func TestStepFederationFaults(t *testing.T) {
	for _, tc := range []struct {
		verb faults.Verb
		nth  int
		want string
	}{
		{faults.VerbGet, 1, "reading the client secret of identity provider corp-oidc of KeystoneIdentityBackend"},
		{faults.VerbGet, 2, "reading the IdP metadata of identity provider corp-saml of KeystoneIdentityBackend"},
		{faults.VerbGet, 3, "reading the service provider key pair of identity provider corp-saml of KeystoneIdentityBackend"},
		{faults.VerbGet, 4, "the session passphrase of identity provider corp-oidc"},
		{faults.VerbCreate, 1, "the session passphrase of identity provider corp-oidc"},
		{faults.VerbCreate, 3, "writing the federation Secret of Keystone"},
		{faults.VerbDelete, 1, "pruning the older federation Secrets of Keystone"},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.verb, tc.nth), func(t *testing.T) {
			ns := env.Namespace(t)
			startOperator(t, ns)
			k := newKeystone(t, ns, "keystone", "http://keystone:5000")
			newAdminSecret(t, k, adminPassword)
			b := newFederatedBackend(t, k, "corp", "corp")
			expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
			ctx := context.Background()
			for i := range identitybackend.RetainFederationSecrets + 1 { // older Secrets the prune deletes
				if _, err := config.CreateImmutableSecret(ctx, env.Client, env.Scheme, k, names.FederationBaseName(k), ns,
					map[string][]byte{"old": []byte(fmt.Sprint(i))}); err != nil {
					t.Fatal(err)
				}
			}

			inj := faults.NewInjector()
			c := apply.NewApplier(inj.Client(env.Client), apply.ApplierOptions{FieldManager: fieldManager})
			inj.Arm(tc.verb, tc.nth, faults.Internal)
			_, err := identitybackend.NewStep(c).Reconcile(ctx, k)
			if !inj.Fired() || !errors.Is(err, faults.ErrInjected) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("step: %v (fired %v), want the injected fault under %q", err, inj.Fired(), tc.want)
			}
			cond := keystoneCondition(k)
			if cond.Status != metav1.ConditionFalse || cond.Reason != identitybackend.ReasonIdentityBackendsError ||
				!strings.Contains(cond.Message, tc.want) {
				t.Fatalf("IdentityBackendsReady = %s/%s %q", cond.Status, cond.Reason, cond.Message)
			}
			noClientSecretIn(t, "the error", err.Error())
			noClientSecretIn(t, "IdentityBackendsReady", cond.Message)

			inj.Disarm()
			if _, err := identitybackend.NewStep(c).Reconcile(ctx, k); err != nil {
				t.Fatalf("the step does not recover once the fault is gone: %v", err)
			}
			if cond := keystoneCondition(k); cond.Reason != identitybackend.ReasonIdentityBackendsProjected || federationSecret(k) == "" {
				t.Fatalf("after recovery: %s %q", cond.Reason, cond.Message)
			}
		})
	}
}

// assertNoClientSecretInEvents fails when an event of namespace ns carries the client
// secret.
func assertNoClientSecretInEvents(t *testing.T, ns string) {
	t.Helper()
	var events corev1.EventList
	if err := env.Client.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		noClientSecretIn(t, "event "+e.Reason, e.Message)
	}
}

// reconcileState runs the step for k once more, as the Keystone's pass does, and
// returns the Projection it hands to the later rows.
func reconcileState(t *testing.T, op *operator, k *v1alpha1.Keystone) identitybackend.Projection {
	t.Helper()
	state := &identitybackend.Projection{}
	ctx := reconcile.WithState(multicluster.WithTarget(context.Background(), op.resolver.Local()), state)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
		t.Fatal(err)
	}
	if _, err := identitybackend.NewStep(op.local).Reconcile(ctx, k); err != nil {
		t.Fatal(err)
	}
	return *state
}

// updateBackend applies change to the stored backend b, retrying when the controller's
// status write got in between.
func updateBackend(t *testing.T, b *v1alpha1.KeystoneIdentityBackend, change func(*v1alpha1.KeystoneIdentityBackend)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
			return err
		}
		change(b)
		return env.Client.Update(context.Background(), b)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// expectDomainReady waits until b's DomainReady is True for its current generation,
// created or adopted (an update racing the create's status write loses that record).
func expectDomainReady(t *testing.T, b *v1alpha1.KeystoneIdentityBackend) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), b); err == nil {
			c := meta.FindStatusCondition(b.Status.Conditions, condDomain)
			if c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == b.Generation {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: DomainReady never turned True for generation %d: %v", b.Name, b.Generation, b.Status.Conditions)
}
