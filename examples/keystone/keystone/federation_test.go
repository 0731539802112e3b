package keystone_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/satellite"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// federationClientSecret is the OpenID Connect client secret of the tests' provider:
// it is in the federation Secret and must reach no condition or event of the Keystone.
const federationClientSecret = "oidc-client-secret-9f3a"

// mountsByPath indexes the keystone container's mounts of d by their path.
func mountsByPath(d *appsv1.Deployment) map[string]corev1.VolumeMount {
	out := map[string]corev1.VolumeMount{}
	for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
		out[m.MountPath] = m
	}
	return out
}

// getDeployment reads the API Deployment of k.
func getDeployment(t *testing.T, k *v1alpha1.Keystone) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDeploymentMountsFederation: with a federation Secret in the projection the API
// pods mount it whole at identitybackend.FederationDir, its keystone.conf fragment
// under FederationConfigDir and each web server fragment under WebServerConfigDir
// with subPath; the SAML documents stay in FederationDir, where the fragments name
// them. The Deployment step run again with the same projection leaves the Deployment
// at its generation; a projection without federation mounts none of it.
func TestDeploymentMountsFederation(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(env.Client)
	if _, err := runConfig(t, rec, target, k, ""); err != nil {
		t.Fatal(err)
	}
	s := &identitybackend.Projection{
		Secret: "keystone-domains-abc", Files: []string{"keystone.corp.conf"},
		FederationSecret: "keystone-federation-abc",
		FederationFiles: []string{"httpd-openid-corp-oidc.conf", "httpd-saml2-corp-saml.conf", identitybackend.FederationConfigFile,
			"saml2-corp-saml-idp-metadata.xml", "saml2-corp-saml-sp.crt", "saml2-corp-saml-sp.key"},
	}
	if _, err := keystone.RunStepWith(ctx, rec, "Deployment", target, k, s); err != nil {
		t.Fatal(err)
	}
	d := getDeployment(t, k)
	mounts := mountsByPath(d)
	for path, subPath := range map[string]string{
		identitybackend.FederationDir: "",
		keystone.FederationConfigDir + "/" + identitybackend.FederationConfigFile: identitybackend.FederationConfigFile,
		keystone.WebServerConfigDir + "/httpd-openid-corp-oidc.conf":              "httpd-openid-corp-oidc.conf",
		keystone.WebServerConfigDir + "/httpd-saml2-corp-saml.conf":               "httpd-saml2-corp-saml.conf",
	} {
		m, ok := mounts[path]
		if !ok {
			t.Errorf("nothing mounted at %s; mounts %v", path, mounts)
			continue
		}
		if m.Name != identitybackend.FederationVolumeName || m.SubPath != subPath || !m.ReadOnly {
			t.Errorf("%s: mount %+v, want volume %s, subPath %q, read-only", path, m, identitybackend.FederationVolumeName, subPath)
		}
	}
	for path, m := range mounts {
		if m.Name == identitybackend.FederationVolumeName && strings.HasPrefix(m.SubPath, "saml2-") {
			t.Errorf("%s mounts the SAML document %s on its own: the fragments read it from %s", path, m.SubPath, identitybackend.FederationDir)
		}
	}
	if got := satellite.SecretNameForVolume(&d.Spec.Template.Spec, identitybackend.FederationVolumeName); got != s.FederationSecret {
		t.Errorf("the federation volume mounts %q, want %s", got, s.FederationSecret)
	}

	// The same projection again: nothing to roll.
	if _, err := keystone.RunStepWith(ctx, rec, "Deployment", target, k, s); err != nil {
		t.Fatal(err)
	}
	if again := getDeployment(t, k); again.Generation != d.Generation {
		t.Errorf("the same projection moved the Deployment from generation %d to %d", d.Generation, again.Generation)
	}

	// No federation: nothing of it is mounted any more.
	s.FederationSecret, s.FederationFiles = "", nil
	if _, err := keystone.RunStepWith(ctx, rec, "Deployment", target, k, s); err != nil {
		t.Fatal(err)
	}
	d = getDeployment(t, k)
	for path, m := range mountsByPath(d) {
		if m.Name == identitybackend.FederationVolumeName {
			t.Errorf("without a federation Secret %s is still mounted", path)
		}
	}
	if got := satellite.SecretNameForVolume(&d.Spec.Template.Spec, identitybackend.FederationVolumeName); got != "" {
		t.Errorf("without a federation Secret the pods mount %s", got)
	}
}

