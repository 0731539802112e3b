package webhook_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/webhook"
)

// causes are the field causes of the Invalid error err; nil for a nil err. Any other
// error fails the test.
func causes(t *testing.T, err error) []metav1.StatusCause {
	t.Helper()
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("err = %v, want an Invalid error with details", err)
	}
	return status.Status().Details.Causes
}

func invalidCause(field, message string) metav1.StatusCause {
	return metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: field, Message: message}
}

// unsafeFernet is the refusal of fernet maxActiveKeys 3 rotating every 24h with the
// default token lifetimes.
const unsafeFernet = "Invalid value: 3: unsafe key rotation: with maxActiveKeys 3 and a rotation every 24h0m0s " +
	"a key is removed 24h0m0s after the rotation that retires it, but a token needs it for token expiration 1h0m0s + " +
	"allow-expired window 48h0m0s; maxActiveKeys must be at least 5; or lengthen spec.fernet.rotationInterval, " +
	"or shorten spec.token.expiration or spec.token.allowExpiredWindow"

// TestValidateCreate checks each refusal: its field, its type and its text, and that a
// valid Keystone is admitted.
func TestValidateCreate(t *testing.T) {
	tests := map[string]struct {
		k    *v1alpha1.Keystone
		want []metav1.StatusCause
	}{
		"the minimal Keystone": {k: minimal()},
		"the CRD defaults written out": {
			k: minimal(fernet(3, "168h"), credential(3, "168h"), token("1h", "48h")),
		},
		"a fast fernet rotation with enough keys": {k: minimal(fernet(5, "24h"))},
		"a fast fernet rotation with too few keys": {
			k:    minimal(fernet(3, "24h")),
			want: []metav1.StatusCause{invalidCause("spec.fernet.maxActiveKeys", unsafeFernet)},
		},
		"a longer token lifetime than the fernet keys last": {
			k: minimal(fernet(4, "24h"), token("24h", "48h")),
			want: []metav1.StatusCause{invalidCause("spec.fernet.maxActiveKeys",
				"Invalid value: 4: unsafe key rotation: with maxActiveKeys 4 and a rotation every 24h0m0s a key is removed 48h0m0s "+
					"after the rotation that retires it, but a token needs it for token expiration 24h0m0s + allow-expired window 48h0m0s; "+
					"maxActiveKeys must be at least 5; or lengthen spec.fernet.rotationInterval, or shorten spec.token.expiration or "+
					"spec.token.allowExpiredWindow")},
		},
		"a credential rotation faster than the token lifetime": {
			k: minimal(credential(3, "1h"), fernet(5, "24h")),
			want: []metav1.StatusCause{invalidCause("spec.credential.maxActiveKeys",
				"Invalid value: 3: unsafe key rotation: with maxActiveKeys 3 and a rotation every 1h0m0s a key is removed 1h0m0s "+
					"after the rotation that retires it, but a token needs it for token expiration 1h0m0s + allow-expired window 48h0m0s; "+
					"maxActiveKeys must be at least 51; or lengthen spec.credential.rotationInterval, or shorten spec.token.expiration or "+
					"spec.token.allowExpiredWindow")},
		},
		"a rotation interval of zero": {
			k: minimal(fernet(3, "0s")),
			want: []metav1.StatusCause{invalidCause("spec.fernet.rotationInterval",
				`Invalid value: "0s": invalid key rotation settings: rotation interval 0s is not positive`)},
		},
		"a negative token expiration is named once": {
			k: minimal(token("-1h", "48h")),
			want: []metav1.StatusCause{invalidCause("spec.token.expiration",
				`Invalid value: "-1h0m0s": invalid key rotation settings: token expiration -1h0m0s is negative`)},
		},
		"settings keystone.conf cannot hold": {
			k: minimal(func(k *v1alpha1.Keystone) {
				k.Spec.MemcachedServers = []string{"memcached:11211", ""}
				k.Spec.Bootstrap.PublicURL = "ftp://identity.example.com"
				k.Spec.ExtraConfig = map[string]map[string]string{
					"database": {"connection": "mysql+pymysql://keystone:pw@db/keystone"},
					"Token":    {"expiration": "7200"},
				}
			}),
			want: []metav1.StatusCause{
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
			k: minimal(fernet(3, "24h"), func(k *v1alpha1.Keystone) { k.Spec.MemcachedServers = []string{"a b:11211"} }),
			want: []metav1.StatusCause{
				invalidCause("spec.fernet.maxActiveKeys", unsafeFernet),
				invalidCause("spec.memcachedServers[0]",
					`Invalid value: invalid Keystone settings: Settings.MemcachedServers[0] "a b:11211" contains white space: want host:port`),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			warnings, err := webhook.Validator{}.ValidateCreate(context.Background(), tc.k)
			if diff := cmp.Diff(tc.want, causes(t, err)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
		})
	}
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
	tests := map[string]struct {
		old, new     *v1alpha1.Keystone
		want         []metav1.StatusCause
		wantWarnings []string
	}{
		"a valid update": {
			old: minimal(fernet(5, "24h")),
			new: minimal(fernet(5, "24h"), newImage),
		},
		"an update that makes the rotation unsafe": {
			old:  minimal(fernet(5, "24h")),
			new:  minimal(fernet(3, "24h")),
			want: []metav1.StatusCause{invalidCause("spec.fernet.maxActiveKeys", unsafeFernet)},
		},
		"an unrelated edit of a Keystone that already rotates unsafely": {
			old:          minimal(fernet(3, "24h")),
			new:          minimal(fernet(3, "24h"), newImage),
			wantWarnings: []string{"spec.fernet.maxActiveKeys: " + unsafeFernet},
		},
		"an update that makes the rotation safe": {
			old: minimal(fernet(3, "24h")),
			new: minimal(fernet(5, "24h")),
		},
		"a longer token lifetime makes a carried-over problem a new one": {
			old: minimal(fernet(3, "24h")),
			new: minimal(fernet(3, "24h"), token("2h", "48h")),
			want: []metav1.StatusCause{invalidCause("spec.fernet.maxActiveKeys",
				"Invalid value: 3: unsafe key rotation: with maxActiveKeys 3 and a rotation every 24h0m0s a key is removed 24h0m0s "+
					"after the rotation that retires it, but a token needs it for token expiration 2h0m0s + allow-expired window 48h0m0s; "+
					"maxActiveKeys must be at least 5; or lengthen spec.fernet.rotationInterval, or shorten spec.token.expiration or "+
					"spec.token.allowExpiredWindow")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			warnings, err := webhook.Validator{}.ValidateUpdate(context.Background(), tc.old, tc.new)
			if diff := cmp.Diff(tc.want, causes(t, err)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, []string(warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateDelete admits deleting objects that would be refused on create.
func TestValidateDelete(t *testing.T) {
	k := minimal(fernet(3, "24h"))
	if _, err := (webhook.Validator{}).ValidateCreate(context.Background(), k); err == nil {
		t.Fatal("create admitted; the case needs a Keystone that is refused")
	}
	if warnings, err := (webhook.Validator{}).ValidateDelete(context.Background(), k); err != nil || len(warnings) != 0 {
		t.Errorf("ValidateDelete(Keystone) = %q, %v; want no warnings and no error", warnings, err)
	}
	b := backend(func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Config["ldap"]["password"] = "x" })
	if _, err := (webhook.IdentityBackendValidator{}).ValidateCreate(context.Background(), b); err == nil {
		t.Fatal("create admitted; the case needs a KeystoneIdentityBackend that is refused")
	}
	if warnings, err := (webhook.IdentityBackendValidator{}).ValidateDelete(context.Background(), b); err != nil || len(warnings) != 0 {
		t.Errorf("ValidateDelete(KeystoneIdentityBackend) = %q, %v; want no warnings and no error", warnings, err)
	}
}

// TestValidateErrorNamesTheKeystone checks the refusal's text: the kind, group and
// name of the Keystone and the field path.
func TestValidateErrorNamesTheKeystone(t *testing.T) {
	_, err := webhook.Validator{}.ValidateCreate(context.Background(), minimal(fernet(3, "24h")))
	want := `Keystone.keystone.openstack.c5c3.io "keystone" is invalid: spec.fernet.maxActiveKeys: ` + unsafeFernet
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

// TestValidateIdentityBackend checks each refusal of a KeystoneIdentityBackend, that
// the sample-like backend is admitted, and that no option value is echoed.
func TestValidateIdentityBackend(t *testing.T) {
	const secret = "s3cr3t-bind"
	tests := map[string]struct {
		b    *v1alpha1.KeystoneIdentityBackend
		want []metav1.StatusCause
	}{
		"a backend with a bind password Secret": {b: backend()},
		"an anonymous sql backend": {b: backend(func(b *v1alpha1.KeystoneIdentityBackend) {
			b.Spec.Driver, b.Spec.Config, b.Spec.PasswordSecretRef = "sql", nil, nil
		})},
		"a bind password in config": {
			b: backend(func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Config["ldap"]["password"] = secret }),
			want: []metav1.StatusCause{{Type: metav1.CauseTypeForbidden, Field: "spec.config[ldap][password]",
				Message: "Forbidden: the bind password comes from spec.passwordSecretRef; remove it from spec.config"}},
		},
		"a bind password in config without a password Secret": {
			b: backend(func(b *v1alpha1.KeystoneIdentityBackend) {
				b.Spec.Config["ldap"]["password"] = secret
				b.Spec.PasswordSecretRef = nil
			}),
			want: []metav1.StatusCause{{Type: metav1.CauseTypeForbidden, Field: "spec.config[ldap][password]",
				Message: "Forbidden: the bind password comes from spec.passwordSecretRef; remove it from spec.config"}},
		},
		"a domain the CRD pattern admits but no file name can hold": {
			b: backend(func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Domain = "corp..example" }),
			want: []metav1.StatusCause{invalidCause("spec.domain",
				`Invalid value: invalid Keystone settings: domain "corp..example" contains ".."`)},
		},
		"sections the domain file cannot hold": {
			b: backend(func(b *v1alpha1.KeystoneIdentityBackend) {
				b.Spec.Config["LDAP"] = map[string]string{"url": secret}
				b.Spec.Config["empty"] = map[string]string{}
			}),
			want: []metav1.StatusCause{
				invalidCause("spec.config[LDAP]",
					`Invalid value: invalid Keystone settings: sections["LDAP"]: oslo.config reads the section as "ldap"; write it in lower case`),
				invalidCause("spec.config[empty]", `Invalid value: invalid Keystone settings: sections["empty"] has no options`),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			warnings, err := webhook.IdentityBackendValidator{}.ValidateCreate(context.Background(), tc.b)
			if diff := cmp.Diff(tc.want, causes(t, err)); diff != "" {
				t.Errorf("causes (-want +got):\n%s", diff)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings = %q, want none", warnings)
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("refusal echoes a value: %v", err)
			}
		})
	}
}

// TestValidateIdentityBackendUpdate refuses an update that adds a bind password to
// config and warns about one carried over.
func TestValidateIdentityBackendUpdate(t *testing.T) {
	withPassword := func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Config["ldap"]["password"] = "x" }
	newDescription := func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Description = "changed" }
	forbidden := "spec.config[ldap][password]: Forbidden: the bind password comes from spec.passwordSecretRef; remove it from spec.config"

	_, err := webhook.IdentityBackendValidator{}.ValidateUpdate(context.Background(), backend(), backend(withPassword))
	if err == nil || !strings.Contains(err.Error(), forbidden) {
		t.Errorf("update adding the password: err = %v, want it to contain %s", err, forbidden)
	}
	warnings, err := webhook.IdentityBackendValidator{}.ValidateUpdate(context.Background(),
		backend(withPassword), backend(withPassword, newDescription))
	if err != nil {
		t.Errorf("unrelated edit: err = %v, want none", err)
	}
	if diff := cmp.Diff([]string{forbidden}, []string(warnings)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
