package v1alpha1_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/secrets/eso/internal/esotest"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// strict returns env's client with strict field validation, so that a JSON name the
// CRD schema lacks fails the write instead of being pruned.
func strict() client.Client {
	return client.WithFieldValidation(env.Client, metav1.FieldValidationStrict)
}

var timeEqual = cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })

func now() metav1.Time { return metav1.NewTime(time.Now().Truncate(time.Second)) }

// fullPushSecret sets every spec field the mirror models.
func fullPushSecret(ns, name string) *esov1alpha1.PushSecret {
	return &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: esov1alpha1.PushSecretSpec{
			RefreshInterval: &metav1.Duration{Duration: 10 * time.Minute},
			SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Name: "openbao-cluster-store", Kind: "ClusterSecretStore"}},
			UpdatePolicy:    esov1alpha1.PushSecretUpdatePolicyIfNotExists,
			DeletionPolicy:  esov1alpha1.PushSecretDeletionPolicyDelete,
			Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: "identity-fernet-keys"}},
			Data: []esov1alpha1.PushSecretData{{
				Match: esov1alpha1.PushSecretMatch{
					SecretKey: "0",
					RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: "kv/identity/fernet", Property: "0"},
				},
			}},
		},
	}
}

// fullPushSecretStatus sets every status field the mirror models.
func fullPushSecretStatus() esov1alpha1.PushSecretStatus {
	return esov1alpha1.PushSecretStatus{
		RefreshTime:           now(),
		SyncedResourceVersion: "1-0123456789abcdef",
		Conditions: []esov1alpha1.PushSecretStatusCondition{{
			Type:               esov1alpha1.PushSecretReady,
			Status:             corev1.ConditionTrue,
			Reason:             esov1alpha1.ReasonSynced,
			Message:            "PushSecret synced successfully",
			LastTransitionTime: now(),
		}},
	}
}

// TestFullObjectsSetEveryField keeps the fixtures honest: the strict round trip proves
// a JSON name only if the fixture sets that field.
func TestFullObjectsSetEveryField(t *testing.T) {
	tests := map[string]any{
		"spec":   fullPushSecret("ns", "ps").Spec,
		"status": fullPushSecretStatus(),
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
	if err := esov1alpha1.AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	tests := map[string]struct {
		obj  runtime.Object
		want schema.GroupVersionKind
	}{
		"PushSecret":     {&esov1alpha1.PushSecret{}, esov1alpha1.PushSecretGroupVersionKind},
		"PushSecretList": {&esov1alpha1.PushSecretList{}, esov1alpha1.SchemeGroupVersion.WithKind("PushSecretList")},
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
		})
	}
	if got := esov1alpha1.PushSecretGroupVersionKind.String(); got != "external-secrets.io/v1alpha1, Kind=PushSecret" {
		t.Errorf("PushSecretGroupVersionKind = %q", got)
	}
}

// TestPushSecretRoundTrip writes every modelled spec and status field to ESO's real
// CRD with strict field validation and reads them back.
func TestPushSecretRoundTrip(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	ps := fullPushSecret(ns, "identity-fernet")
	wantSpec := *ps.Spec.DeepCopy()
	if err := strict().Create(ctx, ps); err != nil {
		t.Fatalf("create: %v", err)
	}
	got := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ps), got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if diff := cmp.Diff(wantSpec, got.Spec); diff != "" {
		t.Errorf("spec read back (-want +got):\n%s", diff)
	}

	wantStatus := fullPushSecretStatus()
	got.Status = *wantStatus.DeepCopy()
	if err := strict().Status().Update(ctx, got); err != nil {
		t.Fatalf("update status: %v", err)
	}
	read := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ps), read); err != nil {
		t.Fatalf("get: %v", err)
	}
	if diff := cmp.Diff(wantStatus, read.Status, timeEqual); diff != "" {
		t.Errorf("status read back (-want +got):\n%s", diff)
	}

	var list esov1alpha1.PushSecretList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != ps.Name {
		t.Errorf("listed %d PushSecrets, want exactly %s", len(list.Items), ps.Name)
	}
}

// TestPushSecretServerDefaults proves that the fields the mirror leaves empty map onto
// the CRD fields the server defaults.
func TestPushSecretServerDefaults(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	ps := &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: "minimal", Namespace: ns},
		Spec: esov1alpha1.PushSecretSpec{
			SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Name: "openbao"}},
			Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: "src"}},
		},
	}
	if err := strict().Create(ctx, ps); err != nil {
		t.Fatalf("create: %v", err)
	}
	want := esov1alpha1.PushSecretSpec{
		RefreshInterval: &metav1.Duration{Duration: time.Hour},
		SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Name: "openbao", Kind: "SecretStore"}},
		UpdatePolicy:    esov1alpha1.PushSecretUpdatePolicyReplace,
		DeletionPolicy:  esov1alpha1.PushSecretDeletionPolicyNone,
		Selector:        ps.Spec.Selector,
	}
	if diff := cmp.Diff(want, ps.Spec); diff != "" {
		t.Errorf("spec with server defaults (-want +got):\n%s", diff)
	}
}

