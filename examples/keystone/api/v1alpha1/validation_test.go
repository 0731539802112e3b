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
		"keystone_v1alpha1_keystoneidentitybackend_federation.yaml": func(t *testing.T, key client.ObjectKey) {
			got := &v1alpha1.KeystoneIdentityBackend{}
			if err := env.Client.Get(ctx, key, got); err != nil {
				t.Fatal(err)
			}
			f := got.Spec.Federation
			if f == nil || len(f.IdentityProviders) != 1 || f.IdentityProviders[0].OpenID == nil ||
				f.IdentityProviders[0].OpenID.ClientSecretRef.Key != "client-secret" ||
				len(f.IdentityProviders[0].Mapping) != 1 || f.IdentityProviders[0].Mapping[0].Local[1].Group.Domain.Name != "corp-sso" {
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
		"an OpenID Connect provider": {reason: "issuer, client and mapping suffice", kind: "KeystoneIdentityBackend",
			change: withIdP(func(map[string]any) {})},
		"a SAML provider": {reason: "metadata and key pair suffice", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) {
				delete(p, "openid")
				p["protocol"] = "saml2"
				p["saml2"] = map[string]any{"idpMetadata": map[string]any{"configMapKeyRef": map[string]any{"name": "idp", "key": "metadata.xml"}},
					"spKeyPairSecretRef": map[string]any{"name": "sp"}}
			})},
		"federation without providers": {reason: "a federation has a provider", kind: "KeystoneIdentityBackend",
			change: func(s map[string]any) { s["federation"] = map[string]any{"identityProviders": []any{}} },
			field:  "spec.federation.identityProviders"},
		"unknown protocol": {reason: "openid or saml2", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { p["protocol"] = "oauth2" }), field: "spec.federation.identityProviders[0].protocol"},
		"an id with a slash": {reason: "the id names files and URL paths", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { p["id"] = "a/b" }), field: "spec.federation.identityProviders[0].id"},
		"two providers of one id": {reason: "the id is the list's key", kind: "KeystoneIdentityBackend",
			change: func(s map[string]any) {
				withIdP(func(map[string]any) {})(s)
				f := s["federation"].(map[string]any)
				f["identityProviders"] = append(f["identityProviders"].([]any), idp())
			}, field: "spec.federation.identityProviders[1]"},
		"openid protocol without its block": {reason: "the protocol's settings are required", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { delete(p, "openid") }), field: "spec.federation.identityProviders[0].openid"},
		"openid protocol with a saml2 block": {reason: "only the protocol's own block", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) {
				p["saml2"] = map[string]any{"idpMetadata": map[string]any{"inline": "<x/>"}, "spKeyPairSecretRef": map[string]any{"name": "sp"}}
			}), field: "spec.federation.identityProviders[0].saml2"},
		"an inline client secret": {reason: "the client secret comes from a Secret", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { p["openid"].(map[string]any)["clientSecret"] = "s3cr3t" }),
			field:  "spec.federation.identityProviders[0].openid.clientSecret"},
		"no client secret reference": {reason: "the client secret is required", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { delete(p["openid"].(map[string]any), "clientSecretRef") }),
			field:  "spec.federation.identityProviders[0].openid.clientSecretRef"},
		"issuer and metadata URL": {reason: "one place to discover the provider", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) {
				p["openid"].(map[string]any)["metadataURL"] = "https://sso.example.com/.well-known/openid-configuration"
			}), field: "spec.federation.identityProviders[0].openid"},
		"metadata URL over http": {reason: "the discovery document is fetched over TLS", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) {
				o := p["openid"].(map[string]any)
				delete(o, "issuer")
				o["metadataURL"] = "http://sso.example.com/.well-known/openid-configuration"
			}), field: "spec.federation.identityProviders[0].openid.metadataURL"},
		"SAML metadata inline and from a ConfigMap": {reason: "one metadata document", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) {
				delete(p, "openid")
				p["protocol"] = "saml2"
				p["saml2"] = map[string]any{"idpMetadata": map[string]any{"inline": "<x/>",
					"configMapKeyRef": map[string]any{"name": "idp", "key": "metadata.xml"}}, "spKeyPairSecretRef": map[string]any{"name": "sp"}}
			}), field: "spec.federation.identityProviders[0].saml2.idpMetadata"},
		"no mapping": {reason: "Keystone needs a rule", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { p["mapping"] = []any{} }), field: "spec.federation.identityProviders[0].mapping"},
		"a rule without remote": {reason: "a rule matches something", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { rule(p)["remote"] = []any{} }),
			field:  "spec.federation.identityProviders[0].mapping[0].remote"},
		"a rule without local": {reason: "a rule maps to something", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { delete(rule(p), "local") }),
			field:  "spec.federation.identityProviders[0].mapping[0].local"},
		"an empty local entry": {reason: "a local entry names something", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { rule(p)["local"] = []any{map[string]any{}} }),
			field:  "spec.federation.identityProviders[0].mapping[0].local[0]"},
		"an unknown local key": {reason: "Keystone's local schema has no other keys", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { rule(p)["local"] = []any{map[string]any{"role": "admin"}} }),
			field:  "spec.federation.identityProviders[0].mapping[0].local[0].role"},
		"a group by name without its domain": {reason: "group names are unique per domain", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) {
				rule(p)["local"] = []any{map[string]any{"group": map[string]any{"name": "staff"}}}
			}), field: "spec.federation.identityProviders[0].mapping[0].local[0].group.domain"},
		"a remote with any_one_of and not_any_of": {reason: "one match per remote entry", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) {
				rule(p)["remote"] = []any{map[string]any{"type": "OIDC-groups", "any_one_of": []any{"a"}, "not_any_of": []any{"b"}}}
			}), field: "spec.federation.identityProviders[0].mapping[0].remote[0]"},
		"a remote with regex alone": {reason: "regex qualifies any_one_of or not_any_of", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) {
				rule(p)["remote"] = []any{map[string]any{"type": "OIDC-groups", "regex": true}}
			}), field: "spec.federation.identityProviders[0].mapping[0].remote[0].regex"},
		"a remote without type": {reason: "a remote entry names its attribute", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) { rule(p)["remote"] = []any{map[string]any{"any_one_of": []any{"a"}}} }),
			field:  "spec.federation.identityProviders[0].mapping[0].remote[0].type"},
		"a user of an unknown type": {reason: "ephemeral or local", kind: "KeystoneIdentityBackend",
			change: withIdP(func(p map[string]any) {
				rule(p)["local"] = []any{map[string]any{"user": map[string]any{"name": "{0}", "type": "guest"}}}
			}), field: "spec.federation.identityProviders[0].mapping[0].local[0].user.type"},
		"a trusted dashboard over http": {reason: "tokens are posted over TLS only", kind: "KeystoneIdentityBackend",
			change: func(s map[string]any) {
				withIdP(func(map[string]any) {})(s)
				s["federation"].(map[string]any)["trustedDashboards"] = []any{"http://dashboard.example.com/auth/websso/"}
			}, field: "spec.federation.trustedDashboards[0]"},
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

// idp is a valid OpenID Connect provider as a manifest holds it.
func idp() map[string]any {
	return map[string]any{
		"id":       "corp-oidc",
		"protocol": "openid",
		"openid": map[string]any{"issuer": "https://sso.example.com/realms/corp", "clientID": "keystone",
			"clientSecretRef": map[string]any{"name": "oidc", "key": "client-secret"}},
		"mapping": []any{map[string]any{
			"local":  []any{map[string]any{"user": map[string]any{"name": "{0}"}}},
			"remote": []any{map[string]any{"type": "OIDC-preferred_username"}},
		}},
	}
}

// withIdP gives the backend spec a federation of one provider, idp() changed by change.
func withIdP(change func(p map[string]any)) func(s map[string]any) {
	return func(s map[string]any) {
		p := idp()
		change(p)
		s["federation"] = map[string]any{"identityProviders": []any{p}}
	}
}

// rule is the first mapping rule of provider p.
func rule(p map[string]any) map[string]any { return p["mapping"].([]any)[0].(map[string]any) }
