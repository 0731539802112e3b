package webhook_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/c5c3/reconciler-sdk/admit/admittest"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/webhook"
)

func invalidCause(field, message string) metav1.StatusCause {
	return metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: field, Message: message}
}

// unsafeRotation is the refusal of the rotation of repo (fernet or credential) keeping
// keys keys, rotating every interval, so that a key is removed removedAfter after the
// rotation that retires it, for tokens that expire after expiration and an
// allow-expired window of 48h; atLeast is the smallest safe maxActiveKeys.
func unsafeRotation(repo string, keys int, interval, removedAfter, expiration string, atLeast int) metav1.StatusCause {
	return invalidCause("spec."+repo+".maxActiveKeys", fmt.Sprintf("Invalid value: %d: unsafe key rotation: "+
		"with maxActiveKeys %d and a rotation every %s a key is removed %s after the rotation that retires it, "+
		"but a token needs it for token expiration %s + allow-expired window 48h0m0s; maxActiveKeys must be at least %d; "+
		"or lengthen spec.%s.rotationInterval, or shorten spec.token.expiration or spec.token.allowExpiredWindow",
		keys, keys, interval, removedAfter, expiration, atLeast, repo))
}

// unsafeFernet is the refusal of fernet maxActiveKeys 3 rotating every 24h with the
// default token lifetimes.
var unsafeFernet = unsafeRotation("fernet", 3, "24h0m0s", "24h0m0s", "1h0m0s", 5)

// TestValidateCreate checks each refusal: its field, its type and its text, and that a
// valid Keystone is admitted.
func TestValidateCreate(t *testing.T) {
	admittest.CreateTable(t, webhook.Validator{}, map[string]admittest.Case[*v1alpha1.Keystone]{
		"the minimal Keystone": {Obj: minimal()},
		"the CRD defaults written out": {
			Obj: minimal(fernet(3, "168h"), credential(3, "168h"), token("1h", "48h")),
		},
		"a fast fernet rotation with enough keys": {Obj: minimal(fernet(5, "24h"))},
		"a fast fernet rotation with too few keys": {
			Obj:  minimal(fernet(3, "24h")),
			Want: []metav1.StatusCause{unsafeFernet},
		},
		"a longer token lifetime than the fernet keys last": {
			Obj:  minimal(fernet(4, "24h"), token("24h", "48h")),
			Want: []metav1.StatusCause{unsafeRotation("fernet", 4, "24h0m0s", "48h0m0s", "24h0m0s", 5)},
		},
		"a credential rotation faster than the token lifetime": {
			Obj:  minimal(credential(3, "1h"), fernet(5, "24h")),
			Want: []metav1.StatusCause{unsafeRotation("credential", 3, "1h0m0s", "1h0m0s", "1h0m0s", 51)},
		},
		"a rotation interval of zero": {
			Obj: minimal(fernet(3, "0s")),
			Want: []metav1.StatusCause{invalidCause("spec.fernet.rotationInterval",
				`Invalid value: "0s": invalid key rotation settings: rotation interval 0s is not positive`)},
		},
		"a negative token expiration is named once": {
			Obj: minimal(token("-1h", "48h")),
			Want: []metav1.StatusCause{invalidCause("spec.token.expiration",
				`Invalid value: "-1h0m0s": invalid key rotation settings: token expiration -1h0m0s is negative`)},
		},
		"settings keystone.conf cannot hold": {
			Obj: minimal(func(k *v1alpha1.Keystone) {
				k.Spec.MemcachedServers = []string{"memcached:11211", ""}
				k.Spec.Bootstrap.PublicURL = "ftp://identity.example.com"
				k.Spec.ExtraConfig = map[string]map[string]string{
					"database": {"connection": "mysql+pymysql://keystone:pw@db/keystone"},
					"Token":    {"expiration": "7200"},
				}
			}),
			Want: []metav1.StatusCause{
				invalidCause("spec.bootstrap.publicURL",
					`Invalid value: invalid Keystone settings: Settings.PublicEndpoint "ftp://identity.example.com" is not an http or https URL`),
				invalidCause("spec.extraConfig[Token]",
					`Invalid value: invalid Keystone settings: Settings.ExtraConfig["Token"]: oslo.config reads the section as "token"; write it in lower case`),
				invalidCause("spec.extraConfig[database][connection]",
					`Invalid value: invalid Keystone settings: Settings.ExtraConfig["database"]["connection"]: the connection is read from `+
						`the environment variable OS_DATABASE__CONNECTION, which overrides the file`),
				invalidCause("spec.memcachedServers[1]",
					`Invalid value: invalid Keystone settings: Settings.MemcachedServers[1] "" is empty: want host:port`),
			},
		},
		"an unsafe rotation next to a bad setting": {
			Obj: minimal(fernet(3, "24h"), func(k *v1alpha1.Keystone) { k.Spec.MemcachedServers = []string{"a b:11211"} }),
			Want: []metav1.StatusCause{
				unsafeFernet,
				invalidCause("spec.memcachedServers[0]",
					`Invalid value: invalid Keystone settings: Settings.MemcachedServers[0] "a b:11211" contains white space: want host:port`),
			},
		},
	})
}

