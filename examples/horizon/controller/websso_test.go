package controller_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// credentials is the hand-written choice of the single sign-on Horizons of these tests.
var credentials = [2]string{"credentials", "Keystone Credentials"}

// ssoHorizon is a minimal Horizon in ns with single sign-on enabled: the hand-written
// credentials choice, preselected, and the identity backends named.
func ssoHorizon(ns, name string, backends ...string) *v1alpha1.Horizon {
	h := newHorizon(ns, name)
	h.Spec.WebSSO = &v1alpha1.WebSSOSpec{Enabled: true, InitialChoice: credentials[0],
		Choices:     []v1alpha1.WebSSOChoice{{ID: credentials[0], Label: credentials[1]}},
		KeystoneURL: "https://keystone.example.com/v3"}
	for _, b := range backends {
		h.Spec.WebSSO.IdentityBackends = append(h.Spec.WebSSO.IdentityBackends, v1alpha1.IdentityBackendRef{Name: b})
	}
	return h
}

// federatedBackendYAML is a KeystoneIdentityBackend whose domain has one OpenID Connect
// provider (corp-oidc) and one SAML 2.0 provider (corp-saml), as a user writes it.
const federatedBackendYAML = `
apiVersion: keystone.openstack.c5c3.io/v1alpha1
kind: KeystoneIdentityBackend
spec:
  keystoneRef:
    name: keystone
  domain: corp
  driver: sql
  federation:
    identityProviders:
      - id: corp-oidc
        description: Corporate OpenID Connect
        protocol: openid
        mapping:
          - local:
              - user:
                  name: "{0}"
            remote:
              - type: REMOTE_USER
        openid:
          issuer: https://sso.corp.example.com/realms/corp
          clientID: keystone
          clientSecretRef:
            name: corp-client
            key: secret
      - id: corp-saml
        protocol: saml2
        mapping:
          - local:
              - user:
                  name: "{0}"
            remote:
              - type: REMOTE_USER
        saml2:
          idpMetadata:
            inline: <EntityDescriptor/>
          spKeyPairSecretRef:
            name: corp-sp
`

// federatedBackend is federatedBackendYAML named name in ns, as an unstructured object
// (the Horizon operator does not import the Keystone example's types). No Keystone
// controller runs in these tests: the test writes its status.
func federatedBackend(ns, name string) *unstructured.Unstructured {
	b := &unstructured.Unstructured{}
	if err := yaml.UnmarshalStrict([]byte(federatedBackendYAML), &b.Object); err != nil {
		panic(fmt.Sprintf("federatedBackendYAML: %v", err))
	}
	b.SetNamespace(ns)
	b.SetName(name)
	return b
}

// registerProviders writes b's status through the status subresource as the Keystone
// controller does once it has registered every provider of spec.federation: one
// status.identityProviders entry each, with its mapping and protocol.
func registerProviders(t *testing.T, b *unstructured.Unstructured) {
	t.Helper()
	if err := env.Client.Get(context.Background(), clientKey(b), b); err != nil {
		t.Fatal(err)
	}
	idps, _, err := unstructured.NestedSlice(b.Object, "spec", "federation", "identityProviders")
	if err != nil {
		t.Fatalf("spec.federation.identityProviders of KeystoneIdentityBackend %s: %v", clientKey(b), err)
	}
	var registered []any
	for _, p := range idps {
		id, protocol := p.(map[string]any)["id"].(string), p.(map[string]any)["protocol"].(string)
		registered = append(registered, map[string]any{"id": id, "mappingID": id + "_mapping", "protocol": protocol,
			"createdProvider": true, "createdMapping": true, "createdProtocol": true})
	}
	if err := unstructured.SetNestedSlice(b.Object, registered, "status", "identityProviders"); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Status().Update(context.Background(), b); err != nil {
		t.Fatalf("writing the status of KeystoneIdentityBackend %s: %v", clientKey(b), err)
	}
}

// renderedSSO is what a rendered local_settings.py says about single sign-on.
type renderedSSO struct {
	// Choices are the (id, label) pairs of WEBSSO_CHOICES, in order.
	Choices [][2]string
	// Mapping is WEBSSO_IDP_MAPPING: choice id to (identity provider, protocol); nil
	// when the file has no WEBSSO_IDP_MAPPING.
	Mapping map[string][2]string
}

