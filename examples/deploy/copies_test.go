package deploy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/internal/deploy"
	"github.com/c5c3/reconciler-sdk/katalog"
)

// kustomize reads no file outside a kustomization's directory tree, so the Katalog
// engine's config holds copies of the example Katalogs and their CRDs: they must stay
// the files examples/katalog's tests run.
func TestKatalogCopies(t *testing.T) {
	for copyPath, original := range map[string]string{
		"../katalog/config/manager/katalogs/platform.yaml": "../katalog/platform.yaml",
		"../katalog/config/manager/katalogs/database.yaml": "../katalog/database.yaml",
		"../katalog/config/manager/katalogs/foreach.yaml":  "../katalog/foreach.yaml",
		"../katalog/config/crd/bases/applications.yaml":    "../katalog/crds/applications.yaml",
		"../katalog/config/crd/bases/databases.yaml":       "../katalog/crds/databases.yaml",
		"../katalog/config/crd/bases/regionalapps.yaml":    "../katalog/crds/regionalapps.yaml",
	} {
		got, err := os.ReadFile(copyPath)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(original)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s: cp %[2]s %[1]s", copyPath, original)
		}
	}
}

// The engine's shipped ClusterRole is katalog.ClusterRole of the Katalogs it runs (what
// `katalog rbac` prints), and its leader-election Role holds katalog.LeaseRole's rules.
func TestKatalogRBAC(t *testing.T) {
	kats, err := katalog.LoadAll("../katalog/platform.yaml", "../katalog/database.yaml", "../katalog/foreach.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	readYAML(t, "../katalog/config/rbac/role.yaml", &role)
	if diff := cmp.Diff(katalog.ClusterRole("manager-role", kats...), &role); diff != "" {
		t.Errorf("config/rbac/role.yaml is not katalog.ClusterRole of the Katalogs (go run ./cmd/katalog rbac --name manager-role ...): -want, +got:\n%s", diff)
	}
	var lease rbacv1.Role
	readYAML(t, "../katalog/config/rbac/leader_election_role.yaml", &lease)
	if diff := cmp.Diff(katalog.LeaseRole("", "").Rules, lease.Rules); diff != "" {
		t.Errorf("config/rbac/leader_election_role.yaml's rules are not katalog.LeaseRole's: -want, +got:\n%s", diff)
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// The Keystone rotation CronJobs run the operator's own image: however the image is
// overridden (deploy's -img on config/default, or kubebuilder's `kustomize edit set
// image controller=IMG` in config/manager), OPERATOR_IMAGE equals the manager
// container's image.
func TestKeystoneOperatorImage(t *testing.T) {
	const img = "registry.example/keystone-operator:v9"
	fromDeploy, err := deploy.Build("../keystone/config/default", deploy.BuildOptions{Image: img})
	if err != nil {
		t.Fatal(err)
	}
	// A copy of the config with the image set in config/manager, as kubebuilder's
	// make deploy does it.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../keystone/config")); err != nil {
		t.Fatal(err)
	}
	mk := filepath.Join(dir, "manager", "kustomization.yaml")
	raw, err := os.ReadFile(mk)
	if err != nil {
		t.Fatal(err)
	}
	raw = append(raw, []byte("images:\n- name: controller\n  newName: registry.example/keystone-operator\n  newTag: v9\n")...)
	if err := os.WriteFile(mk, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	fromManager, err := deploy.Build(filepath.Join(dir, "default"), deploy.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, d *appsv1.Deployment) {
		c := d.Spec.Template.Spec.Containers[0]
		var env []string
		for _, e := range c.Env {
			env = append(env, e.Name+"="+e.Value)
		}
		if c.Image != img || strings.Join(env, ",") != "OPERATOR_IMAGE="+img {
			t.Errorf("%s: image %q, env %q; want both %s", name, c.Image, env, img)
		}
	}
	check("deploy -img", manager(t, fromDeploy))
	check("config/manager images", manager(t, fromManager))
}