// newOIDCBackend creates a KeystoneIdentityBackend of k for domain corp with one OpenID
// Connect provider corp-oidc whose client secret is in Secret corp-client, that
// Secret, and marks the backend's DomainReady True for its generation (what its
// controller does once the domain exists), so the IdentityBackends row projects it.
func newOIDCBackend(t *testing.T, k *v1alpha1.Keystone) *v1alpha1.KeystoneIdentityBackend {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: "corp-client"},
		Data: map[string][]byte{"secret": []byte(federationClientSecret)}}); err != nil {
		t.Fatal(err)
	}
	b := &v1alpha1.KeystoneIdentityBackend{
		ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: "corp"},
		Spec: v1alpha1.KeystoneIdentityBackendSpec{
			KeystoneRef: v1alpha1.LocalObjectReference{Name: k.Name}, Domain: "corp", Driver: "sql",
			Federation: &v1alpha1.FederationSpec{
				TrustedDashboards: []string{"https://dashboard.example.com/auth/websso/"},
				IdentityProviders: []v1alpha1.IdentityProviderSpec{{
					ID: "corp-oidc", Protocol: v1alpha1.ProtocolOpenID, RemoteIDs: []string{"https://sso.corp.example"},
					OpenID: &v1alpha1.OpenIDSpec{Issuer: "https://sso.corp.example", ClientID: "keystone",
						ClientSecretRef: v1alpha1.SecretKeyRef{Name: "corp-client", Key: "secret"}},
					Mapping: []v1alpha1.MappingRule{{
						Local:  []v1alpha1.MappingLocal{{User: &v1alpha1.MappedUser{Name: "{0}"}}},
						Remote: []v1alpha1.MappingRemote{{Type: "OIDC-preferred_username"}},
					}},
				}},
			},
		},
	}
	if err := env.Client.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: identitybackend.ConditionDomainReady,
		Status: metav1.ConditionTrue, Reason: identitybackend.ReasonDomainCreated, Message: "domain corp exists", ObservedGeneration: b.Generation})
	if err := env.Client.Status().Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// projectBackends runs the IdentityBackends row for k writing to target, as the
// Keystone's pass does, and returns the projection it handed on.
func projectBackends(t *testing.T, target *multicluster.Target, k *v1alpha1.Keystone) *identitybackend.Projection {
	t.Helper()
	s := &identitybackend.Projection{}
	ctx := multicluster.WithTarget(reconcile.WithState(context.Background(), s), target)
	if _, err := identitybackend.NewStep(env.Client).Reconcile(ctx, k); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(k.Status.Conditions, identitybackend.ConditionIdentityBackendsReady)
	if c == nil || strings.Contains(c.Message, federationClientSecret) {
		t.Fatalf("IdentityBackendsReady = %+v", c)
	}
	if s.FederationSecret == "" {
		t.Fatalf("no federation Secret projected: %s", c.Message)
	}
	return s
}

// setClientSecret writes value as the provider's client secret.
func setClientSecret(t *testing.T, ns, value string) {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "corp-client"}, s); err != nil {
		t.Fatal(err)
	}
	s.Data["secret"] = []byte(value)
	if err := env.Client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// waitReplicaSetMounting waits until the Deployment controller has made a ReplicaSet
// of k whose pod template mounts secret on the federation volume.
func waitReplicaSetMounting(t *testing.T, k *v1alpha1.Keystone, secret string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true,
		func(ctx context.Context) (bool, error) { return replicaSetMounts(ctx, k, secret) })
	if err != nil {
		t.Fatalf("no ReplicaSet of Keystone %s mounts %s: %v", k.Name, secret, err)
	}
}

// replicaSetMounts reports whether a ReplicaSet of k's namespace mounts secret on the
// federation volume.
func replicaSetMounts(ctx context.Context, k *v1alpha1.Keystone, secret string) (bool, error) {
	var list appsv1.ReplicaSetList
	if err := env.Client.List(ctx, &list, client.InNamespace(k.Namespace)); err != nil {
		return false, err
	}
	for _, rs := range list.Items {
		if satellite.SecretNameForVolume(&rs.Spec.Template.Spec, identitybackend.FederationVolumeName) == secret {
			return true, nil
		}
	}
	return false, nil
}