var (
	// pyStr is one double-quoted Python string as settings.Render writes it.
	pyStr = `"((?:[^"\\]|\\.)*)"`
	// choiceLine is one entry of WEBSSO_CHOICES; mappingLine one of WEBSSO_IDP_MAPPING.
	choiceLine  = regexp.MustCompile(`^    \(` + pyStr + `, ` + pyStr + `\),$`)
	mappingLine = regexp.MustCompile(`^    ` + pyStr + `: \(` + pyStr + `, ` + pyStr + `\),$`)
)

// parseSSO parses WEBSSO_CHOICES and WEBSSO_IDP_MAPPING out of a rendered
// local_settings.py: each assignment is one opening line, one line per entry and a
// closing line; an entry that is not a well-formed pair fails the test.
func parseSSO(t *testing.T, file string) renderedSSO {
	t.Helper()
	var out renderedSSO
	lines := strings.Split(file, "\n")
	unquote := func(s string) string {
		u, err := strconv.Unquote(`"` + s + `"`)
		if err != nil {
			t.Fatalf("string %q of the settings: %v", s, err)
		}
		return u
	}
	block := func(name, open, closing string) []string {
		start := slices.Index(lines, name+" = "+open)
		if start < 0 {
			return nil
		}
		end := slices.Index(lines[start:], closing)
		if end < 0 {
			t.Fatalf("%s is not closed:\n%s", name, file)
		}
		return lines[start+1 : start+end]
	}
	for _, l := range block("WEBSSO_CHOICES", "(", ")") {
		m := choiceLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("WEBSSO_CHOICES entry %q is not a pair of strings", l)
		}
		out.Choices = append(out.Choices, [2]string{unquote(m[1]), unquote(m[2])})
	}
	if entries := block("WEBSSO_IDP_MAPPING", "{", "}"); entries != nil {
		out.Mapping = map[string][2]string{}
		for _, l := range entries {
			m := mappingLine.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("WEBSSO_IDP_MAPPING entry %q is not a string key with a pair of strings", l)
			}
			out.Mapping[unquote(m[1])] = [2]string{unquote(m[2]), unquote(m[3])}
		}
	}
	return out
}

// currentSSO reads h, then the ConfigMap of its status.configMap, and returns the
// ConfigMap's name and what its local_settings.py says about single sign-on.
func currentSSO(t *testing.T, h *v1alpha1.Horizon) (string, renderedSSO) {
	t.Helper()
	if err := env.Client.Get(context.Background(), clientKey(h), h); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: h.Namespace, Name: h.Status.ConfigMap}, cm); err != nil {
		t.Fatalf("ConfigMap %q of status.configMap: %v", h.Status.ConfigMap, err)
	}
	file := cm.Data[controller.SettingsFile]
	if !strings.Contains(file, "\nWEBSSO_ENABLED = True\n") {
		t.Fatalf("ConfigMap %s does not enable single sign-on:\n%s", cm.Name, file)
	}
	return cm.Name, parseSSO(t, file)
}

// bothProviders is what the login page of a Horizon naming a federatedBackend offers
// once both providers are registered: the hand-written choice, then the OpenID Connect
// provider (its description as label) and the SAML provider (no description: its id).
var bothProviders = renderedSSO{
	Choices: [][2]string{credentials, {"corp-oidc_openid", "Corporate OpenID Connect"}, {"corp-saml_saml2", "corp-saml"}},
	Mapping: map[string][2]string{"corp-oidc_openid": {"corp-oidc", "openid"}, "corp-saml_saml2": {"corp-saml", "saml2"}},
}