// TestValidateAgreesWithTheController checks, over a grid of rotation settings, that
// the webhook refuses a Keystone exactly when the key repository steps' check fails,
// so nothing the webhook admits is refused by the controller as UnsafeRotation.
func TestValidateAgreesWithTheController(t *testing.T) {
	for _, maxKeys := range []int32{3, 4, 5, 51} {
		for _, interval := range []string{"1h", "24h", "168h"} {
			for _, expiration := range []string{"1h", "24h"} {
				k := minimal(fernet(maxKeys, interval), credential(maxKeys, interval), token(expiration, "48h"))
				_, err := webhook.Validator{}.ValidateCreate(context.Background(), k)
				refused := keystone.FernetRotationSettings(k).Check() != nil ||
					keystone.CredentialRotationSettings(k).Check() != nil
				if (err != nil) != refused {
					t.Errorf("maxActiveKeys %d, interval %s, expiration %s: webhook err = %v, controller refuses = %t",
						maxKeys, interval, expiration, err, refused)
				}
				if err != nil && !strings.Contains(err.Error(), keys.ErrUnsafeRotation.Error()) {
					t.Errorf("maxActiveKeys %d, interval %s, expiration %s: err = %v, want it to name %q",
						maxKeys, interval, expiration, err, keys.ErrUnsafeRotation)
				}
			}
		}
	}
}

// TestValidateNeverEchoesExtraConfigValues refuses extraConfig options in every way
// one is refused, and checks that the error never contains the value.
func TestValidateNeverEchoesExtraConfigValues(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	k := minimal(func(k *v1alpha1.Keystone) {
		k.Spec.ExtraConfig = map[string]map[string]string{
			"database": {"connection": "mysql://keystone:" + secret + "@db/keystone"},
			"Cache":    {"backend_argument": secret},
			"ok":       {"bad\nname": secret},
		}
	})
	_, err := webhook.Validator{}.ValidateCreate(context.Background(), k)
	if err == nil {
		t.Fatal("admitted, want a refusal")
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("refusal echoes a value: %v", err)
	}
}

// TestValidateUpdate checks that an update is refused for the problems it introduces
// and that a problem carried over unchanged is a warning instead.
func TestValidateUpdate(t *testing.T) {
	newImage := func(k *v1alpha1.Keystone) { k.Spec.Image = "registry.example/keystone:2025.2" }
	admittest.UpdateTable(t, webhook.Validator{}, map[string]admittest.Case[*v1alpha1.Keystone]{
		"a valid update": {
			Old: minimal(fernet(5, "24h")),
			Obj: minimal(fernet(5, "24h"), newImage),
		},
		"an update that makes the rotation unsafe": {
			Old:  minimal(fernet(5, "24h")),
			Obj:  minimal(fernet(3, "24h")),
			Want: []metav1.StatusCause{unsafeFernet},
		},
		"an unrelated edit of a Keystone that already rotates unsafely": {
			Old:      minimal(fernet(3, "24h")),
			Obj:      minimal(fernet(3, "24h"), newImage),
			Warnings: []string{"spec.fernet.maxActiveKeys: " + unsafeFernet.Message},
		},
		"an update that makes the rotation safe": {
			Old: minimal(fernet(3, "24h")),
			Obj: minimal(fernet(5, "24h")),
		},
		"a longer token lifetime makes a carried-over problem a new one": {
			Old:  minimal(fernet(3, "24h")),
			Obj:  minimal(fernet(3, "24h"), token("2h", "48h")),
			Want: []metav1.StatusCause{unsafeRotation("fernet", 3, "24h0m0s", "24h0m0s", "2h0m0s", 5)},
		},
	})
}

