package webhook_test

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/c5c3/reconciler-sdk/admit/admittest"
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

// TestDefault checks each default, that a value already set is never changed, that
// defaulting twice gives the same object as defaulting once, and that two objects
// defaulted apart share no memory (admittest.ExpectDefault).
func TestDefault(t *testing.T) {
	shared := storeRef(sharedStore.Kind, sharedStore.Name)
	initial := func(id string) func(*v1alpha1.Horizon) {
		return func(h *v1alpha1.Horizon) { h.Spec.WebSSO.InitialChoice = id }
	}
	tests := map[string]struct {
		in *v1alpha1.Horizon
		// requestNamespace is the namespace of the admission request in ctx.
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
			admittest.ExpectDefault(t, admittest.RequestContext(tc.requestNamespace), webhook.Defaulter{}, tc.in, tc.want)
		})
	}
}

// withCRDDefaults sets what the CRD defaults on a Horizon that leaves it out.
func withCRDDefaults(h *v1alpha1.Horizon) {
	h.Spec.Replicas = ptr.To[int32](1)
	h.Spec.TimeZone = "UTC"
	h.Spec.SecretKey.Property = "secret_key"
	h.Spec.SecretKey.RefreshInterval = &metav1.Duration{Duration: time.Hour}
}
