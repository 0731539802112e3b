package v1alpha1_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/admit/admittest"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
)

// defaults is what the API server fills into a Keystone that sets only the required
// fields.
func defaults() v1alpha1.KeystoneSpec {
	return v1alpha1.KeystoneSpec{
		Image:    "registry.example/keystone:2025.1",
		Replicas: ptr.To[int32](1),
		Database: v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}, Name: "keystone", Username: "keystone"},
		Bootstrap: v1alpha1.BootstrapSpec{
			AdminUser:     "admin",
			AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin", Property: "password"},
			Region:        "RegionOne",
		},
		Fernet:     v1alpha1.KeyRepositorySpec{MaxActiveKeys: 3, RotationInterval: &metav1.Duration{Duration: 168 * time.Hour}},
		Credential: v1alpha1.KeyRepositorySpec{MaxActiveKeys: 3, RotationInterval: &metav1.Duration{Duration: 168 * time.Hour}},
		Token: v1alpha1.TokenSpec{
			Expiration:         &metav1.Duration{Duration: time.Hour},
			AllowExpiredWindow: &metav1.Duration{Duration: 48 * time.Hour},
		},
	}
}

// create creates obj (kind and desired state as a user's manifest has them) in ns with
// strict field validation, so an unknown field is an error rather than pruned.
func create(ctx context.Context, ns, kind string, spec map[string]any) (client.ObjectKey, error) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       kind,
		"metadata":   map[string]any{"generateName": "ks-", "namespace": ns},
		"spec":       spec,
	}}
	err := admittest.CreateStrict(ctx, env.Client, u)
	return client.ObjectKeyFromObject(u), err
}

// TestSamples creates the samples of config/samples and checks what the API server
// stores, defaults included.
func TestSamples(t *testing.T) {
	ns := env.Namespace(t)
	ctx := context.Background()
	minimal := defaults()
	for file, check := range map[string]func(t *testing.T, key client.ObjectKey){
		"keystone_v1alpha1_keystone_minimal.yaml": func(t *testing.T, key client.ObjectKey) {
			got := &v1alpha1.Keystone{}
			if err := env.Client.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(minimal, got.Spec); diff != "" {
				t.Errorf("stored spec (-want +got):\n%s", diff)
			}
		},
		"keystone_v1alpha1_keystone_full.yaml": func(t *testing.T, key client.ObjectKey) {
			got := &v1alpha1.Keystone{}
			if err := env.Client.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.Database.TLS == nil || got.Spec.Database.TLS.IssuerRef.Kind != "ClusterIssuer" ||
				got.Spec.Fernet.MaxActiveKeys != 5 || got.Spec.Gateway == nil || got.Spec.Gateway.Path != "" ||
				*got.Spec.Autoscaling.TargetCPUUtilization != 80 || got.Spec.Policy.ConfigMapRef.Key != "policy.yaml" {
				t.Errorf("stored spec = %+v", got.Spec)
			}
		},
		"keystone_v1alpha1_keystoneidentitybackend.yaml": func(t *testing.T, key client.ObjectKey) {
			got := &v1alpha1.KeystoneIdentityBackend{}
			if err := env.Client.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.Driver != "ldap" || got.Spec.Config["ldap"]["url"] != "ldaps://ldap.corp.example.com" ||
				got.Spec.PasswordSecretRef.Key != "password" {
				t.Errorf("stored spec = %+v", got.Spec)
			}
		},
	} {
		t.Run(file, func(t *testing.T) {
			name := strings.TrimSuffix(strings.ReplaceAll(file, "_", "-"), ".yaml") // one namespace for all samples
			u, err := admittest.CreateFile(ctx, env.Client, ns, "../../config/samples/"+file, name)
			if err != nil {
				t.Fatal(err)
			}
			check(t, client.ObjectKeyFromObject(u))
		})
	}
}

func minimalKeystone() map[string]any {
	return map[string]any{
		"image":     "registry.example/keystone:2025.1",
		"database":  map[string]any{"mariaDBRef": map[string]any{"name": "mariadb"}},
		"bootstrap": map[string]any{"adminPassword": map[string]any{"remoteKey": "openstack/keystone/admin"}},
	}
}

func minimalBackend() map[string]any {
	return map[string]any{"keystoneRef": map[string]any{"name": "keystone"}, "domain": "corp"}
}

