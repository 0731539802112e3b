package secrets_test

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	gocmp "github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// The fan-out tests use ConfigMaps as the CR kind: the store reference is read from
// two annotations, absent when the CR omits spec.secretStoreRef.
const (
	annStoreKind = "test.c5c3.io/store-kind"
	annStoreName = "test.c5c3.io/store-name"
)

func configMapStoreRef(cm *corev1.ConfigMap) *commonv1.SecretStoreRefSpec {
	kind, hasKind := cm.Annotations[annStoreKind]
	name, hasName := cm.Annotations[annStoreName]
	if !hasKind && !hasName {
		return nil
	}
	return &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreRefKind(kind), Name: name}
}

var configMapFanOut = secrets.StoreRefFanOut(
	func() client.ObjectList { return &corev1.ConfigMapList{} },
	configMapStoreRef,
)

// createCR creates a stand-in CR selecting ref (nil: no spec.secretStoreRef).
func createCR(t *testing.T, ns, name string, ref *commonv1.SecretStoreRefSpec) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"fanout": "cr"}}}
	if ref != nil {
		cm.Annotations = map[string]string{annStoreKind: string(ref.Kind), annStoreName: ref.Name}
	}
	if err := env.Client.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

func TestStoreRefFanOut(t *testing.T) {
	ctx := context.Background()
	nsA, nsB := env.Namespace(t), env.Namespace(t)
	euStore := clusterName("vault-eu")
	cluster := func(name string) *commonv1.SecretStoreRefSpec {
		return &commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: name}
	}
	local := func(name string) *commonv1.SecretStoreRefSpec {
		return &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: name}
	}
	createCR(t, nsA, "default-a", nil)
	createCR(t, nsB, "default-b", nil)
	createCR(t, nsA, "explicit-shared", cluster("openbao-cluster-store"))
	createCR(t, nsA, "empty-kind-shared", &commonv1.SecretStoreRefSpec{Name: "openbao-cluster-store"})
	createCR(t, nsA, "eu-a", cluster(euStore))
	createCR(t, nsB, "eu-b", cluster(euStore))
	// An empty kind resolves to the shared store whatever the name (EffectiveStoreRef).
	createCR(t, nsB, "empty-kind-named-eu", &commonv1.SecretStoreRefSpec{Name: euStore})
	createCR(t, nsA, "tenant-a", local("tenant-bao"))
	createCR(t, nsB, "tenant-b", local("tenant-bao"))
	createCR(t, nsA, "other-local", local("other"))
	// A CR naming a SecretStore that happens to share the cluster store's name.
	createCR(t, nsA, "local-named-like-cluster", local(euStore))

	req := func(ns, name string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
	}
	// the mapper sorts by namespace, then name; the namespaces are random
	sorted := func(reqs ...reconcile.Request) []reconcile.Request {
		slices.SortFunc(reqs, func(a, b reconcile.Request) int {
			return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
		})
		return reqs
	}
	cases := map[string]struct {
		kind  commonv1.SecretStoreRefKind
		store client.Object
		want  []reconcile.Request
	}{
		"shared ClusterSecretStore: every CR that omits the ref or names it": {
			kind:  commonv1.ClusterSecretStoreKind,
			store: &esov1.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: "openbao-cluster-store"}},
			want: sorted(req(nsA, "default-a"), req(nsB, "default-b"), req(nsA, "explicit-shared"),
				req(nsA, "empty-kind-shared"), req(nsB, "empty-kind-named-eu")),
		},
		"another ClusterSecretStore: only its CRs, across namespaces": {
			kind:  commonv1.ClusterSecretStoreKind,
			store: &esov1.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: euStore}},
			want:  sorted(req(nsA, "eu-a"), req(nsB, "eu-b")),
		},
		"SecretStore: only the CRs of its namespace": {
			kind:  commonv1.SecretStoreKind,
			store: &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Name: "tenant-bao", Namespace: nsB}},
			want:  []reconcile.Request{req(nsB, "tenant-b")},
		},
		"SecretStore sharing a ClusterSecretStore's name: only the SecretStore's CRs": {
			kind:  commonv1.SecretStoreKind,
			store: &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Name: euStore, Namespace: nsA}},
			want:  []reconcile.Request{req(nsA, "local-named-like-cluster")},
		},
		"store nobody selects": {
			kind:  commonv1.ClusterSecretStoreKind,
			store: &esov1.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: clusterName("unused")}},
		},
		"SecretStore in a namespace without CRs": {
			kind:  commonv1.SecretStoreKind,
			store: &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Name: "tenant-bao", Namespace: "kube-system"}},
		},
		"nil object": {kind: commonv1.ClusterSecretStoreKind, store: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := configMapFanOut(env.Client, tc.kind)(ctx, tc.store)
			got = onlyNamespaces(got, nsA, nsB)
			if diff := gocmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// onlyNamespaces drops requests for ConfigMaps outside this test's namespaces (a
// cluster-wide List also sees kube-system's and other tests' ConfigMaps).
func onlyNamespaces(reqs []reconcile.Request, namespaces ...string) []reconcile.Request {
	var out []reconcile.Request
	for _, r := range reqs {
		for _, ns := range namespaces {
			if r.Namespace == ns {
				out = append(out, r)
			}
		}
	}
	return out
}

func TestStoreRefFanOutListsOnlyTheStoreNamespace(t *testing.T) {
	var listed []string
	spy := interceptor.NewClient(fakeBase(t), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lo := &client.ListOptions{}
			lo.ApplyOptions(opts)
			listed = append(listed, "ns="+lo.Namespace)
			return c.List(ctx, list, opts...)
		},
	})
	configMapFanOut(spy, commonv1.SecretStoreKind)(context.Background(),
		&esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Name: "tenant-bao", Namespace: "tenant"}})
	configMapFanOut(spy, commonv1.ClusterSecretStoreKind)(context.Background(),
		&esov1.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: "vault-eu"}})
	if diff := gocmp.Diff([]string{"ns=tenant", "ns="}, listed); diff != "" {
		t.Errorf("List calls (-want +got):\n%s", diff)
	}
}

