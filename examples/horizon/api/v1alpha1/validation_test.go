package v1alpha1_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/admit/admittest"
	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
)

// createSpec creates a Horizon with the given desired state in namespace ns, as a
// user's manifest would reach the API server: untyped JSON, with strict field
// validation so an unknown field is an error rather than silently pruned.
func createSpec(ctx context.Context, ns string, spec map[string]any) (client.ObjectKey, error) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1alpha1.GroupVersion.String(),
		"kind":       "Horizon",
		"metadata":   map[string]any{"generateName": "horizon-", "namespace": ns},
		"spec":       spec,
	}}
	err := admittest.CreateStrict(ctx, env.Client, u)
	return client.ObjectKeyFromObject(u), err
}

// TestSamples creates the sample Horizons of config/samples and checks the desired state
// the API server stores, defaults included.
func TestSamples(t *testing.T) {
	tests := map[string]v1alpha1.HorizonSpec{
		"horizon_v1alpha1_horizon_minimal.yaml": {
			Image:            "quay.io/openstack.kolla/horizon:2025.1-ubuntu-noble",
			Replicas:         ptr.To[int32](1),
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			SecretKey: v1alpha1.SecretKeySpec{
				RemoteKey:       "openstack/horizon/secret-key",
				Property:        "secret_key",
				RefreshInterval: &metav1.Duration{Duration: time.Hour},
			},
			TimeZone: "UTC",
		},
		"horizon_v1alpha1_horizon_websso.yaml": {
			Image:            "quay.io/openstack.kolla/horizon:2025.1-ubuntu-noble",
			Replicas:         ptr.To[int32](1),
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			SecretKey: v1alpha1.SecretKeySpec{
				RemoteKey:       "openstack/horizon/secret-key",
				Property:        "secret_key",
				RefreshInterval: &metav1.Duration{Duration: time.Hour},
			},
			TimeZone: "UTC",
			WebSSO: &v1alpha1.WebSSOSpec{
				Enabled:          true,
				Choices:          []v1alpha1.WebSSOChoice{{ID: "credentials", Label: "Keystone credentials"}},
				InitialChoice:    "credentials",
				KeystoneURL:      "https://keystone.example.com/v3",
				IdentityBackends: []v1alpha1.IdentityBackendRef{{Name: "corp-sso"}},
			},
		},
		"horizon_v1alpha1_horizon_full.yaml": {
			Image:            "quay.io/openstack.kolla/horizon:2025.1-ubuntu-noble",
			Replicas:         ptr.To[int32](2),
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			SecretStoreRef:   &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "openstack-store"},
			SecretKey: v1alpha1.SecretKeySpec{
				RemoteKey:       "openstack/horizon/secret-key",
				Property:        "key",
				RefreshInterval: &metav1.Duration{Duration: 30 * time.Minute},
			},
			MemcachedServers: []string{"memcached-0.memcached.openstack.svc:11211", "memcached-1.memcached.openstack.svc:11211"},
			TimeZone:         "Europe/Berlin",
			WebSSO: &v1alpha1.WebSSOSpec{
				Enabled: true,
				Choices: []v1alpha1.WebSSOChoice{
					{ID: "credentials", Label: "Keystone credentials"},
					{ID: "oidc", Label: "Company single sign-on"},
				},
				InitialChoice: "oidc",
				IDPMapping:    map[string]v1alpha1.IDPMapping{"oidc": {IDP: "company-idp", Protocol: "openid"}},
				KeystoneURL:   "https://keystone.example.com/v3",
			},
			MultiDomain: &v1alpha1.MultiDomainSpec{
				Enabled:       true,
				DefaultDomain: "Default",
				Dropdown:      true,
				Domains: []v1alpha1.DomainChoice{
					{ID: "Default", Label: "Default"},
					{ID: "customers", Label: "Customers"},
				},
			},
			ExtraConfig: map[string]string{"SESSION_TIMEOUT": "3600", "OPENSTACK_ENDPOINT_TYPE": "'internalURL'"},
			Gateway: &v1alpha1.GatewaySpec{
				ParentRef: v1alpha1.GatewayParentRef{Name: "public", Namespace: "gateway-system", SectionName: "https"},
				Hostname:  "dashboard.example.com",
				Path:      "/",
			},
			Autoscaling: &commonv1.AutoscalingSpec{
				MinReplicas: ptr.To[int32](2), MaxReplicas: 6, TargetCPUUtilization: ptr.To[int32](70),
			},
			VPA: &v1alpha1.VPASpec{Enabled: true, UpdateMode: v1alpha1.VPAUpdateModeOff},
			NetworkPolicy: &v1alpha1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{"kubernetes.io/metadata.name": "gateway-system"},
				}}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(8080))}},
			}}},
			TargetClusterRef: &commonv1.TargetClusterRefSpec{Name: "region-one"},
		},
	}
	ns := env.Namespace(t)
	for file, want := range tests {
		t.Run(file, func(t *testing.T) {
			ctx := context.Background()
			u, err := admittest.CreateFile(ctx, env.Client, ns, "../../config/samples/"+file, "")
			if err != nil {
				t.Fatal(err)
			}
			got := &v1alpha1.Horizon{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				t.Fatalf("get: %v", err)
			}
			if diff := cmp.Diff(want, got.Spec); diff != "" {
				t.Errorf("stored spec of %s (-want +got):\n%s", file, diff)
			}
		})
	}
}