// TestAdmission changes one part of a minimal resource and checks whether the API server
// admits it, and which field its refusal names.
func TestAdmission(t *testing.T) {
	tests := map[string]struct {
		reason string
		kind   string
		change func(spec map[string]any)
		field  string // "" admits
	}{
		"minimal keystone": {reason: "the required fields suffice", kind: "Keystone", change: func(map[string]any) {}},
		"no image": {reason: "the image is required", kind: "Keystone",
			change: func(s map[string]any) { delete(s, "image") }, field: "spec.image"},
		"no mariaDBRef": {reason: "the database server is required", kind: "Keystone",
			change: func(s map[string]any) { s["database"] = map[string]any{} }, field: "spec.database.mariaDBRef"},
		"two active fernet keys": {reason: "staged + primary + one secondary is the minimum", kind: "Keystone",
			change: func(s map[string]any) { s["fernet"] = map[string]any{"maxActiveKeys": 2} }, field: "spec.fernet.maxActiveKeys"},
		"database name with a dash": {reason: "database names are identifiers", kind: "Keystone",
			change: func(s map[string]any) { s["database"].(map[string]any)["name"] = "key-stone" }, field: "spec.database.name"},
		"issuer of an unknown kind": {reason: "Issuer or ClusterIssuer", kind: "Keystone",
			change: func(s map[string]any) {
				s["database"].(map[string]any)["tls"] = map[string]any{"issuerRef": map[string]any{"name": "ca", "kind": "Vault"}}
			}, field: "spec.database.tls.issuerRef.kind"},
		"public URL without scheme": {reason: "an endpoint URL needs a scheme and a host", kind: "Keystone",
			change: func(s map[string]any) {
				s["bootstrap"].(map[string]any)["publicURL"] = "identity.example.com"
			}, field: "spec.bootstrap.publicURL"},
		"external endpoint without a target cluster": {reason: "a Keystone on this cluster is reached at its Service", kind: "Keystone",
			change: func(s map[string]any) { s["externalEndpoint"] = "https://identity.edge.example.com" }, field: "spec.externalEndpoint"},
		"external endpoint over http": {reason: "the admin password crosses clusters only over TLS", kind: "Keystone",
			change: func(s map[string]any) {
				s["targetClusterRef"] = map[string]any{"name": "edge"}
				s["externalEndpoint"] = "http://identity.edge.example.com"
			}, field: "spec.externalEndpoint"},
		"external endpoint with a query": {reason: "an endpoint is a base URL", kind: "Keystone",
			change: func(s map[string]any) {
				s["targetClusterRef"] = map[string]any{"name": "edge"}
				s["externalEndpoint"] = "https://identity.edge.example.com/?x=1"
			}, field: "spec.externalEndpoint"},
		"external endpoint with a target cluster": {reason: "the operator reaches a remote Keystone there", kind: "Keystone",
			change: func(s map[string]any) {
				s["targetClusterRef"] = map[string]any{"name": "edge"}
				s["externalEndpoint"] = "https://identity.edge.example.com/v3"
			}},
		"minReplicas above maxReplicas": {reason: "the bounds must be ordered", kind: "Keystone",
			change: func(s map[string]any) { s["autoscaling"] = map[string]any{"minReplicas": 5, "maxReplicas": 2} },
			field:  "spec.autoscaling.minReplicas"},
		"unknown field": {reason: "strict validation refuses typos", kind: "Keystone",
			change: func(s map[string]any) { s["replica"] = 2 }, field: "spec.replica"},
		"minimal backend": {reason: "a Keystone and a domain suffice", kind: "KeystoneIdentityBackend", change: func(map[string]any) {}},
		"domain with a slash": {reason: "the domain names a file", kind: "KeystoneIdentityBackend",
			change: func(s map[string]any) { s["domain"] = "../etc" }, field: "spec.domain"},
		"unknown driver": {reason: "ldap or sql", kind: "KeystoneIdentityBackend",
			change: func(s map[string]any) { s["driver"] = "kerberos" }, field: "spec.driver"},
		"password ref without key": {reason: "a Secret key needs both parts", kind: "KeystoneIdentityBackend",
			change: func(s map[string]any) { s["passwordSecretRef"] = map[string]any{"name": "bind"} }, field: "spec.passwordSecretRef.key"},
	}
	ns := env.Namespace(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := minimalKeystone()
			if tc.kind == "KeystoneIdentityBackend" {
				spec = minimalBackend()
			}
			tc.change(spec)
			_, err := create(context.Background(), ns, tc.kind, spec)
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("%s: refused: %v", tc.reason, err)
			case tc.field != "" && err == nil:
				t.Fatalf("%s: admitted", tc.reason)
			case tc.field != "" && !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err):
				t.Fatalf("%s: error %v is not Invalid", tc.reason, err)
			case tc.field != "" && !strings.Contains(err.Error(), tc.field):
				t.Fatalf("%s: error %q does not name %s", tc.reason, err, tc.field)
			}
		})
	}
}
