package v1_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/secrets/eso/internal/esotest"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// TestFullObjectsSetEveryField keeps the fixtures honest: the strict round-trip tests
// below prove a JSON name only if the fixture sets that field.
func TestFullObjectsSetEveryField(t *testing.T) {
	tests := map[string]any{
		"ExternalSecret spec":   fullExternalSecret("ns", "es").Spec,
		"ExternalSecret status": fullExternalSecretStatus("target"),
		"SecretStore spec":      esov1.SecretStoreSpec{Provider: fakeProvider()},
		"SecretStore status":    fullStoreStatus(),
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			if zero := esotest.ZeroFields(reflect.ValueOf(v), ""); len(zero) > 0 {
				t.Errorf("fixture leaves fields unset: %v", zero)
			}
		})
	}
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := esov1.AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	tests := map[string]struct {
		obj        runtime.Object
		want       schema.GroupVersionKind
		namespaced bool
	}{
		"ExternalSecret":         {&esov1.ExternalSecret{}, esov1.ExtSecretGroupVersionKind, true},
		"ExternalSecretList":     {&esov1.ExternalSecretList{}, esov1.SchemeGroupVersion.WithKind("ExternalSecretList"), true},
		"SecretStore":            {&esov1.SecretStore{}, esov1.SecretStoreGroupVersionKind, true},
		"SecretStoreList":        {&esov1.SecretStoreList{}, esov1.SchemeGroupVersion.WithKind("SecretStoreList"), true},
		"ClusterSecretStore":     {&esov1.ClusterSecretStore{}, esov1.ClusterSecretStoreGroupVersionKind, false},
		"ClusterSecretStoreList": {&esov1.ClusterSecretStoreList{}, esov1.SchemeGroupVersion.WithKind("ClusterSecretStoreList"), false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			gvks, _, err := s.ObjectKinds(tc.obj)
			if err != nil {
				t.Fatalf("ObjectKinds: %v", err)
			}
			if diff := cmp.Diff([]schema.GroupVersionKind{tc.want}, gvks); diff != "" {
				t.Errorf("GVK (-want +got):\n%s", diff)
			}
			// The API server that serves ESO's CRDs agrees on the resource and scope.
			namespaced, err := env.Client.IsObjectNamespaced(tc.obj)
			if err != nil {
				t.Fatalf("IsObjectNamespaced: %v", err)
			}
			if namespaced != tc.namespaced {
				t.Errorf("namespaced = %v, want %v", namespaced, tc.namespaced)
			}
		})
	}
	if got := esov1.SchemeGroupVersion.String(); got != "external-secrets.io/v1" {
		t.Errorf("SchemeGroupVersion = %q, want external-secrets.io/v1", got)
	}
}

// TestExternalSecretRoundTrip writes every modelled spec and status field of an
// ExternalSecret to ESO's real CRD with strict field validation and reads them back.
func TestExternalSecretRoundTrip(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	es := fullExternalSecret(ns, "identity-db")
	wantSpec := *es.Spec.DeepCopy()
	if err := strict().Create(ctx, es); err != nil {
		t.Fatalf("create: %v", err)
	}

	got := &esov1.ExternalSecret{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if diff := cmp.Diff(wantSpec, got.Spec); diff != "" {
		t.Errorf("spec read back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(esov1.ExternalSecretStatus{}, got.Status, timeEqual); diff != "" {
		t.Errorf("status of a new ExternalSecret (-want +got):\n%s", diff)
	}

	wantStatus := fullExternalSecretStatus(es.Spec.Target.Name)
	got.Status = *wantStatus.DeepCopy()
	if err := strict().Status().Update(ctx, got); err != nil {
		t.Fatalf("update status: %v", err)
	}
	read := &esov1.ExternalSecret{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), read); err != nil {
		t.Fatalf("get: %v", err)
	}
	if diff := cmp.Diff(wantStatus, read.Status, timeEqual); diff != "" {
		t.Errorf("status read back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantSpec, read.Spec); diff != "" {
		t.Errorf("spec changed by the status write (-want +got):\n%s", diff)
	}
}

// TestExternalSecretServerDefaults proves that the fields the mirror leaves empty map
// onto the CRD fields the server defaults.
func TestExternalSecretServerDefaults(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	es := &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "minimal", Namespace: ns},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: esov1.SecretStoreRef{Name: "openbao-cluster-store", Kind: esov1.ClusterSecretStoreKind},
			Data: []esov1.ExternalSecretData{{
				SecretKey: "password", RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "kv/minimal"},
			}},
		},
	}
	if err := strict().Create(ctx, es); err != nil {
		t.Fatalf("create: %v", err)
	}
	want := esov1.ExternalSecretSpec{
		SecretStoreRef: es.Spec.SecretStoreRef,
		Target: esov1.ExternalSecretTarget{
			CreationPolicy: esov1.CreatePolicyOwner,
			DeletionPolicy: esov1.DeletionPolicyRetain,
		},
		RefreshInterval: &metav1.Duration{Duration: time.Hour},
		Data:            es.Spec.Data,
	}
	if diff := cmp.Diff(want, es.Spec); diff != "" {
		t.Errorf("spec with server defaults (-want +got):\n%s", diff)
	}
}