// TestValidateErrorNamesTheKeystone checks the refusal's text: the kind, group and
// name of the Keystone and the field path.
func TestValidateErrorNamesTheKeystone(t *testing.T) {
	_, err := webhook.Validator{}.ValidateCreate(context.Background(), minimal(fernet(3, "24h")))
	want := `Keystone.keystone.openstack.c5c3.io "keystone" is invalid: spec.fernet.maxActiveKeys: ` + unsafeFernet.Message
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

// TestValidateIdentityBackend checks each refusal of a KeystoneIdentityBackend, that
// the sample-like backend is admitted, and that no option value is echoed.
func TestValidateIdentityBackend(t *testing.T) {
	const secret = "s3cr3t-bind"
	admittest.CreateTable(t, webhook.IdentityBackendValidator{}, map[string]admittest.Case[*v1alpha1.KeystoneIdentityBackend]{
		"a backend with a bind password Secret": {Obj: backend()},
		"an anonymous sql backend": {Obj: backend(func(b *v1alpha1.KeystoneIdentityBackend) {
			b.Spec.Driver, b.Spec.Config, b.Spec.PasswordSecretRef = "sql", nil, nil
		})},
		"a bind password in config": {
			Obj:    backend(func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Config["ldap"]["password"] = secret }),
			Hidden: []string{secret},
			Want: []metav1.StatusCause{{Type: metav1.CauseTypeForbidden, Field: "spec.config[ldap][password]",
				Message: "Forbidden: the bind password comes from spec.passwordSecretRef; remove it from spec.config"}},
		},
		"a bind password in config without a password Secret": {
			Obj: backend(func(b *v1alpha1.KeystoneIdentityBackend) {
				b.Spec.Config["ldap"]["password"] = secret
				b.Spec.PasswordSecretRef = nil
			}),
			Hidden: []string{secret},
			Want: []metav1.StatusCause{{Type: metav1.CauseTypeForbidden, Field: "spec.config[ldap][password]",
				Message: "Forbidden: the bind password comes from spec.passwordSecretRef; remove it from spec.config"}},
		},
		"a domain the CRD pattern admits but no file name can hold": {
			Obj: backend(func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Domain = "corp..example" }),
			Want: []metav1.StatusCause{invalidCause("spec.domain",
				`Invalid value: invalid Keystone settings: domain "corp..example" contains ".."`)},
		},
		"a federation Keystone takes": {Obj: backend(withFederation(nil))},
		"a remote id on two providers": {
			Obj: backend(withFederation(func(f *v1alpha1.FederationSpec) {
				f.IdentityProviders[1].RemoteIDs = []string{"https://sso.corp.example.com"}
			})),
			Want: []metav1.StatusCause{invalidCause("spec.federation.identityProviders[1].remoteIDs[0]",
				`Invalid value: "https://sso.corp.example.com": is also a remote id of identity provider corp-oidc: Keystone keeps a remote id to one identity provider`)},
		},
		"a second OpenID Connect provider": {
			Obj: backend(withFederation(func(f *v1alpha1.FederationSpec) {
				second := f.IdentityProviders[0]
				second.ID, second.RemoteIDs = "partner-oidc", []string{"https://sso.partner.example.com"}
				f.IdentityProviders = append(f.IdentityProviders, second)
			})),
			Want: []metav1.StatusCause{{Type: metav1.CauseTypeForbidden, Field: "spec.federation.identityProviders[2].protocol",
				Message: "Forbidden: identity provider corp-oidc (spec.federation.identityProviders[0]) is this backend's OpenID Connect provider already: " +
					"a Keystone serves at most one OpenID Connect provider (mod_auth_openidc reads one per virtual host)"}},
		},
		"inline IdP metadata that is not SAML metadata": {
			Obj: backend(withFederation(func(f *v1alpha1.FederationSpec) {
				f.IdentityProviders[1].SAML2.IdPMetadata.Inline = "<html><body>sign in</body></html>"
			})),
			Want: []metav1.StatusCause{invalidCause("spec.federation.identityProviders[1].saml2.idpMetadata.inline",
				"Invalid value: has root element html: expected a SAML metadata EntityDescriptor (namespace urn:oasis:names:tc:SAML:2.0:metadata)")},
		},
		"mapping rules Keystone refuses": {
			Obj: backend(withFederation(func(f *v1alpha1.FederationSpec) {
				f.IdentityProviders[0].Mapping = []v1alpha1.MappingRule{
					{Local: []v1alpha1.MappingLocal{{Group: &v1alpha1.MappedGroup{Name: "staff"}}},
						Remote: []v1alpha1.MappingRemote{{Type: "OIDC-groups", AnyOneOf: []string{"a"}, NotAnyOf: []string{"b"}}}},
					{Local: []v1alpha1.MappingLocal{{User: &v1alpha1.MappedUser{Name: "{0}"}}},
						Remote: []v1alpha1.MappingRemote{{Type: "OIDC-email", Regex: ptr.To(true)}}},
					{},
				}
			})),
			Want: []metav1.StatusCause{
				{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.federation.identityProviders[0].mapping[0].local[0].group.domain",
					Message: "Required value: a group by name needs its domain"},
				invalidCause("spec.federation.identityProviders[0].mapping[0].remote[0]",
					"Invalid value: sets any_one_of and not_any_of: set at most one of any_one_of, not_any_of, blacklist and whitelist"),
				{Type: metav1.CauseTypeForbidden, Field: "spec.federation.identityProviders[0].mapping[1].remote[0].regex",
					Message: "Forbidden: is used only with any_one_of or not_any_of"},
				{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.federation.identityProviders[0].mapping[2].local",
					Message: "Required value: a rule maps to at least one local entry"},
				{Type: metav1.CauseTypeFieldValueRequired, Field: "spec.federation.identityProviders[0].mapping[2].remote",
					Message: "Required value: a rule matches at least one remote entry"},
			},
		},
		"sections the domain file cannot hold": {
			Obj: backend(func(b *v1alpha1.KeystoneIdentityBackend) {
				b.Spec.Config["LDAP"] = map[string]string{"url": secret}
				b.Spec.Config["empty"] = map[string]string{}
			}),
			Hidden: []string{secret},
			Want: []metav1.StatusCause{
				invalidCause("spec.config[LDAP]",
					`Invalid value: invalid Keystone settings: sections["LDAP"]: oslo.config reads the section as "ldap"; write it in lower case`),
				invalidCause("spec.config[empty]", `Invalid value: invalid Keystone settings: sections["empty"] has no options`),
			},
		},
	})
}

