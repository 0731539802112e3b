package webhook_test

import (
	"testing"

	"github.com/c5c3/reconciler-sdk/admit/admittest"
	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/webhook"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// sharedStore is the store an omitted secretStoreRef resolves to: the shared
// ClusterSecretStore.
var sharedStore = secrets.EffectiveStoreRef(nil)

func storeRef(kind commonv1.SecretStoreRefKind, name string) func(*v1alpha1.Keystone) {
	return func(k *v1alpha1.Keystone) {
		k.Spec.SecretStoreRef = &commonv1.SecretStoreRefSpec{Kind: kind, Name: name}
	}
}

func mariaDBIn(namespace string) func(*v1alpha1.Keystone) {
	return func(k *v1alpha1.Keystone) { k.Spec.Database.MariaDBRef.Namespace = namespace }
}

func withGateway(namespace string) func(*v1alpha1.Keystone) {
	return func(k *v1alpha1.Keystone) {
		k.Spec.Gateway = &httproute.Spec{
			ParentRef: httproute.ParentRef{Name: "public", Namespace: namespace},
			Hostnames: []string{"identity.example.com"},
		}
	}
}

func inNamespace(ns string) func(*v1alpha1.Keystone) {
	return func(k *v1alpha1.Keystone) { k.Namespace = ns }
}

// TestDefault checks each default, that a value already set is never changed, that
// defaulting twice gives the same object as defaulting once, and that two objects
// defaulted apart share no memory (admittest.ExpectDefault).
func TestDefault(t *testing.T) {
	shared := storeRef(sharedStore.Kind, sharedStore.Name)
	tests := map[string]struct {
		in *v1alpha1.Keystone
		// requestNamespace is the namespace of the admission request in ctx.
		requestNamespace string
		want             *v1alpha1.Keystone
	}{
		"an omitted secretStoreRef becomes the shared ClusterSecretStore and the MariaDB is in the Keystone's namespace": {
			in:   minimal(),
			want: minimal(shared, mariaDBIn("openstack")),
		},
		"a SecretStore is kept": {
			in:   minimal(storeRef(commonv1.SecretStoreKind, "tenant-store"), mariaDBIn("openstack")),
			want: minimal(storeRef(commonv1.SecretStoreKind, "tenant-store"), mariaDBIn("openstack")),
		},
		"a ClusterSecretStore without a name names the shared store": {
			in:   minimal(storeRef(commonv1.ClusterSecretStoreKind, ""), mariaDBIn("openstack")),
			want: minimal(shared, mariaDBIn("openstack")),
		},
		"a reference without kind and name becomes the shared store": {
			in:   minimal(storeRef("", ""), mariaDBIn("openstack")),
			want: minimal(shared, mariaDBIn("openstack")),
		},
		"a SecretStore without a name is left to the store gate to refuse": {
			in:   minimal(storeRef(commonv1.SecretStoreKind, ""), mariaDBIn("openstack")),
			want: minimal(storeRef(commonv1.SecretStoreKind, ""), mariaDBIn("openstack")),
		},
		"a MariaDB in another namespace is kept": {
			in:   minimal(shared, mariaDBIn("databases")),
			want: minimal(shared, mariaDBIn("databases")),
		},
		"a Gateway without a namespace is in the Keystone's": {
			in:   minimal(shared, mariaDBIn("databases"), withGateway("")),
			want: minimal(shared, mariaDBIn("databases"), withGateway("openstack")),
		},
		"a Gateway's namespace is kept": {
			in:   minimal(shared, mariaDBIn("databases"), withGateway("gateways")),
			want: minimal(shared, mariaDBIn("databases"), withGateway("gateways")),
		},
		"an object without a namespace takes the request's": {
			in:               minimal(shared, inNamespace(""), withGateway("")),
			requestNamespace: "from-request",
			want:             minimal(shared, inNamespace(""), mariaDBIn("from-request"), withGateway("from-request")),
		},
		"no namespace anywhere leaves both namespaces empty": {
			in:   minimal(shared, inNamespace(""), withGateway("")),
			want: minimal(shared, inNamespace(""), withGateway("")),
		},
		"every default at once": {
			in:   minimal(withGateway("")),
			want: minimal(shared, mariaDBIn("openstack"), withGateway("openstack")),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			admittest.ExpectDefault(t, admittest.RequestContext(tc.requestNamespace), webhook.Defaulter{}, tc.in, tc.want)
		})
	}
}
