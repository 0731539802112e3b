package secrets_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// clusterName returns a ClusterSecretStore name no other test uses: cluster-scoped
// objects are shared by all tests of the package.
func clusterName(prefix string) string {
	return prefix + "-" + strconv.FormatInt(clusterSeq.Add(1), 10)
}

var clusterSeq atomic.Int64

// openBaoProvider is the spec.provider of the stores the tests create: ESO's vault
// provider pointed at an OpenBao service.
func openBaoProvider() *apiextensionsv1.JSON {
	return simulate.OpenBaoProvider()
}

// newOwner creates the object that stands in for the operator's CR.
func newOwner(t testing.TB, ns string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

// createClusterStore creates the ClusterSecretStore name and deletes it at cleanup.
// With ready set it is marked Ready, otherwise it has no status yet.
func createClusterStore(t testing.TB, name string, ready bool) {
	t.Helper()
	ctx := context.Background()
	store := &esov1.ClusterSecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       esov1.SecretStoreSpec{Provider: openBaoProvider()},
	}
	if err := env.Client.Create(ctx, store); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), store) })
	if ready {
		if _, err := simulate.MarkClusterSecretStoreReady(ctx, env.Client, name); err != nil {
			t.Fatal(err)
		}
	}
}

// createStore creates the SecretStore name in ns; with ready set it is marked Ready.
func createStore(t testing.TB, ns, name string, ready bool) {
	t.Helper()
	ctx := context.Background()
	store := &esov1.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       esov1.SecretStoreSpec{Provider: openBaoProvider()},
	}
	if err := env.Client.Create(ctx, store); err != nil {
		t.Fatal(err)
	}
	if ready {
		if _, err := simulate.MarkSecretStoreReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: name}); err != nil {
			t.Fatal(err)
		}
	}
}

// desiredExternalSecret builds the ExternalSecret that syncs an admin password from
// the store ref selects into the Secret target.
func desiredExternalSecret(ns, name, target string, ref commonv1.SecretStoreRefSpec) *esov1.ExternalSecret {
	return &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: secrets.ESOSecretStoreRef(ref),
			Target:         esov1.ExternalSecretTarget{Name: target},
			Data: []esov1.ExternalSecretData{{
				SecretKey: "password",
				RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "identity/admin", Property: "password"},
			}},
		},
	}
}

// desiredPushSecret builds the PushSecret that pushes the password of Secret source
// to the store ref selects. It leaves updatePolicy and refreshInterval to the server.
func desiredPushSecret(ns, source string, ref commonv1.SecretStoreRefSpec) *esov1alpha1.PushSecret {
	return &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: source, Namespace: ns},
		Spec: esov1alpha1.PushSecretSpec{
			SecretStoreRefs: secrets.PushSecretStoreRefs(ref),
			Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: source}},
			Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{
				SecretKey: "password",
				RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: "identity/admin", Property: "password"},
			}}},
		},
	}
}

// fakeBase returns an empty fake client for the interceptor tests, which inject API
// errors; everything else runs on envtest.
func fakeBase(t testing.TB) client.WithWatch {
	t.Helper()
	return fake.NewClientBuilder().WithScheme(env.Scheme).Build()
}

// secretObject returns a Secret with only its key set, for Delete.
func secretObject(key client.ObjectKey) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
}

// createOwnedSecret creates the Secret name in owner's namespace with owner as its
// controller, as EnsureGeneratedSecret would have.
func createOwnedSecret(t testing.TB, owner client.Object, name string, data map[string][]byte) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: owner.GetNamespace()}, Data: data}
	if err := controllerutil.SetControllerReference(owner, s, env.Scheme); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}
