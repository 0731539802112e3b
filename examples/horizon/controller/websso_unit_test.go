package controller_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
)

// idp is an identity provider of a backend's spec.federation as the API server returns
// it (the protocol's own block is left out: ProviderChoices does not read it); an empty
// description is absent, as omitempty leaves it.
func idp(id, protocol, description string) map[string]any {
	p := map[string]any{"id": id, "protocol": protocol}
	if description != "" {
		p["description"] = description
	}
	return p
}

// backend is a KeystoneIdentityBackend named name, as an unstructured object,
// declaring idps (no spec.federation when nil), whose status.identityProviders records
// registered (id → protocol; an empty protocol is absent).
func backend(name string, idps []map[string]any, registered map[string]string) *unstructured.Unstructured {
	spec := map[string]any{"keystoneRef": map[string]any{"name": "keystone"}, "domain": name, "driver": "sql"}
	if idps != nil {
		list := make([]any, 0, len(idps))
		for _, p := range idps {
			list = append(list, p)
		}
		spec["federation"] = map[string]any{"identityProviders": list}
	}
	var status []any
	for _, p := range idps {
		id := p["id"].(string)
		if proto, ok := registered[id]; ok {
			st := map[string]any{"id": id, "mappingID": id + "_mapping"}
			if proto != "" {
				st["protocol"] = proto
			}
			status = append(status, st)
		}
	}
	b := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "KeystoneIdentityBackend",
		"metadata": map[string]any{"namespace": "ns", "name": name},
		"spec":     spec,
	}}
	if status != nil {
		b.Object["status"] = map[string]any{"identityProviders": status}
	}
	return b
}

// websso is an enabled websso block with the choices ids (label = id) naming backends.
func websso(choices []string, backends ...string) *v1alpha1.WebSSOSpec {
	w := &v1alpha1.WebSSOSpec{Enabled: true}
	for _, c := range choices {
		w.Choices = append(w.Choices, v1alpha1.WebSSOChoice{ID: c, Label: c})
	}
	for _, b := range backends {
		w.IdentityBackends = append(w.IdentityBackends, v1alpha1.IdentityBackendRef{Name: b})
	}
	return w
}

func choice(id, label, idpID, protocol, backend string) controller.ProviderChoice {
	return controller.ProviderChoice{Choice: settings.Choice{ID: id, Label: label},
		Mapping: settings.IDPMapping{IDP: idpID, Protocol: protocol}, Backend: backend}
}

