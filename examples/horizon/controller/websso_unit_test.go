package controller_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
	keystonev1alpha1 "github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
)

// idp is an identity provider of a backend's spec.federation (the protocol's own block
// is left out: ProviderChoices does not read it).
func idp(id, protocol, description string) keystonev1alpha1.IdentityProviderSpec {
	return keystonev1alpha1.IdentityProviderSpec{ID: id, Protocol: protocol, Description: description}
}

// backend is a KeystoneIdentityBackend named name declaring idps, whose
// status.identityProviders records registered (id → protocol).
func backend(name string, idps []keystonev1alpha1.IdentityProviderSpec, registered map[string]string) *keystonev1alpha1.KeystoneIdentityBackend {
	b := &keystonev1alpha1.KeystoneIdentityBackend{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if idps != nil {
		b.Spec.Federation = &keystonev1alpha1.FederationSpec{IdentityProviders: idps}
	}
	for _, p := range idps {
		if proto, ok := registered[p.ID]; ok {
			b.Status.IdentityProviders = append(b.Status.IdentityProviders,
				keystonev1alpha1.IdentityProviderStatus{ID: p.ID, MappingID: p.ID + "_mapping", Protocol: proto})
		}
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
	corp := backend("corp", []keystonev1alpha1.IdentityProviderSpec{
		idp("corp-oidc", "openid", "Corporate SSO"), idp("corp-saml", "saml2", ""),
	}, map[string]string{"corp-oidc": "openid", "corp-saml": "saml2"})
	cases := map[string]struct {
		websso   *v1alpha1.WebSSOSpec
		backends map[string]*keystonev1alpha1.KeystoneIdentityBackend
		want     controller.WebSSOProviders
	}{
		"nil websso": {websso: nil, backends: map[string]*keystonev1alpha1.KeystoneIdentityBackend{"corp": corp}},
		"websso not enabled": {
			websso:   &v1alpha1.WebSSOSpec{IdentityBackends: []v1alpha1.IdentityBackendRef{{Name: "corp"}}},
			backends: map[string]*keystonev1alpha1.KeystoneIdentityBackend{"corp": corp},
		},
		"one OIDC and one SAML provider, registered: description or id as label": {
			websso:   websso([]string{"credentials"}, "corp"),
			backends: map[string]*keystonev1alpha1.KeystoneIdentityBackend{"corp": corp},
			want: controller.WebSSOProviders{Choices: []controller.ProviderChoice{
				choice("corp-oidc_openid", "Corporate SSO", "corp-oidc", "openid", "corp"),
				choice("corp-saml_saml2", "corp-saml", "corp-saml", "saml2", "corp"),
			}},
		},
		"a missing backend and one without federation contribute nothing, named with their field": {
			websso: websso([]string{"credentials"}, "gone", "ldap", "corp"),
			backends: map[string]*keystonev1alpha1.KeystoneIdentityBackend{
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
			backends: map[string]*keystonev1alpha1.KeystoneIdentityBackend{"partial": backend("partial",
				[]keystonev1alpha1.IdentityProviderSpec{
					idp("a", "openid", "A"), idp("b", "saml2", "B"), idp("c", "saml2", "C"),
				}, map[string]string{"a": "openid", "c": "openid"})},
			want: controller.WebSSOProviders{
				Choices: []controller.ProviderChoice{choice("a_openid", "A", "a", "openid", "partial")},
				Waiting: []string{"KeystoneIdentityBackend partial (spec.websso.identityBackends[0]) has not registered identity providers b (saml2), c (saml2) in Keystone yet"},
			},
		},
		"a status entry without protocol (mapping created, protocol not yet) is not registered": {
			websso: websso([]string{"credentials"}, "half"),
			backends: map[string]*keystonev1alpha1.KeystoneIdentityBackend{"half": backend("half",
				[]keystonev1alpha1.IdentityProviderSpec{idp("h", "openid", "")}, map[string]string{"h": ""})},
			want: controller.WebSSOProviders{
				Waiting: []string{"KeystoneIdentityBackend half (spec.websso.identityBackends[0]) has not registered identity providers h (openid) in Keystone yet"},
			},
		},
		"a hand-written choice wins over a provider's; an earlier backend's over a later one's": {
			websso: websso([]string{"credentials", "corp-oidc_openid"}, "corp", "again"),
			backends: map[string]*keystonev1alpha1.KeystoneIdentityBackend{"corp": corp, "again": backend("again",
				[]keystonev1alpha1.IdentityProviderSpec{idp("corp-saml", "saml2", "Again")}, map[string]string{"corp-saml": "saml2"})},
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