// TestFederationRollsAndPruneSparesMountedSecrets runs the IdentityBackends row and
// the Deployment row with the real Deployment and ReplicaSet controllers: the pods
// roll when the federation documents change (a new client secret names a new
// Secret) and not when the row runs again unchanged; the prune of older federation
// Secrets keeps the one the Deployment mounts and, after the Deployment rolled on,
// the one its old ReplicaSet still mounts, while one nothing mounts beyond
// RetainFederationSecrets is deleted. No client secret reaches the Keystone's
// conditions or events.
func TestFederationRollsAndPruneSparesMountedSecrets(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(env.Client)
	if _, err := runConfig(t, rec, target, k, ""); err != nil {
		t.Fatal(err)
	}
	newOIDCBackend(t, k)

	first := projectBackends(t, target, k)
	if _, err := keystone.RunStepWith(ctx, rec, "Deployment", target, k, first); err != nil {
		t.Fatal(err)
	}
	d := getDeployment(t, k)
	if got := satellite.SecretNameForVolume(&d.Spec.Template.Spec, identitybackend.FederationVolumeName); got != first.FederationSecret {
		t.Fatalf("the Deployment mounts %q, want %s", got, first.FederationSecret)
	}
	if m, ok := mountsByPath(d)[keystone.WebServerConfigDir+"/httpd-openid-corp-oidc.conf"]; !ok || m.SubPath != "httpd-openid-corp-oidc.conf" {
		t.Fatalf("the provider's web server fragment is not mounted: %v", mountsByPath(d))
	}
	waitReplicaSetMounting(t, k, first.FederationSecret)

	// The row again, nothing changed: the same Secret, the Deployment keeps its generation.
	again := projectBackends(t, target, k)
	if again.FederationSecret != first.FederationSecret {
		t.Fatalf("unchanged documents named a new Secret: %s, was %s", again.FederationSecret, first.FederationSecret)
	}
	if _, err := keystone.RunStepWith(ctx, rec, "Deployment", target, k, again); err != nil {
		t.Fatal(err)
	}
	if g := getDeployment(t, k).Generation; g != d.Generation {
		t.Fatalf("an unchanged projection rolled the Deployment: generation %d, was %d", g, d.Generation)
	}

	// New client secrets, the pods still on the first Secret: each pass prunes.
	made := []string{first.FederationSecret}
	var last *identitybackend.Projection
	for i := range identitybackend.RetainFederationSecrets + 1 {
		time.Sleep(1100 * time.Millisecond) // distinct creation timestamps, which order the prune
		setClientSecret(t, ns, fmt.Sprintf("%s-%d", federationClientSecret, i))
		last = projectBackends(t, target, k)
		if slices.Contains(made, last.FederationSecret) {
			t.Fatalf("client secret %d named %s again (made %v)", i, last.FederationSecret, made)
		}
		made = append(made, last.FederationSecret)
	}
	// made: the mounted first, then Retain+1 newer; the current and Retain newest stay,
	// the first stays because the Deployment mounts it.
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: first.FederationSecret}, &corev1.Secret{}); err != nil {
		t.Fatalf("the federation Secret the Deployment mounts: %v", err)
	}

	// The Deployment rolls to the newest Secret; its old ReplicaSet still mounts the first.
	if _, err := keystone.RunStepWith(ctx, rec, "Deployment", target, k, last); err != nil {
		t.Fatal(err)
	}
	if g := getDeployment(t, k).Generation; g == d.Generation {
		t.Fatalf("new federation documents did not roll the Deployment (generation %d)", g)
	}
	waitReplicaSetMounting(t, k, last.FederationSecret)
	time.Sleep(1100 * time.Millisecond)
	setClientSecret(t, ns, federationClientSecret+"-final")
	current := projectBackends(t, target, k)
	made = append(made, current.FederationSecret)

	if ok, err := replicaSetMounts(ctx, k, first.FederationSecret); err != nil || !ok {
		t.Fatalf("the old ReplicaSet no longer mounts %s (%v): the check below would prove nothing", first.FederationSecret, err)
	}
	// Candidates besides the current: the Retain newest stay; of the older ones the
	// first (its ReplicaSet mounts it) stays and the second (nothing mounts it) goes.
	for i, name := range made {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{})
		kept := i == 0 || i >= len(made)-1-identitybackend.RetainFederationSecrets
		switch {
		case kept && err != nil:
			t.Errorf("federation Secret %d %s: %v, want it kept", i, name, err)
		case !kept && !apierrors.IsNotFound(err):
			t.Errorf("federation Secret %d %s: %v, want it pruned", i, name, err)
		}
	}

	var events corev1.EventList
	if err := env.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Message, federationClientSecret) {
			t.Fatalf("event %s carries the client secret", e.Name)
		}
	}
	for _, c := range k.Status.Conditions { // as the steps set them on this pass
		if strings.Contains(c.Message, federationClientSecret) {
			t.Fatalf("condition %s carries the client secret", c.Type)
		}
	}
}

// TestOpenIDPassphraseCollectedWithKeystone: the IdentityBackends row generates the
// session passphrase of the Keystone's OpenID Connect provider into a Secret the
// Keystone controls, keeps it over a new client secret, and the garbage collector
// deletes it with the Keystone.
func TestOpenIDPassphraseCollectedWithKeystone(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(env.Client)
	newOIDCBackend(t, k)
	projectBackends(t, target, k)
	key := client.ObjectKey{Namespace: ns, Name: names.OpenIDPassphraseSecretName(k)}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	pass := string(s.Data["corp-oidc"])
	if len(pass) != 32 || !metav1.IsControlledBy(s, k) {
		t.Fatalf("Secret %s: %d characters under corp-oidc, owners %v; want 32, controlled by Keystone %s", key, len(pass), s.OwnerReferences, k.Name)
	}
	setClientSecret(t, ns, federationClientSecret+"-rotated")
	projectBackends(t, target, k)
	if err := env.Client.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data["corp-oidc"]) != pass {
		t.Fatal("a new client secret changed the session passphrase")
	}

	if err := env.Client.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "the passphrase Secret collected with its Keystone", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, key, &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}
