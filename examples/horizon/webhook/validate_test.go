package webhook_test

import (
	"context"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/admit/admittest"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/webhook"
)

func forbidden(field, detail string) metav1.StatusCause {
	return metav1.StatusCause{Type: metav1.CauseTypeForbidden, Field: field, Message: "Forbidden: " + detail}
}

func invalidSetting(field, renderText string) metav1.StatusCause {
	return metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: field,
		Message: "Invalid value: invalid Horizon settings: " + renderText}
}

func withMultiDomain(h *v1alpha1.Horizon) {
	h.Spec.MultiDomain = &v1alpha1.MultiDomainSpec{Enabled: true, DefaultDomain: "Default", Dropdown: true,
		Domains: []v1alpha1.DomainChoice{{ID: "Default", Label: "Default"}, {ID: "customers", Label: "Customers"}}}
}

func withNetworkPolicy(rules ...networkingv1.NetworkPolicyIngressRule) func(*v1alpha1.Horizon) {
	return func(h *v1alpha1.Horizon) { h.Spec.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Ingress: rules} }
}

// TestValidateCreate checks every refusal with its field paths, that all problems are
// reported at once in order of field path, and what stays admitted.
func TestValidateCreate(t *testing.T) {
	const alsoChoices = "also set by spec.websso.choices; remove one of them"
	admittest.CreateTable(t, webhook.Validator{}, map[string]admittest.Case[*v1alpha1.Horizon]{
		"the minimal Horizon": {Obj: minimal()},
		"single sign-on, domains, a Gateway, a NetworkPolicy and unrelated extraConfig": {
			Obj: minimal(withWebSSO, withMultiDomain, withGateway("gateway-system"),
				withNetworkPolicy(networkingv1.NetworkPolicyIngressRule{}),
				withExtra("SESSION_TIMEOUT", "3600", "OPENSTACK_ENDPOINT_TYPE", "'internalURL'")),
		},
		"extraConfig sets what websso.choices sets": {
			Obj:  minimal(withWebSSO, withExtra("WEBSSO_CHOICES", `(("x", "y"),)`)),
			Want: []metav1.StatusCause{forbidden("spec.extraConfig.WEBSSO_CHOICES", alsoChoices)},
		},
		"every conflict at once, sorted": {
			Obj: minimal(withWebSSO, withMultiDomain, func(h *v1alpha1.Horizon) {
				h.Spec.WebSSO.InitialChoice = "oidc"
				h.Spec.WebSSO.KeystoneURL = "https://keystone.example.com/v3"
				h.Spec.WebSSO.IDPMapping = map[string]v1alpha1.IDPMapping{"oidc": {IDP: "idp", Protocol: "openid"}}
			}, withExtra(
				"WEBSSO_USE_HTTP_REFERER", "True",
				"OPENSTACK_KEYSTONE_DOMAIN_CHOICES", "()",
				"SESSION_TIMEOUT", "3600",
				"WEBSSO_IDP_MAPPING", "{}",
				"OPENSTACK_KEYSTONE_DEFAULT_DOMAIN", "'x'",
				"WEBSSO_ENABLED", "False",
				"OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN", "False",
				"WEBSSO_KEYSTONE_URL", "'x'",
				"OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT", "False",
				"WEBSSO_INITIAL_CHOICE", "'x'",
				"WEBSSO_CHOICES", "()",
			)),
			Want: []metav1.StatusCause{
				forbidden("spec.extraConfig.OPENSTACK_KEYSTONE_DEFAULT_DOMAIN", "also set by spec.multiDomain.defaultDomain; remove one of them"),
				forbidden("spec.extraConfig.OPENSTACK_KEYSTONE_DOMAIN_CHOICES", "also set by spec.multiDomain.domains; remove one of them"),
				forbidden("spec.extraConfig.OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN", "also set by spec.multiDomain.dropdown; remove one of them"),
				forbidden("spec.extraConfig.OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT", "also set by spec.multiDomain.enabled; remove one of them"),
				forbidden("spec.extraConfig.WEBSSO_CHOICES", alsoChoices),
				forbidden("spec.extraConfig.WEBSSO_ENABLED", "also set by spec.websso.enabled; remove one of them"),
				forbidden("spec.extraConfig.WEBSSO_IDP_MAPPING", "also set by spec.websso.idpMapping; remove one of them"),
				forbidden("spec.extraConfig.WEBSSO_INITIAL_CHOICE", "also set by spec.websso.initialChoice; remove one of them"),
				forbidden("spec.extraConfig.WEBSSO_KEYSTONE_URL", "also set by spec.websso.keystoneURL; remove one of them"),
				forbidden("spec.extraConfig.WEBSSO_USE_HTTP_REFERER", "also set by spec.websso.enabled; remove one of them"),
			},
		},
		"the settings of disabled blocks are free": {
			Obj: minimal(withWebSSO, withMultiDomain, func(h *v1alpha1.Horizon) {
				h.Spec.WebSSO.Enabled = false
				h.Spec.MultiDomain.Enabled = false
			}, withExtra("WEBSSO_CHOICES", "()", "OPENSTACK_KEYSTONE_DOMAIN_CHOICES", "()")),
		},
		"a setting its empty field leaves out is free": {
			Obj: minimal(withWebSSO, withMultiDomain, func(h *v1alpha1.Horizon) {
				h.Spec.MultiDomain.Dropdown = false
				h.Spec.MultiDomain.Domains = nil
			}, withExtra("WEBSSO_KEYSTONE_URL", "'https://keystone.example.com/v3'",
				"OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN", "True")),
		},
		"identity backends next to extraConfig WEBSSO_CHOICES and WEBSSO_IDP_MAPPING": {
			Obj: minimal(withWebSSO, withIdentityBackends("corp"),
				withExtra("WEBSSO_IDP_MAPPING", "{}", "SESSION_TIMEOUT", "3600")),
			Want: []metav1.StatusCause{
				forbidden("spec.extraConfig.WEBSSO_IDP_MAPPING", "also set by spec.websso.identityBackends; remove one of them"),
			},
		},
		"identity backends of a disabled websso leave extraConfig free": {
			Obj: minimal(withWebSSO, withIdentityBackends("corp"), func(h *v1alpha1.Horizon) { h.Spec.WebSSO.Enabled = false },
				withExtra("WEBSSO_IDP_MAPPING", "{}", "WEBSSO_CHOICES", "()")),
		},
		"identity backend names that are not DNS subdomain names, or repeat": {
			Obj: minimal(withWebSSO, withIdentityBackends("corp", "Corp", "corp", "")),
			Want: []metav1.StatusCause{
				{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.websso.identityBackends[1].name",
					Message: `Invalid value: "Corp": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
				{Type: metav1.CauseTypeFieldValueDuplicate, Field: "spec.websso.identityBackends[2].name", Message: `Duplicate value: "corp"`},
				{Type: metav1.CauseTypeFieldValueInvalid, Field: "spec.websso.identityBackends[3].name",
					Message: `Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
			},
		},
		"a NetworkPolicy without ingress rules": {
			Obj: minimal(withNetworkPolicy()),
			Want: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.networkPolicy.ingress",
				Message: "Required value: at least one rule is required: an empty list would refuse all traffic to the dashboard"}},
		},
		"an empty keystoneEndpoint": {
			Obj: minimal(func(h *v1alpha1.Horizon) { h.Spec.KeystoneEndpoint = "" }),
			Want: []metav1.StatusCause{invalidSetting("spec.keystoneEndpoint",
				`Settings.KeystoneURL "" is empty: OPENSTACK_KEYSTONE_URL is required`)},
		},
		"strings that are not UTF-8": {
			Obj: minimal(withWebSSO, withMultiDomain, func(h *v1alpha1.Horizon) {
				h.Spec.Image = "horizon:\xff"
				h.Spec.TimeZone = "Europe/\xff"
				h.Spec.WebSSO.Choices[1].Label = "\xff"
				h.Spec.WebSSO.KeystoneURL = "https://\xff"
				h.Spec.MultiDomain.DefaultDomain = "\xff"
				h.Spec.MultiDomain.Domains[1].Label = "\xff"
			}),
			Want: []metav1.StatusCause{
				invalidSetting("spec.image", `Settings.Image "horizon:\xff" is not valid UTF-8`),
				invalidSetting("spec.multiDomain.defaultDomain", `Settings.MultiDomain.DefaultDomain "\xff" is not valid UTF-8`),
				invalidSetting("spec.multiDomain.domains[1].label", `Settings.MultiDomain.Domains[1].Label "\xff" is not valid UTF-8`),
				invalidSetting("spec.timeZone", `Settings.TimeZone "Europe/\xff" is not valid UTF-8`),
				invalidSetting("spec.websso.choices[1].label", `Settings.WebSSO.Choices[1].Label "\xff" is not valid UTF-8`),
				invalidSetting("spec.websso.keystoneURL", `Settings.WebSSO.KeystoneURL "https://\xff" is not valid UTF-8`),
			},
		},
		"an empty memcached server": {
			Obj: minimal(func(h *v1alpha1.Horizon) { h.Spec.MemcachedServers = []string{"memcached:11211", ""} }),
			Want: []metav1.StatusCause{invalidSetting("spec.memcachedServers[1]",
				`Settings.MemcachedServers[1] "" is empty: want host:port`)},
		},
		"single sign-on that cannot be rendered": {
			Obj: minimal(withWebSSO, func(h *v1alpha1.Horizon) {
				h.Spec.WebSSO.Choices[1].ID = "credentials"
				h.Spec.WebSSO.InitialChoice = "saml"
				h.Spec.WebSSO.IDPMapping = map[string]v1alpha1.IDPMapping{"credentials": {}}
			}),
			Want: []metav1.StatusCause{
				invalidSetting("spec.websso.choices[1].id", `Settings.WebSSO.Choices[1].ID "credentials" repeats an earlier choice ID`),
				invalidSetting("spec.websso.idpMapping[credentials].idp", `Settings.WebSSO.IDPMapping["credentials"].IDP "" is empty`),
				invalidSetting("spec.websso.idpMapping[credentials].protocol", `Settings.WebSSO.IDPMapping["credentials"].Protocol "" is empty`),
				invalidSetting("spec.websso.initialChoice", `Settings.WebSSO.InitialChoice "saml" is not the ID of any of Settings.WebSSO.Choices`),
			},
		},
		"a domain without an id": {
			Obj: minimal(withMultiDomain, func(h *v1alpha1.Horizon) { h.Spec.MultiDomain.Domains[0].ID = "" }),
			Want: []metav1.StatusCause{invalidSetting("spec.multiDomain.domains[0].id",
				`Settings.MultiDomain.Domains[0].ID "" is empty`)},
		},
		"extraConfig names and values that cannot be rendered": {
			Obj: minimal(withExtra("class", "1", "not-a-name", "1", "SESSION_TIMEOUT", `__import__("os").system("id")`)),
			Want: []metav1.StatusCause{
				invalidSetting("spec.extraConfig.SESSION_TIMEOUT", `Settings.ExtraConfig["SESSION_TIMEOUT"]: the value is not a single-line Python literal: not a literal: a name (only True, False and None are literals) at byte 0`),
				invalidSetting("spec.extraConfig.class", `Settings.ExtraConfig["class"]: the setting name is a Python keyword or __debug__, which cannot be assigned`),
				invalidSetting("spec.extraConfig.not-a-name", `Settings.ExtraConfig["not-a-name"]: the setting name is not a Python identifier ([A-Za-z_][A-Za-z0-9_]*)`),
			},
		},
		"every kind of problem at once": {
			Obj: minimal(withWebSSO, withNetworkPolicy(), withExtra("WEBSSO_CHOICES", "((")),
			Want: []metav1.StatusCause{
				forbidden("spec.extraConfig.WEBSSO_CHOICES", alsoChoices),
				invalidSetting("spec.extraConfig.WEBSSO_CHOICES", `Settings.ExtraConfig["WEBSSO_CHOICES"]: the value is not a single-line Python literal: not a literal: missing value at byte 2`),
				{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.networkPolicy.ingress",
					Message: "Required value: at least one rule is required: an empty list would refuse all traffic to the dashboard"},
			},
		},
	})
}