// ProviderChoices turns the registered providers of the named backends into choices
// in list order, leaves out and reports what is not registered or collides, and derives
// nothing from a websso block that is not enabled.
func TestProviderChoices(t *testing.T) {
	corp := backend("corp", []map[string]any{
		idp("corp-oidc", "openid", "Corporate SSO"), idp("corp-saml", "saml2", ""),
	}, map[string]string{"corp-oidc": "openid", "corp-saml": "saml2"})
	cases := map[string]struct {
		websso   *v1alpha1.WebSSOSpec
		backends map[string]*unstructured.Unstructured
		want     controller.WebSSOProviders
	}{
		"nil websso": {websso: nil, backends: map[string]*unstructured.Unstructured{"corp": corp}},
		"websso not enabled": {
			websso:   &v1alpha1.WebSSOSpec{IdentityBackends: []v1alpha1.IdentityBackendRef{{Name: "corp"}}},
			backends: map[string]*unstructured.Unstructured{"corp": corp},
		},
		"one OIDC and one SAML provider, registered: description or id as label": {
			websso:   websso([]string{"credentials"}, "corp"),
			backends: map[string]*unstructured.Unstructured{"corp": corp},
			want: controller.WebSSOProviders{Choices: []controller.ProviderChoice{
				choice("corp-oidc_openid", "Corporate SSO", "corp-oidc", "openid", "corp"),
				choice("corp-saml_saml2", "corp-saml", "corp-saml", "saml2", "corp"),
			}},
		},
		"a missing backend and one without federation contribute nothing, named with their field": {
			websso: websso([]string{"credentials"}, "gone", "ldap", "corp"),
			backends: map[string]*unstructured.Unstructured{
				"corp": corp, "ldap": backend("ldap", nil, nil)},
			want: controller.WebSSOProviders{
				Choices: []controller.ProviderChoice{
					choice("corp-oidc_openid", "Corporate SSO", "corp-oidc", "openid", "corp"),
					choice("corp-saml_saml2", "corp-saml", "corp-saml", "saml2", "corp"),
				},
				Waiting: []string{
					"KeystoneIdentityBackend gone (spec.websso.identityBackends[0]) does not exist",
					"KeystoneIdentityBackend ldap (spec.websso.identityBackends[1]) declares no identity provider in spec.federation",
				},
			},
		},
		"unregistered providers, and one registered with another protocol than declared, are waited for": {
			websso: websso([]string{"credentials"}, "partial"),
			backends: map[string]*unstructured.Unstructured{"partial": backend("partial",
				[]map[string]any{
					idp("a", "openid", "A"), idp("b", "saml2", "B"), idp("c", "saml2", "C"),
				}, map[string]string{"a": "openid", "c": "openid"})},
			want: controller.WebSSOProviders{
				Choices: []controller.ProviderChoice{choice("a_openid", "A", "a", "openid", "partial")},
				Waiting: []string{"KeystoneIdentityBackend partial (spec.websso.identityBackends[0]) has not registered identity providers b (saml2), c (saml2) in Keystone yet"},
			},
		},
		"a status entry without protocol (mapping created, protocol not yet) is not registered": {
			websso: websso([]string{"credentials"}, "half"),
			backends: map[string]*unstructured.Unstructured{"half": backend("half",
				[]map[string]any{idp("h", "openid", "")}, map[string]string{"h": ""})},
			want: controller.WebSSOProviders{
				Waiting: []string{"KeystoneIdentityBackend half (spec.websso.identityBackends[0]) has not registered identity providers h (openid) in Keystone yet"},
			},
		},
		"a hand-written choice wins over a provider's; an earlier backend's over a later one's": {
			websso: websso([]string{"credentials", "corp-oidc_openid"}, "corp", "again"),
			backends: map[string]*unstructured.Unstructured{"corp": corp, "again": backend("again",
				[]map[string]any{idp("corp-saml", "saml2", "Again")}, map[string]string{"corp-saml": "saml2"})},
			want: controller.WebSSOProviders{
				Choices: []controller.ProviderChoice{choice("corp-saml_saml2", "corp-saml", "corp-saml", "saml2", "corp")},
				Conflicts: []string{
					"identity provider corp-oidc of KeystoneIdentityBackend corp (spec.websso.identityBackends[0]) is left out: its choice id corp-oidc_openid is already the id of spec.websso.choices[1]",
					"identity provider corp-saml of KeystoneIdentityBackend again (spec.websso.identityBackends[1]) is left out: its choice id corp-saml_saml2 is already the id of identity provider corp-saml of KeystoneIdentityBackend corp",
				},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := controller.ProviderChoices(tc.websso, tc.backends)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ProviderChoices (-want +got):\n%s", diff)
			}
		})
	}
}