// store abstracts SecretStore and ClusterSecretStore for the table below.
type store struct {
	new       func(ns string) client.Object
	setStatus func(obj client.Object, st esov1.SecretStoreStatus)
	spec      func(obj client.Object) esov1.SecretStoreSpec
	status    func(obj client.Object) esov1.SecretStoreStatus
}

var stores = map[string]store{
	"SecretStore": {
		new: func(ns string) client.Object {
			return &esov1.SecretStore{
				ObjectMeta: metav1.ObjectMeta{Name: "openbao", Namespace: ns},
				Spec:       esov1.SecretStoreSpec{Provider: fakeProvider()},
			}
		},
		setStatus: func(obj client.Object, st esov1.SecretStoreStatus) { obj.(*esov1.SecretStore).Status = st },
		spec:      func(obj client.Object) esov1.SecretStoreSpec { return obj.(*esov1.SecretStore).Spec },
		status:    func(obj client.Object) esov1.SecretStoreStatus { return obj.(*esov1.SecretStore).Status },
	},
	"ClusterSecretStore": {
		new: func(ns string) client.Object {
			// Cluster-scoped: the test namespace's name makes the name unique.
			return &esov1.ClusterSecretStore{
				ObjectMeta: metav1.ObjectMeta{Name: "openbao-" + ns},
				Spec:       esov1.SecretStoreSpec{Provider: fakeProvider()},
			}
		},
		setStatus: func(obj client.Object, st esov1.SecretStoreStatus) { obj.(*esov1.ClusterSecretStore).Status = st },
		spec:      func(obj client.Object) esov1.SecretStoreSpec { return obj.(*esov1.ClusterSecretStore).Spec },
		status:    func(obj client.Object) esov1.SecretStoreStatus { return obj.(*esov1.ClusterSecretStore).Status },
	},
}

// TestStoreRoundTrip writes a store with an opaque provider block and its Ready
// condition and capabilities (through the status subresource) and reads them back.
func TestStoreRoundTrip(t *testing.T) {
	for name, kind := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			obj := kind.new(ns)
			if err := strict().Create(ctx, obj); err != nil {
				t.Fatalf("create: %v", err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })

			got := kind.new(ns)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatalf("get: %v", err)
			}
			if diff := jsonEqual(t, fakeProvider().Raw, kind.spec(got).Provider.Raw); diff != "" {
				t.Errorf("provider read back (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(esov1.SecretStoreStatus{}, kind.status(got)); diff != "" {
				t.Errorf("status of a new store (-want +got):\n%s", diff)
			}

			want := fullStoreStatus()
			kind.setStatus(got, *want.DeepCopy())
			if err := strict().Status().Update(ctx, got); err != nil {
				t.Fatalf("update status: %v", err)
			}
			read := kind.new(ns)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), read); err != nil {
				t.Fatalf("get: %v", err)
			}
			if diff := cmp.Diff(want, kind.status(read), timeEqual); diff != "" {
				t.Errorf("status read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoreRejectsInvalidProvider shows the opaque provider is still validated by
// ESO's CRD schema on the server: an empty block is refused.
func TestStoreRejectsInvalidProvider(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	ss := &esov1.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: ns},
		Spec:       esov1.SecretStoreSpec{Provider: nil},
	}
	if err := strict().Create(ctx, ss); err == nil {
		t.Fatal("create of a SecretStore without provider succeeded, want a validation error")
	}
}

