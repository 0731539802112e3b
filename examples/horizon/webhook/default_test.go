package webhook_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/webhook"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// sharedStore is the store an omitted secretStoreRef resolves to.
var sharedStore = commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: secrets.OpenBaoClusterStoreName}

func storeRef(kind commonv1.SecretStoreRefKind, name string) func(*v1alpha1.Horizon) {
	return func(h *v1alpha1.Horizon) {
		h.Spec.SecretStoreRef = &commonv1.SecretStoreRefSpec{Kind: kind, Name: name}
	}
}

func withGateway(namespace string) func(*v1alpha1.Horizon) {
	return func(h *v1alpha1.Horizon) {
		h.Spec.Gateway = &v1alpha1.GatewaySpec{
			ParentRef: v1alpha1.GatewayParentRef{Name: "public", Namespace: namespace},
			Hostname:  "dashboard.example.com",
		}
	}
}

func inNamespace(ns string) func(*v1alpha1.Horizon) {
	return func(h *v1alpha1.Horizon) { h.Namespace = ns }
}

// TestDefault checks each default, that a value already set is never changed, and
// that defaulting twice gives the same object as defaulting once.
func TestDefault(t *testing.T) {
	shared := storeRef(sharedStore.Kind, sharedStore.Name)
	initial := func(id string) func(*v1alpha1.Horizon) {
		return func(h *v1alpha1.Horizon) { h.Spec.WebSSO.InitialChoice = id }
	}
	tests := map[string]struct {
		in *v1alpha1.Horizon
		// requestNamespace, when set, is the namespace of the admission request in ctx.
		requestNamespace string
		want             *v1alpha1.Horizon
	}{
		"an omitted secretStoreRef becomes the shared ClusterSecretStore": {
			in:   minimal(),
			want: minimal(shared),
		},
		"a SecretStore is kept": {
			in:   minimal(storeRef(commonv1.SecretStoreKind, "tenant-store")),
			want: minimal(storeRef(commonv1.SecretStoreKind, "tenant-store")),
		},
		"another ClusterSecretStore is kept": {
			in:   minimal(storeRef(commonv1.ClusterSecretStoreKind, "other-store")),
			want: minimal(storeRef(commonv1.ClusterSecretStoreKind, "other-store")),
		},
		"a ClusterSecretStore without a name names the shared store": {
			in:   minimal(storeRef(commonv1.ClusterSecretStoreKind, "")),
			want: minimal(shared),
		},
		"a reference without kind and name becomes the shared store": {
			in:   minimal(storeRef("", "")),
			want: minimal(shared),
		},
		"a SecretStore without a name is left to the store gate to refuse": {
			in:   minimal(storeRef(commonv1.SecretStoreKind, "")),
			want: minimal(storeRef(commonv1.SecretStoreKind, "")),
		},
		"a name without a kind is kept for the CRD to default the kind": {
			in:   minimal(storeRef("", "other-store")),
			want: minimal(storeRef("", "other-store")),
		},
		"enabled single sign-on preselects the first choice": {
			in:   minimal(shared, withWebSSO),
			want: minimal(shared, withWebSSO, initial("credentials")),
		},
		"a set initialChoice is kept": {
			in:   minimal(shared, withWebSSO, initial("oidc")),
			want: minimal(shared, withWebSSO, initial("oidc")),
		},
		"disabled single sign-on is left alone": {
			in:   minimal(shared, withWebSSO, func(h *v1alpha1.Horizon) { h.Spec.WebSSO.Enabled = false }),
			want: minimal(shared, withWebSSO, func(h *v1alpha1.Horizon) { h.Spec.WebSSO.Enabled = false }),
		},
		"single sign-on without choices has nothing to preselect": {
			in:   minimal(shared, func(h *v1alpha1.Horizon) { h.Spec.WebSSO = &v1alpha1.WebSSOSpec{Enabled: true} }),
			want: minimal(shared, func(h *v1alpha1.Horizon) { h.Spec.WebSSO = &v1alpha1.WebSSOSpec{Enabled: true} }),
		},
		"a Gateway without a namespace is in the Horizon's": {
			in:   minimal(shared, withGateway("")),
			want: minimal(shared, withGateway("openstack")),
		},
		"a Gateway's namespace is kept": {
			in:   minimal(shared, withGateway("gateway-system")),
			want: minimal(shared, withGateway("gateway-system")),
		},
		"an object without a namespace takes the request's": {
			in:               minimal(shared, inNamespace(""), withGateway("")),
			requestNamespace: "from-request",
			want:             minimal(shared, inNamespace(""), withGateway("from-request")),
		},
		"no namespace anywhere leaves the Gateway's empty": {
			in:   minimal(shared, inNamespace(""), withGateway("")),
			want: minimal(shared, inNamespace(""), withGateway("")),
		},
		"every default at once": {
			in:   minimal(withWebSSO, withGateway("")),
			want: minimal(shared, withWebSSO, initial("credentials"), withGateway("openstack")),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			if tc.requestNamespace != "" {
				ctx = admission.NewContextWithRequest(ctx, admission.Request{
					AdmissionRequest: admissionv1.AdmissionRequest{Namespace: tc.requestNamespace}})
			}
			got := tc.in.DeepCopy()
			if err := (webhook.Defaulter{}).Default(ctx, got); err != nil {
				t.Fatalf("Default: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("defaulted (-want +got):\n%s", diff)
			}
			if err := (webhook.Defaulter{}).Default(ctx, got); err != nil {
				t.Fatalf("second Default: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("defaulted twice (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultSharesNoMemory checks that the defaulted secretStoreRef is the Horizon's
// own: changing it changes no later default.
func TestDefaultSharesNoMemory(t *testing.T) {
	a, b := minimal(), minimal()
	for _, h := range []*v1alpha1.Horizon{a, b} {
		if err := (webhook.Defaulter{}).Default(context.Background(), h); err != nil {
			t.Fatal(err)
		}
	}
	a.Spec.SecretStoreRef.Name = "changed"
	if diff := cmp.Diff(&sharedStore, b.Spec.SecretStoreRef); diff != "" {
		t.Errorf("second Horizon's store after changing the first's (-want +got):\n%s", diff)
	}
}
