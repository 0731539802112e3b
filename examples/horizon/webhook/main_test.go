package webhook_test

import (
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is kube-apiserver and etcd with the Horizon CRD and config/webhook installed,
// pointing at the webhook server of the managers the tests start.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDSources: []testenv.CRDSource{}, CRDPaths: []string{"../config/crd/bases"},
		WebhookPaths: []string{"../config/webhook"}}, &env))
}

// minimal is a valid Horizon named horizon in namespace openstack with only the
// required fields set, changed by edits in order.
func minimal(edits ...func(*v1alpha1.Horizon)) *v1alpha1.Horizon {
	h := &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Name: "horizon", Namespace: "openstack"},
		Spec: v1alpha1.HorizonSpec{
			Image:            "quay.io/openstack.kolla/horizon:2025.1-ubuntu-noble",
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			SecretKey:        v1alpha1.SecretKeySpec{RemoteKey: "openstack/horizon/secret-key"},
		},
	}
	for _, edit := range edits {
		edit(h)
	}
	return h
}

// withWebSSO enables single sign-on with the choices credentials and oidc.
func withWebSSO(h *v1alpha1.Horizon) {
	h.Spec.WebSSO = &v1alpha1.WebSSOSpec{Enabled: true, Choices: []v1alpha1.WebSSOChoice{
		{ID: "credentials", Label: "Keystone credentials"},
		{ID: "oidc", Label: "Company single sign-on"},
	}}
}

// withIdentityBackends names the backends in spec.websso.identityBackends (websso must
// be set).
func withIdentityBackends(names ...string) func(*v1alpha1.Horizon) {
	return func(h *v1alpha1.Horizon) {
		for _, n := range names {
			h.Spec.WebSSO.IdentityBackends = append(h.Spec.WebSSO.IdentityBackends, v1alpha1.IdentityBackendRef{Name: n})
		}
	}
}

// withExtra sets extraConfig to the given name, value pairs.
func withExtra(pairs ...string) func(*v1alpha1.Horizon) {
	return func(h *v1alpha1.Horizon) {
		h.Spec.ExtraConfig = map[string]string{}
		for i := 0; i+1 < len(pairs); i += 2 {
			h.Spec.ExtraConfig[pairs[i]] = pairs[i+1]
		}
	}
}