// TestValidateIdentityBackendUpdate refuses an update that adds a bind password to
// config and warns about one carried over.
func TestValidateIdentityBackendUpdate(t *testing.T) {
	withPassword := func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Config["ldap"]["password"] = "s3cr3t-bind" }
	newDescription := func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Description = "changed" }
	password := metav1.StatusCause{Type: metav1.CauseTypeForbidden, Field: "spec.config[ldap][password]",
		Message: "Forbidden: the bind password comes from spec.passwordSecretRef; remove it from spec.config"}
	admittest.UpdateTable(t, webhook.IdentityBackendValidator{}, map[string]admittest.Case[*v1alpha1.KeystoneIdentityBackend]{
		"an update adding the password": {Old: backend(), Obj: backend(withPassword),
			Want: []metav1.StatusCause{password}, Hidden: []string{"s3cr3t-bind"}},
		"an unrelated edit": {Old: backend(withPassword), Obj: backend(withPassword, newDescription),
			Warnings: []string{password.Field + ": " + password.Message}, Hidden: []string{"s3cr3t-bind"}},
	})
}

// withFederation gives a backend an OpenID Connect provider corp-oidc and a SAML
// provider corp-saml that Keystone takes, changed by change.
func withFederation(change func(f *v1alpha1.FederationSpec)) func(*v1alpha1.KeystoneIdentityBackend) {
	return func(b *v1alpha1.KeystoneIdentityBackend) {
		mapping := func() []v1alpha1.MappingRule {
			return []v1alpha1.MappingRule{{
				Local:  []v1alpha1.MappingLocal{{User: &v1alpha1.MappedUser{Name: "{0}"}}},
				Remote: []v1alpha1.MappingRemote{{Type: "OIDC-preferred_username"}},
			}}
		}
		b.Spec.Federation = &v1alpha1.FederationSpec{IdentityProviders: []v1alpha1.IdentityProviderSpec{
			{ID: "corp-oidc", Protocol: v1alpha1.ProtocolOpenID, RemoteIDs: []string{"https://sso.corp.example.com"},
				OpenID: &v1alpha1.OpenIDSpec{Issuer: "https://sso.corp.example.com", ClientID: "keystone",
					ClientSecretRef: v1alpha1.SecretKeyRef{Name: "corp-oidc", Key: "client-secret"}},
				Mapping: mapping()},
			{ID: "corp-saml", Protocol: v1alpha1.ProtocolSAML2, RemoteIDs: []string{"https://idp.corp.example.com/saml"},
				SAML2: &v1alpha1.SAML2Spec{
					IdPMetadata: v1alpha1.SAMLMetadataSource{
						Inline: `<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.corp.example.com/saml"/>`},
					SPKeyPairSecretRef: v1alpha1.LocalObjectReference{Name: "corp-sp"}},
				Mapping: mapping()},
		}}
		if change != nil {
			change(b.Spec.Federation)
		}
	}
}