// TestApplyKeepsFieldsTheMirrorDoesNotModel: another field manager sets spec.template,
// which the mirror has no Go field for; applying the mirror type with
// apply.EnsureObject leaves it in place, leaves the server defaults of updatePolicy and
// refreshInterval unowned, and a second apply of the same desired object does not write.
func TestApplyKeepsFieldsTheMirrorDoesNotModel(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatalf("create owner: %v", err)
	}

	// The foreign manager's name sorts before apply.FieldManager on purpose. The API
	// server orders Apply entries of managedFields by second-resolution time, then by
	// manager name, and its no-op check compares the entries pairwise: when both managers
	// applied within the same second and ours sorts first, our next apply (a second later)
	// moves our entry behind the other one and that reorder alone is written, once. This
	// test is about fields the mirror does not model, not about that upstream tie.
	// The object is the owner's (apply.EnsureObject takes over no other): the other
	// manager co-manages fields of it, as a GitOps tool patching an operator's child does.
	foreign := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "external-secrets.io/v1alpha1",
		"kind":       "PushSecret",
		"metadata": map[string]any{"name": "identity-fernet", "namespace": ns, "ownerReferences": []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": owner.Name, "uid": string(owner.UID), "controller": true},
		}},
		"spec": map[string]any{
			"template": map[string]any{"data": map[string]any{"0": "{{ .key0 }}"}},
		},
	}}
	if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(foreign),
		client.FieldOwner("argocd-controller"), client.ForceOwnership); err == nil {
		// ESO's CRD requires secretStoreRefs and selector: a template alone is refused.
		t.Fatal("apply of a PushSecret without secretStoreRefs and selector succeeded")
	}
	_ = unstructured.SetNestedSlice(foreign.Object, []any{map[string]any{"name": "other-store"}}, "spec", "secretStoreRefs")
	_ = unstructured.SetNestedMap(foreign.Object, map[string]any{"secret": map[string]any{"name": "identity-fernet-keys"}}, "spec", "selector")
	if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(foreign),
		client.FieldOwner("argocd-controller"), client.ForceOwnership); err != nil {
		t.Fatalf("apply foreign fields: %v", err)
	}

	desired := func() *esov1alpha1.PushSecret {
		return &esov1alpha1.PushSecret{
			ObjectMeta: metav1.ObjectMeta{Name: "identity-fernet", Namespace: ns},
			Spec: esov1alpha1.PushSecretSpec{
				SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Name: "openbao-cluster-store", Kind: "ClusterSecretStore"}},
				Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: "identity-fernet-keys"}},
				Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{
					SecretKey: "0", RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: "kv/identity/fernet", Property: "0"},
				}}},
			},
		}
	}
	ps := desired()
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, ps, apply.FieldManager); err != nil {
		t.Fatalf("EnsureObject: %v", err)
	}
	if diff := cmp.Diff(desired().Spec.SecretStoreRefs, ps.Spec.SecretStoreRefs); diff != "" {
		t.Errorf("secretStoreRefs after apply (-want +got):\n%s", diff)
	}

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(esov1alpha1.PushSecretGroupVersionKind)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ps), got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "template", "data", "0"); v != "{{ .key0 }}" {
		t.Errorf("spec.template.data[0] = %q after the mirror apply, want the other manager's template", v)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "updatePolicy"); v != "Replace" {
		t.Errorf("spec.updatePolicy = %q, want the server default Replace", v)
	}
	owned := specFieldsOwnedBy(t, got, apply.FieldManager)
	for _, f := range []string{"f:updatePolicy", "f:refreshInterval", "f:deletionPolicy", "f:template"} {
		if owned[f] {
			t.Errorf("%s owns spec %s, which its desired object did not set", apply.FieldManager, f)
		}
	}
	if !owned["f:secretStoreRefs"] {
		t.Errorf("%s does not own spec.secretStoreRefs", apply.FieldManager)
	}

	rv := ps.ResourceVersion
	again := desired()
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, again, apply.FieldManager); err != nil {
		t.Fatalf("second EnsureObject: %v", err)
	}
	if again.ResourceVersion != rv {
		t.Errorf("converged apply wrote: resourceVersion %s -> %s", rv, again.ResourceVersion)
	}
}

func TestDeepCopy(t *testing.T) {
	orig := fullPushSecret("ns", "ps")
	orig.Status = fullPushSecretStatus()
	cp := orig.DeepCopyObject().(*esov1alpha1.PushSecret)
	if diff := cmp.Diff(orig, cp, timeEqual); diff != "" {
		t.Fatalf("copy differs (-orig +copy):\n%s", diff)
	}
	cp.Spec.RefreshInterval.Duration = time.Second
	cp.Spec.SecretStoreRefs[0].Name = "changed"
	cp.Spec.Selector.Secret.Name = "changed"
	cp.Spec.Data[0].Match.RemoteRef.RemoteKey = "changed"
	cp.Status.Conditions[0].Status = corev1.ConditionFalse
	if diff := cmp.Diff(fullPushSecret("ns", "ps").Spec, orig.Spec); diff != "" {
		t.Errorf("mutating the copy changed the original spec:\n%s", diff)
	}
	if orig.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Error("mutating the copy changed the original status")
	}
}

// specFieldsOwnedBy returns the top-level spec fields ("f:name") manager's Apply entry
// owns.
func specFieldsOwnedBy(t *testing.T, obj *unstructured.Unstructured, manager string) map[string]bool {
	t.Helper()
	owned := map[string]bool{}
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			t.Fatalf("managedFields of %s: %v", manager, err)
		}
		spec, _ := fields["f:spec"].(map[string]any)
		for k := range spec {
			owned[k] = true
		}
	}
	return owned
}
