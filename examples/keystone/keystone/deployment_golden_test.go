package keystone

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
)

// updateGolden rewrites the golden Deployments of TestDeploymentWithoutFederationUnchanged
// from the current code: go test ./examples/keystone/keystone -run TestDeploymentWithoutFederationUnchanged -update.
var updateGolden = flag.Bool("update", false, "rewrite testdata/deployment-*.json")

// TestDeploymentWithoutFederationUnchanged: a projection without a federation Secret
// renders the API Deployment byte for byte as the code did before federation was
// mounted (the golden files were written by that code), so a Keystone whose backends
// declare no identity provider does not roll when the operator is upgraded.
func TestDeploymentWithoutFederationUnchanged(t *testing.T) {
	k := &v1alpha1.Keystone{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "keystone"},
		Spec: v1alpha1.KeystoneSpec{
			Image:     "registry.example/keystone:2025.1",
			Replicas:  new(int32(2)),
			Database:  v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}, TLS: &v1alpha1.DatabaseTLSSpec{}},
			Policy:    &v1alpha1.PolicySpec{ConfigMapRef: v1alpha1.ConfigMapKeyRef{Name: "policy"}},
			Bootstrap: v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
		},
		Status: v1alpha1.KeystoneStatus{ConfigMap: "keystone-config-0123456789"},
	}
	auto := k.DeepCopy()
	auto.Spec.Autoscaling = &commonv1.AutoscalingSpec{MaxReplicas: 3}
	for name, c := range map[string]struct {
		k *v1alpha1.Keystone
		s *identitybackend.Projection
	}{
		"no-backends": {k, &identitybackend.Projection{}},
		"domains":     {auto, &identitybackend.Projection{Secret: "keystone-domains-abc", Files: []string{"keystone.corp.conf", "keystone.ldap.conf"}}},
	} {
		got, err := json.MarshalIndent(desiredDeployment(c.k, c.s, "42"), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join("testdata", "deployment-"+name+".json")
		if *updateGolden {
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: the Deployment differs from %s:\n%s", name, file, got)
		}
	}
}