func TestList(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	for _, name := range []string{"a", "b"} {
		if err := env.Client.Create(ctx, fullExternalSecret(ns, name)); err != nil {
			t.Fatalf("create ExternalSecret: %v", err)
		}
		ss := stores["SecretStore"].new(ns)
		ss.SetName(name)
		if err := env.Client.Create(ctx, ss); err != nil {
			t.Fatalf("create SecretStore: %v", err)
		}
	}
	css := stores["ClusterSecretStore"].new(ns)
	if err := env.Client.Create(ctx, css); err != nil {
		t.Fatalf("create ClusterSecretStore: %v", err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), css) })

	var esList esov1.ExternalSecretList
	if err := env.Client.List(ctx, &esList, client.InNamespace(ns)); err != nil {
		t.Fatalf("list ExternalSecrets: %v", err)
	}
	var ssList esov1.SecretStoreList
	if err := env.Client.List(ctx, &ssList, client.InNamespace(ns)); err != nil {
		t.Fatalf("list SecretStores: %v", err)
	}
	var cssList esov1.ClusterSecretStoreList
	if err := env.Client.List(ctx, &cssList); err != nil {
		t.Fatalf("list ClusterSecretStores: %v", err)
	}
	var esNames, ssNames []string
	for _, es := range esList.Items {
		esNames = append(esNames, es.Name)
		if es.Spec.Target.Name != es.Name+"-secret" {
			t.Errorf("listed ExternalSecret %s has target %q", es.Name, es.Spec.Target.Name)
		}
	}
	for _, ss := range ssList.Items {
		ssNames = append(ssNames, ss.Name)
	}
	if diff := cmp.Diff([]string{"a", "b"}, esNames); diff != "" {
		t.Errorf("ExternalSecrets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ssNames); diff != "" {
		t.Errorf("SecretStores (-want +got):\n%s", diff)
	}
	found := false
	for _, item := range cssList.Items {
		found = found || item.Name == css.GetName()
	}
	if !found {
		t.Errorf("ClusterSecretStore %s not listed", css.GetName())
	}
}

func TestDeepCopy(t *testing.T) {
	orig := fullExternalSecret("ns", "es")
	orig.Status = fullExternalSecretStatus("target")
	cp := orig.DeepCopy()
	if diff := cmp.Diff(orig, cp, timeEqual); diff != "" {
		t.Fatalf("copy differs (-orig +copy):\n%s", diff)
	}
	cp.Spec.Target.Template.Data["url"] = "changed"
	cp.Spec.Target.Template.Metadata.Labels["app"] = "changed"
	cp.Spec.RefreshInterval.Duration = time.Second
	cp.Spec.Data[0].RemoteRef.Key = "changed"
	cp.Spec.DataFrom[0].Extract.Key = "changed"
	cp.Status.Conditions[0].Status = corev1.ConditionFalse
	if diff := cmp.Diff(fullExternalSecret("ns", "es").Spec, orig.Spec); diff != "" {
		t.Errorf("mutating the copy changed the original spec:\n%s", diff)
	}
	if orig.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Error("mutating the copy changed the original status")
	}

	store := &esov1.ClusterSecretStore{Spec: esov1.SecretStoreSpec{Provider: fakeProvider()}}
	scp := store.DeepCopyObject().(*esov1.ClusterSecretStore)
	scp.Spec.Provider.Raw[2] = 'X'
	if diff := jsonEqual(t, fakeProvider().Raw, store.Spec.Provider.Raw); diff != "" {
		t.Errorf("mutating the copied provider changed the original:\n%s", diff)
	}
}

// Compile-time checks that every mirrored kind is a client.Object and every list a
// client.ObjectList.
var (
	_ client.Object     = &esov1.ExternalSecret{}
	_ client.Object     = &esov1.SecretStore{}
	_ client.Object     = &esov1.ClusterSecretStore{}
	_ client.ObjectList = &esov1.ExternalSecretList{}
	_ client.ObjectList = &esov1.SecretStoreList{}
	_ client.ObjectList = &esov1.ClusterSecretStoreList{}
)