// One KeystoneIdentityBackend with an OpenID Connect and a SAML provider, both
// registered: the Horizon that names it is Ready, WebSSOReady says the providers are
// offered, its rendered local_settings.py lists both providers as WEBSSO_CHOICES after
// the hand-written choice and maps each in WEBSSO_IDP_MAPPING, the pods mount it, and a
// converged pass sends no request (the backend is read through the cache).
func TestWebSSOChoicesFromIdentityBackend(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	op := startOperator(t, ns, operatorOptions{})
	b := federatedBackend(ns, "corp")
	if err := env.Client.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	registerProviders(t, b)
	h := ssoHorizon(ns, "dashboard", "corp")
	createHorizon(t, env, h)
	waitReady(t, h, newWorld(env.Client, "sso-key"))
	expectReasons(t, env, h, wantCondition{controller.ConditionWebSSOReady, metav1.ConditionTrue,
		controller.ReasonIdentityProvidersOffered, "the login page offers identity provider choices corp-oidc_openid, corp-saml_saml2"})

	name, got := currentSSO(t, h)
	if diff := cmp.Diff(bothProviders, got); diff != "" {
		t.Errorf("single sign-on of ConfigMap %s (-want +got):\n%s", name, diff)
	}
	waitRolledOut(t, h, "rollout of ConfigMap "+name, func(d *appsv1.Deployment) bool {
		return mountedConfigMap(&d.Spec.Template.Spec) == name
	})

	// The backend is read through the operator's cache: once converged, a pass sends
	// no request at all.
	req := ctrl.Request{NamespacedName: clientKey(h)}
	testenv.Eventually(t, 30*time.Second, "a converged pass that sends no request", func(ctx context.Context) (bool, error) {
		op.counter.Reset()
		if _, err := op.rec.Reconcile(ctx, req); err != nil {
			return false, err
		}
		return op.counter.Total() == 0, nil
	})
}

