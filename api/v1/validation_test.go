package v1_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	testcrdv1 "github.com/c5c3/reconciler-sdk/api/v1/internal/testcrd/v1"
)

// TestValidation writes specs to a CRD that embeds the blocks of this package (as
// controller-gen renders them) and checks what the API server accepts, rejects and
// defaults.
func TestValidation(t *testing.T) {
	tests := map[string]struct {
		spec map[string]any
		// wantErr lists substrings of the API server's rejection; empty means accepted.
		wantErr []string
		// want is the spec the server stores, when accepted.
		want testcrdv1.WidgetSpec
	}{
		"no references": {
			spec: map[string]any{},
		},
		"store kind defaults to ClusterSecretStore": {
			spec: map[string]any{"secretStoreRef": map[string]any{"name": "openbao-cluster-store"}},
			want: testcrdv1.WidgetSpec{SecretStoreRef: &commonv1.SecretStoreRefSpec{
				Kind: commonv1.ClusterSecretStoreKind, Name: "openbao-cluster-store",
			}},
		},
		"namespaced SecretStore": {
			spec: map[string]any{"secretStoreRef": map[string]any{"kind": "SecretStore", "name": "tenant-store"}},
			want: testcrdv1.WidgetSpec{SecretStoreRef: &commonv1.SecretStoreRefSpec{
				Kind: commonv1.SecretStoreKind, Name: "tenant-store",
			}},
		},
		"unknown store kind": {
			spec:    map[string]any{"secretStoreRef": map[string]any{"kind": "VaultStore", "name": "x"}},
			wantErr: []string{"spec.secretStoreRef.kind", `Unsupported value: "VaultStore"`},
		},
		"store without name": {
			spec:    map[string]any{"secretStoreRef": map[string]any{"kind": "SecretStore"}},
			wantErr: []string{"spec.secretStoreRef.name", "Required value"},
		},
		"store with empty name": {
			spec:    map[string]any{"secretStoreRef": map[string]any{"name": ""}},
			wantErr: []string{"spec.secretStoreRef.name"},
		},
		"store name not a DNS subdomain": {
			spec:    map[string]any{"secretStoreRef": map[string]any{"name": "Tenant_Store"}},
			wantErr: []string{"spec.secretStoreRef.name", "should match"},
		},
		"store name too long": {
			spec:    map[string]any{"secretStoreRef": map[string]any{"name": strings.Repeat("a", 254)}},
			wantErr: []string{"spec.secretStoreRef.name", "Too long"},
		},
		"target cluster": {
			spec: map[string]any{"targetClusterRef": map[string]any{"name": "region-one"}},
			want: testcrdv1.WidgetSpec{TargetClusterRef: &commonv1.TargetClusterRefSpec{Name: "region-one"}},
		},
		"target cluster without name": {
			spec:    map[string]any{"targetClusterRef": map[string]any{}},
			wantErr: []string{"spec.targetClusterRef.name", "Required value"},
		},
		"target cluster with empty name": {
			spec:    map[string]any{"targetClusterRef": map[string]any{"name": ""}},
			wantErr: []string{"spec.targetClusterRef.name"},
		},
		"both": {
			spec: map[string]any{
				"secretStoreRef":   map[string]any{"kind": "SecretStore", "name": "tenant-store"},
				"targetClusterRef": map[string]any{"name": "region-one"},
			},
			want: testcrdv1.WidgetSpec{
				SecretStoreRef:   &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-store"},
				TargetClusterRef: &commonv1.TargetClusterRefSpec{Name: "region-one"},
			},
		},
	}
	ns := env.Namespace(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": testcrdv1.GroupVersion.String(),
				"kind":       "Widget",
				"metadata":   map[string]any{"generateName": "widget-", "namespace": ns},
				"spec":       tc.spec,
			}}
			err := env.Client.Create(ctx, u)
			if len(tc.wantErr) > 0 {
				if !apierrors.IsInvalid(err) {
					t.Fatalf("create: got %v, want an Invalid error", err)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			got := &testcrdv1.Widget{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				t.Fatalf("get: %v", err)
			}
			if diff := cmp.Diff(tc.want, got.Spec); diff != "" {
				t.Errorf("stored spec (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTypedRoundTrip writes the Go types (not hand-written JSON) and reads them back,
// so the JSON names of the blocks match their schema.
func TestTypedRoundTrip(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	w := &testcrdv1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: ns},
		Spec: testcrdv1.WidgetSpec{
			SecretStoreRef:   &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-store"},
			TargetClusterRef: &commonv1.TargetClusterRefSpec{Name: "region-one"},
		},
	}
	want := *w.Spec.DeepCopy()
	strict := client.WithFieldValidation(env.Client, metav1.FieldValidationStrict)
	if err := strict.Create(ctx, w); err != nil {
		t.Fatalf("create: %v", err)
	}
	got := &testcrdv1.Widget{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("spec read back (-want +got):\n%s", diff)
	}
}

func TestDeepCopy(t *testing.T) {
	ref := &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "a"}
	cp := ref.DeepCopy()
	cp.Name = "b"
	if ref.Name != "a" {
		t.Error("mutating the SecretStoreRefSpec copy changed the original")
	}
	tc := &commonv1.TargetClusterRefSpec{Name: "a"}
	tcp := tc.DeepCopy()
	tcp.Name = "b"
	if tc.Name != "a" {
		t.Error("mutating the TargetClusterRefSpec copy changed the original")
	}
	var nilRef *commonv1.SecretStoreRefSpec
	if nilRef.DeepCopy() != nil {
		t.Error("DeepCopy of a nil SecretStoreRefSpec is not nil")
	}
}