// TestValidateNeverEchoesExtraConfigValues refuses extraConfig values that carry a
// credential-like token in every way a value can be refused, and checks that neither
// the error nor a warning contains the token.
func TestValidateNeverEchoesExtraConfigValues(t *testing.T) {
	const token = "s3cr3t-t0ken"
	values := map[string]string{
		"a name":              token,
		"text after a string": "'a' " + token,
		"an open string":      "'" + token,
		"two lines":           "1\n" + token,
		"a call":              "f('" + token + "')",
		"a valid literal":     "'" + token + "'",
	}
	for name, v := range values {
		t.Run(name, func(t *testing.T) {
			// WEBSSO_CHOICES conflicts with websso.choices whatever its value, so every
			// case is refused; the other keys are refused for their value alone.
			h := minimal(withWebSSO, withExtra("WEBSSO_CHOICES", v, "SESSION_TIMEOUT", v))
			_, err := webhook.Validator{}.ValidateCreate(context.Background(), h)
			if err == nil {
				t.Fatal("admitted, want a refusal")
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("refusal echoes the value: %v", err)
			}
			old := minimal(withWebSSO, withExtra("WEBSSO_CHOICES", v, "SESSION_TIMEOUT", v))
			warnings, err := webhook.Validator{}.ValidateUpdate(context.Background(), old, h)
			if err != nil {
				t.Fatalf("update that changes nothing: %v", err)
			}
			if strings.Contains(strings.Join(warnings, "\n"), token) {
				t.Errorf("warnings echo the value: %q", warnings)
			}
		})
	}
}