// A backend that does not exist yet, then exists without registered providers: the
// Horizon renders and runs with the hand-written choice only, WebSSOReady is False
// with WaitingForIdentityBackend naming the backend and its field (and Ready names it),
// and the ConfigMap stays the same. Once the backend's status reports both providers
// registered, the settings roll once: one new ConfigMap with both choices, mounted by
// the pods, and nothing more on later passes.
func TestWebSSOWaitsForIdentityBackend(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	h := ssoHorizon(ns, "dashboard", "corp")
	createHorizon(t, env, h)
	w := newWorld(env.Client, "waiting-key")
	missing := "KeystoneIdentityBackend corp (spec.websso.identityBackends[0]) does not exist"
	testenv.ExpectConditionWhile(t, env.Client, h, controller.ConditionDeploymentReady, metav1.ConditionTrue, w.Hook(h))
	got := expectReasons(t, env, h,
		wantCondition{controller.ConditionWebSSOReady, metav1.ConditionFalse, controller.ReasonWaitingForIdentityBackend, missing},
		wantCondition{controller.ConditionConfigReady, metav1.ConditionTrue, controller.ReasonConfigRendered, ""},
		readyBlockedBy(controller.ConditionWebSSOReady, controller.ReasonWaitingForIdentityBackend, missing))
	first, sso := currentSSO(t, got)
	if diff := cmp.Diff(renderedSSO{Choices: [][2]string{credentials}}, sso); diff != "" {
		t.Errorf("single sign-on without the backend (-want +got):\n%s", diff)
	}

	b := federatedBackend(ns, "corp")
	if err := env.Client.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	expectReasons(t, env, h, wantCondition{controller.ConditionWebSSOReady, metav1.ConditionFalse, controller.ReasonWaitingForIdentityBackend,
		"KeystoneIdentityBackend corp (spec.websso.identityBackends[0]) has not registered identity providers corp-oidc (openid), corp-saml (saml2) in Keystone yet"})
	if name, _ := currentSSO(t, h); name != first {
		t.Fatalf("status.configMap moved from %s to %s while no provider is registered", first, name)
	}

	registerProviders(t, b)
	waitReady(t, h, w)
	second, sso := currentSSO(t, h)
	if second == first {
		t.Fatalf("status.configMap is still %s after the providers were registered", first)
	}
	if diff := cmp.Diff(bothProviders, sso); diff != "" {
		t.Errorf("single sign-on of ConfigMap %s (-want +got):\n%s", second, diff)
	}
	d := waitRolledOut(t, h, "rollout of ConfigMap "+second, func(d *appsv1.Deployment) bool {
		return mountedConfigMap(&d.Spec.Template.Spec) == second
	})
	poke(t, h)
	time.Sleep(2 * time.Second) // the pass of the poke
	names, err := configMapsOf(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if want := sorted([]string{first, second}); !slices.Equal(names, want) {
		t.Errorf("ConfigMaps %v, want the one without and the one with the providers, %v", names, want)
	}
	rss, err := replicaSetsOf(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if len(rss) != 2 {
		t.Errorf("the Deployment has %d ReplicaSets, want 2: the settings rolled once", len(rss))
	}
}

// A name in spec.websso.identityBackends is a backend of the Horizon's own namespace: a
// registered backend of that name in another namespace is never read, so the Horizon
// waits for its own, renders the hand-written choice only, and the other backend's
// status changes bring no new ConfigMap.
func TestWebSSOIdentityBackendOfAnotherNamespace(t *testing.T) {
	t.Parallel()
	ns, other := env.Namespace(t), env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	elsewhere := federatedBackend(other, "corp")
	if err := env.Client.Create(context.Background(), elsewhere); err != nil {
		t.Fatal(err)
	}
	registerProviders(t, elsewhere)
	h := ssoHorizon(ns, "dashboard", "corp")
	createHorizon(t, env, h)
	w := newWorld(env.Client, "other-ns-key")
	testenv.ExpectConditionWhile(t, env.Client, h, controller.ConditionDeploymentReady, metav1.ConditionTrue, w.Hook(h))
	got := expectReasons(t, env, h, wantCondition{controller.ConditionWebSSOReady, metav1.ConditionFalse,
		controller.ReasonWaitingForIdentityBackend, "KeystoneIdentityBackend corp (spec.websso.identityBackends[0]) does not exist"})
	first, sso := currentSSO(t, got)
	if diff := cmp.Diff(renderedSSO{Choices: [][2]string{credentials}}, sso); diff != "" {
		t.Errorf("single sign-on with the backend in namespace %s only (-want +got):\n%s", other, diff)
	}
	registerProviders(t, elsewhere) // an event on the other namespace's backend
	poke(t, h)
	time.Sleep(2 * time.Second)
	if name, _ := currentSSO(t, h); name != first {
		t.Errorf("status.configMap moved from %s to %s: a backend of namespace %s was read", first, name, other)
	}
}

// HorizonsNaming maps a backend event to the Horizons of the backend's namespace that
// name it, and never to a Horizon of another namespace that names a backend of the
// same name.
func TestHorizonsNaming(t *testing.T) {
	scheme, err := testenv.NewSchemeWith(controller.AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	naming := func(ns, name string, backends ...string) client.Object { return ssoHorizon(ns, name, backends...) }
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(naming("a", "h1", "corp"), naming("a", "h0", "x", "corp"), naming("a", "h2", "x"),
		newHorizon("a", "plain"), naming("b", "h3", "corp")).Build()
	got := controller.HorizonsNaming(c)(context.Background(), federatedBackend("a", "corp"))
	var keys []string
	for _, r := range got {
		keys = append(keys, r.String())
	}
	if want := []string{"a/h0", "a/h1"}; !slices.Equal(keys, want) {
		t.Errorf("requests %v, want %v", keys, want)
	}
	if got := controller.HorizonsNaming(c)(context.Background(), federatedBackend("c", "corp")); len(got) != 0 {
		t.Errorf("a backend of a namespace without Horizons enqueues %v", got)
	}
}

// The samples meet: the Horizon of horizon_v1alpha1_horizon_websso.yaml names the
// Keystone example's federation sample (KeystoneIdentityBackend corp-sso, OpenID
// Connect provider corp-oidc); once the backend reports the provider registered, the
// Horizon is Ready and its login page offers the provider after the password login.
func TestWebSSOSamples(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	b := testenv.ReadSample(t, "../../keystone/config/samples/keystone_v1alpha1_keystoneidentitybackend_federation.yaml",
		&unstructured.Unstructured{})
	b.SetNamespace(ns)
	if err := env.Client.Create(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	registerProviders(t, b)
	h := testenv.ReadSample(t, "../config/samples/horizon_v1alpha1_horizon_websso.yaml", &v1alpha1.Horizon{})
	h.Namespace = ns
	storeReady(t)
	createHorizon(t, env, h)
	w := world.New(env.Client, world.WithSecret(h.Spec.SecretKey.RemoteKey, map[string][]byte{"secret_key": []byte("sample-key")}))
	testenv.ExpectConditionWhile(t, env.Client, h, reconcile.ConditionReady, metav1.ConditionTrue, w.Hook(h))
	name, got := currentSSO(t, h)
	want := renderedSSO{
		Choices: [][2]string{{"credentials", "Keystone credentials"}, {"corp-oidc_openid", "Corporate OpenID Connect provider"}},
		Mapping: map[string][2]string{"corp-oidc_openid": {"corp-oidc", "openid"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("single sign-on of ConfigMap %s (-want +got):\n%s", name, diff)
	}
}