func TestStoreRefFanOutFailuresEnqueueNothingAndLog(t *testing.T) {
	var lines []string
	ctx := log.IntoContext(context.Background(), funcr.New(func(prefix, args string) {
		lines = append(lines, prefix+" "+args)
	}, funcr.Options{}))
	failing := interceptor.NewClient(fakeBase(t), interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return errors.New("informer not synced")
		},
	})
	store := &esov1.ClusterSecretStore{ObjectMeta: metav1.ObjectMeta{Name: "vault-eu"}}
	if got := configMapFanOut(failing, commonv1.ClusterSecretStoreKind)(ctx, store); got != nil {
		t.Errorf("list failure mapped %v, want nothing", got)
	}
	if got := configMapFanOut(fakeBase(t), "VaultStore")(ctx, store); got != nil {
		t.Errorf("unknown kind mapped %v, want nothing", got)
	}
	// A list whose items are not the accessor's type: skipped and logged.
	wrongType := secrets.StoreRefFanOut(func() client.ObjectList { return &corev1.SecretList{} }, configMapStoreRef)
	base := fakeBase(t)
	if err := base.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "tenant"}}); err != nil {
		t.Fatal(err)
	}
	if got := wrongType(base, commonv1.ClusterSecretStoreKind)(ctx, store); got != nil {
		t.Errorf("mismatched item type mapped %v, want nothing", got)
	}
	joined := strings.Join(lines, "\n")
	for _, want := range []string{"informer not synced", "unknown secret store kind", "*v1.Secret", `"storeName"="vault-eu"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("log does not mention %q:\n%s", want, joined)
		}
	}
}

func TestStoreRefFanOutRejectsNilFunctions(t *testing.T) {
	for name, build := range map[string]func(){
		"nil list": func() { secrets.StoreRefFanOut[*corev1.ConfigMap](nil, configMapStoreRef) },
		"nil accessor": func() {
			secrets.StoreRefFanOut[*corev1.ConfigMap](func() client.ObjectList { return &corev1.ConfigMapList{} }, nil)
		},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "StoreRefFanOut") {
					t.Errorf("recovered %v, want a panic naming StoreRefFanOut", r)
				}
			}()
			build()
		})
	}
}

// The mapper is what a controller-runtime watch takes: handler.EnqueueRequestsFromMapFunc.
var _ handler.EventHandler = handler.EnqueueRequestsFromMapFunc(configMapFanOut(nil, commonv1.SecretStoreKind))
