package v1_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// TestApplyKeepsFieldsTheMirrorDoesNotModel: another field manager sets fields the
// mirror has no Go field for (spec.refreshPolicy, spec.target.immutable); applying the
// mirror type with apply.EnsureObject leaves them in place, and a second apply of the
// same desired object does not write.
func TestApplyKeepsFieldsTheMirrorDoesNotModel(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	// The foreign manager's name sorts before apply.FieldManager on purpose. The API
	// server orders Apply entries of managedFields by second-resolution time, then by
	// manager name, and its no-op check compares the entries pairwise: when both managers
	// applied within the same second and ours sorts first, our next apply (a second later)
	// moves our entry behind the other one and that reorder alone is written, once. This
	// test is about fields the mirror does not model, not about that upstream tie.
	// The object is the owner's (apply.EnsureObject takes over no other): the other
	// manager co-manages fields of it, as a GitOps tool patching an operator's child does.
	foreign := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "external-secrets.io/v1",
		"kind":       "ExternalSecret",
		"metadata": map[string]any{"name": "identity-db", "namespace": ns, "ownerReferences": []any{
			map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": owner.Name, "uid": string(owner.UID), "controller": true},
		}},
		"spec": map[string]any{
			"refreshPolicy": "Periodic",
			"target":        map[string]any{"immutable": true},
		},
	}}
	if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(foreign),
		client.FieldOwner("argocd-controller"), client.ForceOwnership); err != nil {
		t.Fatalf("apply foreign fields: %v", err)
	}

	desired := func() *esov1.ExternalSecret { return fullExternalSecret(ns, "identity-db") }
	es := desired()
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, es, apply.FieldManager); err != nil {
		t.Fatalf("EnsureObject: %v", err)
	}
	if diff := cmp.Diff(desired().Spec, es.Spec); diff != "" {
		t.Errorf("applied spec (-want +got):\n%s", diff)
	}

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(esov1.ExtSecretGroupVersionKind)
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "refreshPolicy"); v != "Periodic" {
		t.Errorf("spec.refreshPolicy = %q after the mirror apply, want Periodic", v)
	}
	if v, _, _ := unstructured.NestedBool(got.Object, "spec", "target", "immutable"); !v {
		t.Error("spec.target.immutable was lost by the mirror apply")
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "target", "name"); v != "identity-db-secret" {
		t.Errorf("spec.target.name = %q, want identity-db-secret", v)
	}
	if !managesField(got, "argocd-controller", "f:refreshPolicy") {
		t.Error("argocd-controller no longer owns spec.refreshPolicy")
	}
	if !managesField(got, apply.FieldManager, "f:secretStoreRef") {
		t.Errorf("%s does not own spec.secretStoreRef", apply.FieldManager)
	}

	rv := es.ResourceVersion
	again := desired()
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, again, apply.FieldManager); err != nil {
		t.Fatalf("second EnsureObject: %v", err)
	}
	if again.ResourceVersion != rv {
		t.Errorf("converged apply wrote: resourceVersion %s -> %s", rv, again.ResourceVersion)
	}
}

// managesField reports whether manager's managedFields entry for obj lists field
// (a "f:name" key) directly under spec.
func managesField(obj *unstructured.Unstructured, manager, field string) bool {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
			return false
		}
		spec, _ := fields["f:spec"].(map[string]any)
		if _, ok := spec[field]; ok {
			return true
		}
	}
	return false
}