// TestValidateUpdate checks that an update is refused for the problems it introduces
// and that a problem carried over unchanged is a warning instead.
func TestValidateUpdate(t *testing.T) {
	conflict := forbidden("spec.extraConfig.WEBSSO_CHOICES", "also set by spec.websso.choices; remove one of them")
	newImage := func(h *v1alpha1.Horizon) { h.Spec.Image = "quay.io/openstack.kolla/horizon:2025.2-ubuntu-noble" }
	emptyServer := func(i int) func(*v1alpha1.Horizon) {
		return func(h *v1alpha1.Horizon) {
			h.Spec.MemcachedServers = []string{"memcached:11211", "memcached:11211", "memcached:11211"}
			h.Spec.MemcachedServers[i] = ""
		}
	}
	admittest.UpdateTable(t, webhook.Validator{}, map[string]admittest.Case[*v1alpha1.Horizon]{
		"a valid update": {
			Old: minimal(withWebSSO),
			Obj: minimal(withWebSSO, newImage),
		},
		"an update that adds a conflicting extraConfig key": {
			Old:  minimal(withWebSSO),
			Obj:  minimal(withWebSSO, withExtra("WEBSSO_CHOICES", "()")),
			Want: []metav1.StatusCause{conflict},
		},
		"an update that enables the typed block an extraConfig key already sets": {
			Old: minimal(withWebSSO, func(h *v1alpha1.Horizon) { h.Spec.WebSSO.Enabled = false },
				withExtra("WEBSSO_CHOICES", "()")),
			Obj:  minimal(withWebSSO, withExtra("WEBSSO_CHOICES", "()")),
			Want: []metav1.StatusCause{conflict},
		},
		"an unrelated edit of a Horizon that already conflicts": {
			Old:      minimal(withWebSSO, withExtra("WEBSSO_CHOICES", "()")),
			Obj:      minimal(withWebSSO, withExtra("WEBSSO_CHOICES", "()"), newImage),
			Warnings: []string{"spec.extraConfig.WEBSSO_CHOICES: " + conflict.Message},
		},
		"an update that fixes the conflict": {
			Old: minimal(withWebSSO, withExtra("WEBSSO_CHOICES", "()")),
			Obj: minimal(withWebSSO),
		},
		"a new problem next to one carried over": {
			Old:      minimal(withWebSSO, withExtra("WEBSSO_CHOICES", "()")),
			Obj:      minimal(withWebSSO, withExtra("WEBSSO_CHOICES", "()"), withNetworkPolicy()),
			Warnings: []string{"spec.extraConfig.WEBSSO_CHOICES: " + conflict.Message},
			Want: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.networkPolicy.ingress",
				Message: "Required value: at least one rule is required: an empty list would refuse all traffic to the dashboard"}},
		},
		"a problem that moves to another field": {
			Old: minimal(emptyServer(1)),
			Obj: minimal(emptyServer(2)),
			Want: []metav1.StatusCause{invalidSetting("spec.memcachedServers[2]",
				`Settings.MemcachedServers[2] "" is empty: want host:port`)},
		},
	})
}

// TestValidateErrorNamesTheHorizon checks the refusal's text: the kind, group and name
// of the Horizon and each field path.
func TestValidateErrorNamesTheHorizon(t *testing.T) {
	_, err := webhook.Validator{}.ValidateCreate(context.Background(),
		minimal(withWebSSO, withExtra("WEBSSO_CHOICES", "()")))
	want := `Horizon.horizon.openstack.c5c3.io "horizon" is invalid: spec.extraConfig.WEBSSO_CHOICES: Forbidden: also set by spec.websso.choices; remove one of them`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}