// minimalSpec is the smallest valid desired state; each case of TestAdmission changes
// one part.
func minimalSpec() map[string]any {
	return map[string]any{
		"image":            "quay.io/openstack.kolla/horizon:2025.1-ubuntu-noble",
		"keystoneEndpoint": "http://keystone.openstack.svc:5000/v3",
		"secretKey":        map[string]any{"remoteKey": "openstack/horizon/secret-key"},
	}
}

// TestAdmission writes Horizons that differ from the minimal one in one part and checks
// what the API server refuses, with which field path and reason, and what it accepts
// and defaults.
func TestAdmission(t *testing.T) {
	tests := map[string]struct {
		// edit changes the minimal desired state.
		edit func(spec map[string]any)
		// wantErr lists substrings of the API server's refusal; empty means accepted.
		wantErr []string
		// check inspects the stored object when accepted.
		check func(t *testing.T, h *v1alpha1.Horizon)
	}{
		"missing image": {
			edit:    func(s map[string]any) { delete(s, "image") },
			wantErr: []string{"spec.image", "Required value"},
		},
		"empty image": {
			edit:    func(s map[string]any) { s["image"] = "" },
			wantErr: []string{"spec.image", "at least 1 chars"},
		},
		"negative replicas": {
			edit:    func(s map[string]any) { s["replicas"] = -1 },
			wantErr: []string{"spec.replicas", "greater than or equal to 0"},
		},
		"zero replicas": {
			edit: func(s map[string]any) { s["replicas"] = 0 },
			check: func(t *testing.T, h *v1alpha1.Horizon) {
				if h.Spec.Replicas == nil || *h.Spec.Replicas != 0 {
					t.Errorf("replicas = %v, want 0 kept", h.Spec.Replicas)
				}
			},
		},
		"missing keystoneEndpoint": {
			edit:    func(s map[string]any) { delete(s, "keystoneEndpoint") },
			wantErr: []string{"spec.keystoneEndpoint", "Required value"},
		},
		"keystoneEndpoint with another scheme": {
			edit:    func(s map[string]any) { s["keystoneEndpoint"] = "ftp://keystone:5000/v3" },
			wantErr: []string{"spec.keystoneEndpoint", "must be an http:// or https:// URL with a host"},
		},
		"keystoneEndpoint without a scheme": {
			edit:    func(s map[string]any) { s["keystoneEndpoint"] = "keystone.openstack.svc:5000/v3" },
			wantErr: []string{"spec.keystoneEndpoint", "must be an http:// or https:// URL with a host"},
		},
		"keystoneEndpoint without a host": {
			edit:    func(s map[string]any) { s["keystoneEndpoint"] = "https:///v3" },
			wantErr: []string{"spec.keystoneEndpoint", "must be an http:// or https:// URL with a host"},
		},
		"https keystoneEndpoint": {
			edit: func(s map[string]any) { s["keystoneEndpoint"] = "https://keystone.openstack.svc:5000/v3" },
		},
		"missing secretKey": {
			edit:    func(s map[string]any) { delete(s, "secretKey") },
			wantErr: []string{"spec.secretKey", "Required value"},
		},
		"secretKey without remoteKey": {
			edit:    func(s map[string]any) { s["secretKey"] = map[string]any{"property": "key"} },
			wantErr: []string{"spec.secretKey.remoteKey", "Required value"},
		},
		"secretKey refreshInterval 0 is kept": {
			edit: func(s map[string]any) {
				s["secretKey"] = map[string]any{"remoteKey": "k", "refreshInterval": "0s"}
			},
			check: func(t *testing.T, h *v1alpha1.Horizon) {
				if ri := h.Spec.SecretKey.RefreshInterval; ri == nil || ri.Duration != 0 {
					t.Errorf("refreshInterval = %v, want 0s kept", ri)
				}
			},
		},
		"unknown secret store kind": {
			edit:    func(s map[string]any) { s["secretStoreRef"] = map[string]any{"kind": "VaultStore", "name": "x"} },
			wantErr: []string{"spec.secretStoreRef.kind", `Unsupported value: "VaultStore"`},
		},
		"secret store kind defaults to ClusterSecretStore": {
			edit: func(s map[string]any) { s["secretStoreRef"] = map[string]any{"name": "openbao-cluster-store"} },
			check: func(t *testing.T, h *v1alpha1.Horizon) {
				want := &commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: "openbao-cluster-store"}
				if diff := cmp.Diff(want, h.Spec.SecretStoreRef); diff != "" {
					t.Errorf("secretStoreRef (-want +got):\n%s", diff)
				}
			},
		},
		"target cluster without name": {
			edit:    func(s map[string]any) { s["targetClusterRef"] = map[string]any{} },
			wantErr: []string{"spec.targetClusterRef.name", "Required value"},
		},
		"memcached server without port": {
			edit:    func(s map[string]any) { s["memcachedServers"] = []any{"memcached.openstack.svc"} },
			wantErr: []string{"spec.memcachedServers[0]", "should match"},
		},
		"memcached server with port out of range": {
			edit:    func(s map[string]any) { s["memcachedServers"] = []any{"memcached:11211", "memcached:65536"} },
			wantErr: []string{"spec.memcachedServers[1]", "should match"},
		},
		"memcached server with port 0": {
			edit:    func(s map[string]any) { s["memcachedServers"] = []any{"memcached:0"} },
			wantErr: []string{"spec.memcachedServers[0]", "should match"},
		},
		"memcached server given as URL": {
			edit:    func(s map[string]any) { s["memcachedServers"] = []any{"memcache://memcached:11211"} },
			wantErr: []string{"spec.memcachedServers[0]", "should match"},
		},
		"memcached servers by name, IPv4 and IPv6": {
			edit: func(s map[string]any) {
				s["memcachedServers"] = []any{"memcached-0.memcached.openstack.svc:11211", "10.0.0.5:65535", "[fd00::1]:1"}
			},
		},
		"empty timeZone": {
			edit:    func(s map[string]any) { s["timeZone"] = "" },
			wantErr: []string{"spec.timeZone", "at least 1 chars"},
		},
		"websso enabled without choices": {
			edit:    func(s map[string]any) { s["websso"] = map[string]any{"enabled": true} },
			wantErr: []string{"spec.websso.choices", "must list at least one choice when websso is enabled"},
		},
		"websso enabled with an empty choice list": {
			edit:    func(s map[string]any) { s["websso"] = map[string]any{"enabled": true, "choices": []any{}} },
			wantErr: []string{"spec.websso.choices", "must list at least one choice when websso is enabled"},
		},
		"websso disabled without choices": {
			edit: func(s map[string]any) { s["websso"] = map[string]any{"enabled": false} },
		},
		"websso initialChoice not among the choices": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{
					"enabled":       true,
					"choices":       []any{map[string]any{"id": "credentials", "label": "Keystone"}},
					"initialChoice": "saml",
				}
			},
			wantErr: []string{"spec.websso.initialChoice", `"saml" is not the id of any of the choices`},
		},
		"websso initialChoice without choices": {
			edit:    func(s map[string]any) { s["websso"] = map[string]any{"initialChoice": "oidc"} },
			wantErr: []string{"spec.websso.initialChoice", `"oidc" is not the id of any of the choices`},
		},
		"websso idpMapping for a choice that is not offered": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{
					"enabled":    true,
					"choices":    []any{map[string]any{"id": "credentials", "label": "Keystone"}},
					"idpMapping": map[string]any{"oidc": map[string]any{"idp": "idp", "protocol": "openid"}},
				}
			},
			wantErr: []string{"spec.websso.idpMapping", "every key must be the id of one of the choices"},
		},
		"websso idpMapping without protocol": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{
					"choices":    []any{map[string]any{"id": "oidc", "label": "SSO"}},
					"idpMapping": map[string]any{"oidc": map[string]any{"idp": "idp"}},
				}
			},
			wantErr: []string{"spec.websso.idpMapping.oidc.protocol", "Required value"},
		},
		"websso choice id with upper case": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{"choices": []any{map[string]any{"id": "OIDC", "label": "SSO"}}}
			},
			wantErr: []string{"spec.websso.choices[0].id", "should match '^[a-z0-9_]+$'"},
		},
		"websso choice without label": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{"choices": []any{map[string]any{"id": "oidc"}}}
			},
			wantErr: []string{"spec.websso.choices[0].label", "Required value"},
		},
		"websso duplicate choice id": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{"choices": []any{
					map[string]any{"id": "oidc", "label": "a"}, map[string]any{"id": "oidc", "label": "b"},
				}}
			},
			wantErr: []string{"spec.websso.choices[1]", "Duplicate value"},
		},
		"websso keystoneURL without scheme": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{"keystoneURL": "keystone.example.com/v3"}
			},
			wantErr: []string{"spec.websso.keystoneURL", "must be an http:// or https:// URL with a host"},
		},
		"websso identityBackends name with upper case": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{"identityBackends": []any{map[string]any{"name": "Corp"}}}
			},
			wantErr: []string{"spec.websso.identityBackends[0].name", "should match"},
		},
		"websso identityBackends entry without name": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{"identityBackends": []any{map[string]any{}}}
			},
			wantErr: []string{"spec.websso.identityBackends[0].name", "Required value"},
		},
		"websso identityBackends naming a backend twice": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{"identityBackends": []any{map[string]any{"name": "corp"}, map[string]any{"name": "corp"}}}
			},
			wantErr: []string{"spec.websso.identityBackends[1]", "Duplicate value"},
		},
		"websso identityBackends with a namespace": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{"identityBackends": []any{map[string]any{"name": "corp", "namespace": "other"}}}
			},
			wantErr: []string{`unknown field "spec.websso.identityBackends[0].namespace"`},
		},
		"websso identityBackends with more than eight backends": {
			edit: func(s map[string]any) {
				var refs []any
				for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
					refs = append(refs, map[string]any{"name": n})
				}
				s["websso"] = map[string]any{"identityBackends": refs}
			},
			wantErr: []string{"spec.websso.identityBackends", "must have at most 8 items"},
		},
		"websso identityBackends with the credentials choice": {
			edit: func(s map[string]any) {
				s["websso"] = map[string]any{"enabled": true, "initialChoice": "credentials",
					"choices":          []any{map[string]any{"id": "credentials", "label": "Keystone Credentials"}},
					"identityBackends": []any{map[string]any{"name": "corp-sso"}, map[string]any{"name": "partners.example"}}}
			},
			check: func(t *testing.T, h *v1alpha1.Horizon) {
				want := []v1alpha1.IdentityBackendRef{{Name: "corp-sso"}, {Name: "partners.example"}}
				if diff := cmp.Diff(want, h.Spec.WebSSO.IdentityBackends); diff != "" {
					t.Errorf("spec.websso.identityBackends (-want +got):\n%s", diff)
				}
			},
		},
		"multiDomain dropdown without domains": {
			edit:    func(s map[string]any) { s["multiDomain"] = map[string]any{"enabled": true, "dropdown": true} },
			wantErr: []string{"spec.multiDomain.domains", "must list at least one domain when dropdown is true"},
		},
		"multiDomain defaultDomain defaults to Default": {
			edit: func(s map[string]any) { s["multiDomain"] = map[string]any{"enabled": true} },
			check: func(t *testing.T, h *v1alpha1.Horizon) {
				if h.Spec.MultiDomain.DefaultDomain != "Default" {
					t.Errorf("defaultDomain = %q, want Default", h.Spec.MultiDomain.DefaultDomain)
				}
			},
		},
		"extraConfig key that is no Python identifier": {
			edit: func(s map[string]any) {
				s["extraConfig"] = map[string]any{"SESSION_TIMEOUT": "3600", "session-timeout": "1", "1ST": "2"}
			},
			wantErr: []string{"spec.extraConfig", "keys must be Python identifiers"},
		},
		"extraConfig SECRET_KEY": {
			edit:    func(s map[string]any) { s["extraConfig"] = map[string]any{"SECRET_KEY": "'s3cr3t-value'"} },
			wantErr: []string{"spec.extraConfig", "must not set SECRET_KEY: it comes from spec.secretKey"},
		},
		"extraConfig lower-case and underscore keys": {
			edit: func(s map[string]any) { s["extraConfig"] = map[string]any{"_private": "1", "lower_case2": "True"} },
		},
		"gateway without hostname": {
			edit:    func(s map[string]any) { s["gateway"] = map[string]any{"parentRef": map[string]any{"name": "public"}} },
			wantErr: []string{"spec.gateway.hostname", "Required value"},
		},
		"gateway without parentRef name": {
			edit: func(s map[string]any) {
				s["gateway"] = map[string]any{"parentRef": map[string]any{}, "hostname": "dashboard.example.com"}
			},
			wantErr: []string{"spec.gateway.parentRef.name", "Required value"},
		},
		"gateway hostname with upper case": {
			edit: func(s map[string]any) {
				s["gateway"] = map[string]any{"parentRef": map[string]any{"name": "public"}, "hostname": "Dashboard.example.com"}
			},
			wantErr: []string{"spec.gateway.hostname", "should match"},
		},
		"gateway relative path": {
			edit: func(s map[string]any) {
				s["gateway"] = map[string]any{
					"parentRef": map[string]any{"name": "public"}, "hostname": "dashboard.example.com", "path": "dashboard",
				}
			},
			wantErr: []string{"spec.gateway.path", "should match '^/'"},
		},
		"gateway path defaults to /": {
			edit: func(s map[string]any) {
				s["gateway"] = map[string]any{"parentRef": map[string]any{"name": "public"}, "hostname": "dashboard.example.com"}
			},
			check: func(t *testing.T, h *v1alpha1.Horizon) {
				if h.Spec.Gateway.Path != "/" {
					t.Errorf("gateway.path = %q, want /", h.Spec.Gateway.Path)
				}
			},
		},
		"autoscaling minReplicas above maxReplicas": {
			edit:    func(s map[string]any) { s["autoscaling"] = map[string]any{"minReplicas": 3, "maxReplicas": 2} },
			wantErr: []string{"spec.autoscaling.minReplicas", "must not exceed maxReplicas"},
		},
		"autoscaling without maxReplicas": {
			edit:    func(s map[string]any) { s["autoscaling"] = map[string]any{"minReplicas": 1} },
			wantErr: []string{"spec.autoscaling.maxReplicas", "Required value"},
		},
		"autoscaling minReplicas 0": {
			edit:    func(s map[string]any) { s["autoscaling"] = map[string]any{"minReplicas": 0, "maxReplicas": 2} },
			wantErr: []string{"spec.autoscaling.minReplicas", "greater than or equal to 1"},
		},
		"autoscaling target above 100": {
			edit: func(s map[string]any) {
				s["autoscaling"] = map[string]any{"maxReplicas": 2, "targetCPUUtilization": 101}
			},
			wantErr: []string{"spec.autoscaling.targetCPUUtilization", "less than or equal to 100"},
		},
		"autoscaling defaults": {
			edit: func(s map[string]any) { s["autoscaling"] = map[string]any{"maxReplicas": 1} },
			check: func(t *testing.T, h *v1alpha1.Horizon) {
				want := &commonv1.AutoscalingSpec{MinReplicas: ptr.To[int32](1), MaxReplicas: 1, TargetCPUUtilization: ptr.To[int32](80)}
				if diff := cmp.Diff(want, h.Spec.Autoscaling); diff != "" {
					t.Errorf("autoscaling (-want +got):\n%s", diff)
				}
			},
		},
		"vpa unknown updateMode": {
			edit:    func(s map[string]any) { s["vpa"] = map[string]any{"enabled": true, "updateMode": "Auto"} },
			wantErr: []string{"spec.vpa.updateMode", `Unsupported value: "Auto"`},
		},
		"vpa updateMode defaults to Off": {
			edit: func(s map[string]any) { s["vpa"] = map[string]any{"enabled": true} },
			check: func(t *testing.T, h *v1alpha1.Horizon) {
				if h.Spec.VPA.UpdateMode != v1alpha1.VPAUpdateModeOff {
					t.Errorf("vpa.updateMode = %q, want Off", h.Spec.VPA.UpdateMode)
				}
			},
		},
		"vpa InPlaceOrRecreate": {
			edit: func(s map[string]any) { s["vpa"] = map[string]any{"enabled": true, "updateMode": "InPlaceOrRecreate"} },
		},
		"networkPolicy with an empty ingress list": {
			edit:    func(s map[string]any) { s["networkPolicy"] = map[string]any{"ingress": []any{}} },
			wantErr: []string{"spec.networkPolicy.ingress", "at least 1 items"},
		},
		"networkPolicy without ingress": {
			edit:    func(s map[string]any) { s["networkPolicy"] = map[string]any{} },
			wantErr: []string{"spec.networkPolicy.ingress", "Required value"},
		},
		"networkPolicy rule that admits everything": {
			edit: func(s map[string]any) { s["networkPolicy"] = map[string]any{"ingress": []any{map[string]any{}}} },
			check: func(t *testing.T, h *v1alpha1.Horizon) {
				if len(h.Spec.NetworkPolicy.Ingress) != 1 {
					t.Errorf("networkPolicy.ingress = %v, want the one empty rule kept", h.Spec.NetworkPolicy.Ingress)
				}
			},
		},
		"unknown field": {
			edit:    func(s map[string]any) { s["replica"] = 2 },
			wantErr: []string{`unknown field "spec.replica"`},
		},
	}
	ns := env.Namespace(t)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			spec := minimalSpec()
			tc.edit(spec)
			key, err := createSpec(ctx, ns, spec)
			if len(tc.wantErr) > 0 {
				if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
					t.Fatalf("create: got %v, want the API server to refuse it", err)
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
			got := &v1alpha1.Horizon{}
			if err := env.Client.Get(ctx, key, got); err != nil {
				t.Fatalf("get: %v", err)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

// TestAdmissionErrorsKeepSecretsOut checks that a refused SECRET_KEY in extraConfig is
// not echoed back in the API server's error.
func TestAdmissionErrorsKeepSecretsOut(t *testing.T) {
	spec := minimalSpec()
	spec["extraConfig"] = map[string]any{"SECRET_KEY": "'s3cr3t-value'"}
	_, err := createSpec(context.Background(), env.Namespace(t), spec)
	if err == nil {
		t.Fatal("create succeeded, want a refusal")
	}
	if strings.Contains(err.Error(), "s3cr3t-value") {
		t.Errorf("error %q contains the secret value", err)
	}
}

// TestPrinterColumns asks the API server for the table kubectl get prints and checks
// its columns and the values a Horizon with a status shows in them.
func TestPrinterColumns(t *testing.T) {
	ctx := context.Background()
	h := &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Name: "columns", Namespace: env.Namespace(t)},
		Spec:       fullSpec(),
	}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatalf("create: %v", err)
	}
	h.Status = v1alpha1.HorizonStatus{
		Conditions: []metav1.Condition{{
			Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now(),
		}},
		Endpoint: "http://columns." + h.Namespace + ".svc:8080/",
	}
	if err := env.Client.Status().Update(ctx, h); err != nil {
		t.Fatalf("status update: %v", err)
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.CoreV1().RESTClient().Get().
		AbsPath("/apis", v1alpha1.GroupVersion.Group, v1alpha1.GroupVersion.Version, "namespaces", h.Namespace, "horizons", h.Name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(ctx)
	if err != nil {
		t.Fatalf("get table: %v", err)
	}
	table := &metav1.Table{}
	if err := json.Unmarshal(raw, table); err != nil {
		t.Fatalf("decode table: %v", err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Ready", "Endpoint", "Age"}, names); diff != "" {
		t.Fatalf("columns (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	if diff := cmp.Diff([]any{"columns", "True", h.Status.Endpoint}, cells[:3]); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
}