// A backend whose fields ProviderChoices reads have another JSON type than the Keystone
// API declares (which the API server's schema refuses, but a CRD of another shape or
// version may let through) adds no choice and is reported in Invalid, naming the
// backend, its spec.websso.identityBackends field, the backend's field and both types;
// a later backend still adds its choices. A null field reads as an absent one. Nothing
// panics, and the backend is left as it was.
func TestProviderChoicesMalformedBackend(t *testing.T) {
	corpChoices := []controller.ProviderChoice{
		choice("corp-oidc_openid", "Corporate SSO", "corp-oidc", "openid", "corp"),
		choice("corp-saml_saml2", "corp-saml", "corp-saml", "saml2", "corp"),
	}
	providers := func(o map[string]any) []any {
		return o["spec"].(map[string]any)["federation"].(map[string]any)["identityProviders"].([]any)
	}
	cases := map[string]struct {
		edit    func(o map[string]any)
		invalid string
		waiting string
	}{
		"spec is a string": {edit: func(o map[string]any) { o["spec"] = "federated" },
			invalid: "spec is a string, want an object"},
		"spec.federation is a list": {edit: func(o map[string]any) { o["spec"].(map[string]any)["federation"] = []any{"x"} },
			invalid: "spec.federation is a list, want an object"},
		"spec.federation.identityProviders is an object": {
			edit: func(o map[string]any) {
				o["spec"].(map[string]any)["federation"] = map[string]any{"identityProviders": map[string]any{"id": "x"}}
			},
			invalid: "spec.federation.identityProviders is an object, want a list"},
		"a provider is a string": {edit: func(o map[string]any) { providers(o)[1] = "corp-saml" },
			invalid: "spec.federation.identityProviders[1] is a string, want an object"},
		"a provider's protocol is a number": {edit: func(o map[string]any) { providers(o)[1].(map[string]any)["protocol"] = int64(2) },
			invalid: "spec.federation.identityProviders[1].protocol is a number, want a string"},
		"a provider's description is a boolean": {edit: func(o map[string]any) { providers(o)[0].(map[string]any)["description"] = true },
			invalid: "spec.federation.identityProviders[0].description is a boolean, want a string"},
		"a provider's id is a float": {edit: func(o map[string]any) { providers(o)[0].(map[string]any)["id"] = 1.5 },
			invalid: "spec.federation.identityProviders[0].id is a number, want a string"},
		"status is a list": {edit: func(o map[string]any) { o["status"] = []any{} },
			invalid: "status is a list, want an object"},
		"status.identityProviders is a string": {edit: func(o map[string]any) { o["status"] = map[string]any{"identityProviders": "all"} },
			invalid: "status.identityProviders is a string, want a list"},
		"a status entry's protocol is an object": {
			edit: func(o map[string]any) {
				o["status"].(map[string]any)["identityProviders"].([]any)[0].(map[string]any)["protocol"] = map[string]any{"name": "openid"}
			},
			invalid: "status.identityProviders[0].protocol is an object, want a string"},
		"a null spec.federation is no federation": {edit: func(o map[string]any) { o["spec"].(map[string]any)["federation"] = nil },
			waiting: "KeystoneIdentityBackend bad (spec.websso.identityBackends[0]) declares no identity provider in spec.federation"},
		"a null status is nothing registered": {edit: func(o map[string]any) { o["status"] = nil },
			waiting: "KeystoneIdentityBackend bad (spec.websso.identityBackends[0]) has not registered identity providers bad-oidc (openid), bad-saml (saml2) in Keystone yet"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			bad := backend("bad", []map[string]any{idp("bad-oidc", "openid", "Bad"), idp("bad-saml", "saml2", "")},
				map[string]string{"bad-oidc": "openid", "bad-saml": "saml2"})
			tc.edit(bad.Object)
			before := bad.DeepCopy()
			corp := backend("corp", []map[string]any{idp("corp-oidc", "openid", "Corporate SSO"), idp("corp-saml", "saml2", "")},
				map[string]string{"corp-oidc": "openid", "corp-saml": "saml2"})
			got := controller.ProviderChoices(websso([]string{"credentials"}, "bad", "corp"),
				map[string]*unstructured.Unstructured{"bad": bad, "corp": corp})
			want := controller.WebSSOProviders{Choices: corpChoices}
			if tc.invalid != "" {
				want.Invalid = []string{"KeystoneIdentityBackend bad (spec.websso.identityBackends[0]) adds no choice: its " + tc.invalid}
			}
			if tc.waiting != "" {
				want.Waiting = []string{tc.waiting}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ProviderChoices (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, bad); diff != "" {
				t.Errorf("ProviderChoices changed the backend (-before +after):\n%s", diff)
			}
		})
	}
}

// Apply appends the provider choices after the hand-written ones with their
// WEBSSO_IDP_MAPPING entries, keeps every hand-written mapping, never adds a choice id
// twice, and changes nothing without an enabled websso block.
func TestWebSSOProvidersApply(t *testing.T) {
	p := controller.WebSSOProviders{Choices: []controller.ProviderChoice{
		choice("corp_openid", "Corp", "corp", "openid", "b"),
		choice("oidc", "Taken", "x", "openid", "b"),
	}}
	cases := map[string]struct {
		in, want settings.Settings
	}{
		"no websso": {in: settings.Settings{KeystoneURL: "u"}, want: settings.Settings{KeystoneURL: "u"}},
		"websso disabled": {
			in:   settings.Settings{WebSSO: &settings.WebSSO{Choices: []settings.Choice{{ID: "credentials", Label: "c"}}}},
			want: settings.Settings{WebSSO: &settings.WebSSO{Choices: []settings.Choice{{ID: "credentials", Label: "c"}}}},
		},
		"appended after the hand-written choices": {
			in: settings.Settings{WebSSO: &settings.WebSSO{Enabled: true,
				Choices:    []settings.Choice{{ID: "credentials", Label: "c"}, {ID: "oidc", Label: "OIDC"}},
				IDPMapping: map[string]settings.IDPMapping{"oidc": {IDP: "hand", Protocol: "openid"}}}},
			want: settings.Settings{WebSSO: &settings.WebSSO{Enabled: true,
				Choices: []settings.Choice{{ID: "credentials", Label: "c"}, {ID: "oidc", Label: "OIDC"}, {ID: "corp_openid", Label: "Corp"}},
				IDPMapping: map[string]settings.IDPMapping{"oidc": {IDP: "hand", Protocol: "openid"},
					"corp_openid": {IDP: "corp", Protocol: "openid"}}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.in
			p.Apply(&got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
		})
	}
}
