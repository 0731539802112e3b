package identitybackend

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
)

// testMetadata is a minimal SAML metadata document.
const testMetadata = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.example.com/saml"/>`

// oidcProvider is an OpenID Connect provider discovered from its issuer.
func oidcProvider(id string) v1alpha1.IdentityProviderSpec {
	return v1alpha1.IdentityProviderSpec{
		ID: id, Protocol: v1alpha1.ProtocolOpenID, RemoteIDs: []string{"https://" + id + ".example.com"},
		OpenID: &v1alpha1.OpenIDSpec{Issuer: "https://" + id + ".example.com/realms/corp/", ClientID: "keystone",
			ClientSecretRef: v1alpha1.SecretKeyRef{Name: id + "-client", Key: "secret"}},
		Mapping: []v1alpha1.MappingRule{{
			Local:  []v1alpha1.MappingLocal{{User: &v1alpha1.MappedUser{Name: "{0}"}}},
			Remote: []v1alpha1.MappingRemote{{Type: "OIDC-preferred_username"}},
		}},
	}
}

// samlProvider is a SAML provider with inline metadata.
func samlProvider(id string) v1alpha1.IdentityProviderSpec {
	p := oidcProvider(id)
	p.Protocol, p.OpenID = v1alpha1.ProtocolSAML2, nil
	p.SAML2 = &v1alpha1.SAML2Spec{IdPMetadata: v1alpha1.SAMLMetadataSource{Inline: testMetadata},
		SPKeyPairSecretRef: v1alpha1.LocalObjectReference{Name: id + "-sp"}}
	p.Mapping[0].Remote[0].Type = "MELLON_NAME_ID"
	return p
}

func TestRenderFederation(t *testing.T) {
	oidc, saml := oidcProvider("corp"), samlProvider("partners")
	withURL := oidcProvider("other")
	withURL.OpenID.Issuer, withURL.OpenID.MetadataURL = "", "https://other.example.com/oidc/.well-known/openid-configuration"
	withURL.OpenID.Scopes = []string{"openid", "groups"}
	oidcDocs := providerDocuments{spec: &oidc, clientSecret: `c"l\ient`, passphrase: "Rand0mPassphrase"}
	samlDocs := providerDocuments{spec: &saml, idpMetadata: testMetadata, spCert: []byte("CERT"), spKey: []byte("KEY")}

	corpServer := "# OpenID Connect identity provider corp, rendered by the Keystone operator.\n" +
		"OIDCProviderMetadataURL \"https://corp.example.com/realms/corp/.well-known/openid-configuration\"\n" +
		"OIDCClientID \"keystone\"\n" +
		"OIDCClientSecret \"c\\\"l\\\\ient\"\n" +
		"OIDCScope \"openid email profile\"\n" +
		"OIDCResponseType \"code\"\n" +
		"OIDCClaimPrefix \"OIDC-\"\n" +
		"OIDCCryptoPassphrase \"Rand0mPassphrase\"\n" +
		"OIDCRedirectURI \"/v3/OS-FEDERATION/identity_providers/corp/protocols/openid/auth/redirect\"\n" +
		"<Location \"/v3/OS-FEDERATION/identity_providers/corp/protocols/openid/auth\">\n" +
		"    AuthType \"openid-connect\"\n    Require valid-user\n</Location>\n" +
		"<Location \"/v3/auth/OS-FEDERATION/identity_providers/corp/protocols/openid/websso\">\n" +
		"    AuthType \"openid-connect\"\n    Require valid-user\n</Location>\n"
	samlLocation := func(loc string) string {
		return "<Location \"" + loc + "\">\n" +
			"    AuthType \"Mellon\"\n    MellonEnable \"auth\"\n    Require valid-user\n    MellonIdP \"IDP\"\n" +
			"    MellonEndpointPath \"/v3/OS-FEDERATION/identity_providers/partners/protocols/saml2/auth/mellon\"\n" +
			"    MellonSPCertFile \"/etc/keystone/federation/saml2-partners-sp.crt\"\n" +
			"    MellonSPPrivateKeyFile \"/etc/keystone/federation/saml2-partners-sp.key\"\n" +
			"    MellonIdPMetadataFile \"/etc/keystone/federation/saml2-partners-idp-metadata.xml\"\n" +
			"</Location>\n"
	}
	partnersServer := "# SAML 2.0 identity provider partners, rendered by the Keystone operator.\n" +
		samlLocation("/v3/OS-FEDERATION/identity_providers/partners/protocols/saml2/auth") +
		samlLocation("/v3/auth/OS-FEDERATION/identity_providers/partners/protocols/saml2/websso")

	for name, tc := range map[string]struct {
		providers  []providerDocuments
		dashboards []string
		want       map[string]string // data key to content; "" for keys only checked to exist
	}{
		"no providers render nothing": {dashboards: []string{"https://dashboard.example.com/auth/websso/"}},
		"an OpenID Connect provider from its issuer": {
			providers: []providerDocuments{oidcDocs},
			want: map[string]string{
				FederationConfigFile: "[auth]\nmethods = external,password,token,oauth1,mapped,application_credential,openid\n\n" +
					"[openid]\nremote_id_attribute = HTTP_OIDC_ISS\n",
				"httpd-openid-corp.conf": corpServer,
			},
		},
		"a SAML provider and its files": {
			providers: []providerDocuments{samlDocs},
			want: map[string]string{
				FederationConfigFile: "[auth]\nmethods = external,password,token,oauth1,mapped,application_credential,saml2\n\n" +
					"[saml2]\nremote_id_attribute = MELLON_IDP\n",
				"httpd-saml2-partners.conf":       partnersServer,
				"saml2-partners-idp-metadata.xml": testMetadata,
				"saml2-partners-sp.crt":           "CERT",
				"saml2-partners-sp.key":           "KEY",
			},
		},
		"both protocols and the dashboards once each, in order": {
			providers: []providerDocuments{samlDocs, oidcDocs, {spec: &withURL, clientSecret: "s", passphrase: "p"}},
			dashboards: []string{"https://b.example.com/auth/websso/", "https://a.example.com/auth/websso/",
				"https://b.example.com/auth/websso/"},
			want: map[string]string{
				FederationConfigFile: "[auth]\nmethods = external,password,token,oauth1,mapped,application_credential,saml2,openid\n\n" +
					"[federation]\ntrusted_dashboard = https://b.example.com/auth/websso/\n" +
					"trusted_dashboard = https://a.example.com/auth/websso/\n\n" +
					"[openid]\nremote_id_attribute = HTTP_OIDC_ISS\n\n" +
					"[saml2]\nremote_id_attribute = MELLON_IDP\n",
				"httpd-openid-corp.conf":          corpServer,
				"httpd-openid-other.conf":         "",
				"httpd-saml2-partners.conf":       partnersServer,
				"saml2-partners-idp-metadata.xml": testMetadata,
				"saml2-partners-sp.crt":           "CERT",
				"saml2-partners-sp.key":           "KEY",
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			data, err := renderFederation(tc.providers, tc.dashboards)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := slices.Sorted(maps.Keys(data)), slices.Sorted(maps.Keys(tc.want)); !slices.Equal(got, want) {
				t.Fatalf("data keys %v, want %v", got, want)
			}
			for key, want := range tc.want {
				if want != "" && string(data[key]) != want {
					t.Errorf("%s =\n%s\nwant\n%s", key, data[key], want)
				}
			}
			again, _ := renderFederation(tc.providers, tc.dashboards)
			if !maps.EqualFunc(data, again, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Fatal("two renders of the same input differ")
			}
		})
	}

	// The metadata URL is used as it is, with the scopes given.
	data, _ := renderFederation([]providerDocuments{{spec: &withURL, clientSecret: "s", passphrase: "p"}}, nil)
	got := string(data["httpd-openid-other.conf"])
	for _, want := range []string{
		"OIDCProviderMetadataURL \"https://other.example.com/oidc/.well-known/openid-configuration\"\n",
		"OIDCScope \"openid groups\"\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("httpd-openid-other.conf lacks %q:\n%s", want, got)
		}
	}
}

// sessionPassphrase is the session passphrase the rendered fragment of provider id
// with client secret and passphrase carries.
func sessionPassphrase(t *testing.T, id, secret, passphrase string) string {
	t.Helper()
	data, err := renderFederation([]providerDocuments{{spec: ptr.To(oidcProvider(id)), clientSecret: secret, passphrase: passphrase}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data[openIDServerFile(id)]), "\n") {
		if v, ok := strings.CutPrefix(line, "OIDCCryptoPassphrase "); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// The session passphrase is the one given, whatever the client secret; the SHA-256
// of the id and the client secret, which anyone holding the client secret could
// compute, is not it. Without a passphrase nothing renders.
func TestSessionPassphraseIsNotTheClientSecrets(t *testing.T) {
	a, b := sessionPassphrase(t, "corp", "one", "Gener4ted"), sessionPassphrase(t, "corp", "two", "Gener4ted")
	if a != "Gener4ted" || b != a {
		t.Fatalf("passphrases %q, %q: want the generated one whatever the client secret", a, b)
	}
	sum := sha256.Sum256([]byte("keystone-openid-session\x00corp\x00one"))
	data, _ := renderFederation([]providerDocuments{{spec: ptr.To(oidcProvider("corp")), clientSecret: "one", passphrase: "Gener4ted"}}, nil)
	if strings.Contains(string(data[openIDServerFile("corp")]), hex.EncodeToString(sum[:])) {
		t.Fatal("the fragment carries a passphrase derived from the client secret")
	}
	if _, err := renderFederation([]providerDocuments{{spec: ptr.To(oidcProvider("corp")), clientSecret: "one"}}, nil); err == nil ||
		!strings.Contains(err.Error(), "identity provider corp: no session passphrase") {
		t.Fatalf("an OpenID Connect provider without a passphrase rendered: %v", err)
	}
}

// openIDHolder picks the first OpenID Connect provider of the oldest backend whose
// federation validates apart from the limit itself; refusal names the holder.
func TestOpenIDHolder(t *testing.T) {
	now := time.Now()
	fed := func(name string, created time.Time, providers ...v1alpha1.IdentityProviderSpec) *v1alpha1.KeystoneIdentityBackend {
		b := testBackend(name, name, created)
		b.Spec.KeystoneRef.Name = "keystone"
		if providers != nil {
			b.Spec.Federation = &v1alpha1.FederationSpec{IdentityProviders: providers}
		}
		return b
	}
	invalid := oidcProvider("bad")
	invalid.OpenID.Issuer = "http://bad.example.com"
	older := fed("older", now.Add(-time.Hour), samlProvider("older-saml"))
	broken := fed("broken", now.Add(-time.Minute), invalid)
	twice := fed("twice", now, samlProvider("twice-saml"), oidcProvider("twice-a"), oidcProvider("twice-b"))
	alpha := fed("alpha", now, oidcProvider("alpha-oidc"))
	plain := fed("plain", now.Add(-2*time.Hour))
	for name, tc := range map[string]struct {
		backends []*v1alpha1.KeystoneIdentityBackend
		want     openIDSlot
	}{
		"none": {backends: []*v1alpha1.KeystoneIdentityBackend{plain, older}},
		"the first of the backend, in spec order": {backends: []*v1alpha1.KeystoneIdentityBackend{plain, older, twice}, want: openIDSlot{"twice", "twice-a"}},
		"same age: by name":                       {backends: []*v1alpha1.KeystoneIdentityBackend{twice, alpha}, want: openIDSlot{"alpha", "alpha-oidc"}},
		"an invalid federation holds nothing":     {backends: []*v1alpha1.KeystoneIdentityBackend{twice, broken}, want: openIDSlot{"twice", "twice-a"}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := openIDHolder(tc.backends); got != tc.want {
				t.Fatalf("openIDHolder = %+v, want %+v", got, tc.want)
			}
		})
	}
	h := openIDHolder([]*v1alpha1.KeystoneIdentityBackend{twice, alpha})
	for _, tc := range []struct {
		b    *v1alpha1.KeystoneIdentityBackend
		idp  int
		want string
	}{
		{alpha, 0, ""},
		{twice, 0, ""}, // SAML
		{twice, 1, "a second OpenID Connect provider of Keystone keystone: identity provider alpha-oidc of KeystoneIdentityBackend alpha, older, is its OpenID Connect provider"},
	} {
		if got := h.refusal(tc.b, &tc.b.Spec.Federation.IdentityProviders[tc.idp]); !strings.HasPrefix(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("refusal of %s[%d] = %q, want %q...", tc.b.Name, tc.idp, got, tc.want)
		}
	}
	h = openIDHolder([]*v1alpha1.KeystoneIdentityBackend{twice})
	if got := h.refusal(twice, &twice.Spec.Federation.IdentityProviders[2]); !strings.Contains(got, "identity provider twice-a of KeystoneIdentityBackend twice is its OpenID Connect provider") {
		t.Errorf("refusal within one backend = %q", got)
	}
	if got := openIDRefusals(twice, twice.Spec.Federation.IdentityProviders, h); len(got) != 1 ||
		!strings.HasPrefix(got[0], "identity provider twice-b (spec.federation.identityProviders[2]) is neither rendered nor registered in Keystone: ") {
		t.Errorf("openIDRefusals = %q", got)
	}
}

func TestServerValueOK(t *testing.T) {
	for v, want := range map[string]bool{
		`plain-Secret_1`: true, `with "quotes" and \ backslash`: true, `$HOME and $ alone`: true,
		"a\nnewline": false, "a\ttab": false, "${VAR}": false, "x\x7f": false,
	} {
		if got := serverValueOK(v); got != want {
			t.Errorf("serverValueOK(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestCheckSAMLMetadata(t *testing.T) {
	for doc, ok := range map[string]bool{
		testMetadata: true,
		`<EntitiesDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata"><EntityDescriptor entityID="x"/></EntitiesDescriptor>`: true,
		`<EntityDescriptor entityID="x"/>`: false, // no SAML metadata namespace
		`<html><body>login</body></html>`:  false,
		`not xml at all`:                   false,
		`<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"`: false,
		``: false,
	} {
		if err := checkSAMLMetadata(doc); (err == nil) != ok {
			t.Errorf("checkSAMLMetadata(%q) = %v, want ok %v", doc, err, ok)
		}
	}
}

// TestValidateFederation checks each problem ValidateFederation reports by the field it
// names; a valid federation and a nil one report none.
func TestValidateFederation(t *testing.T) {
	withFed := func(change func(f *v1alpha1.FederationSpec)) *v1alpha1.KeystoneIdentityBackend {
		b := testBackend("corp", "corp", time.Now())
		b.Spec.Federation = &v1alpha1.FederationSpec{
			IdentityProviders: []v1alpha1.IdentityProviderSpec{oidcProvider("corp"), samlProvider("partners")},
			TrustedDashboards: []string{"https://dashboard.example.com/auth/websso/"},
		}
		if change != nil {
			change(b.Spec.Federation)
		}
		return b
	}
	const idp0, idp1 = "spec.federation.identityProviders[0]", "spec.federation.identityProviders[1]"
	for name, tc := range map[string]struct {
		b    *v1alpha1.KeystoneIdentityBackend
		want []string // the fields named, in order
	}{
		"no federation":      {b: testBackend("corp", "corp", time.Now())},
		"a valid federation": {b: withFed(nil)},
		"no providers": {b: withFed(func(f *v1alpha1.FederationSpec) { f.IdentityProviders = nil }),
			want: []string{"spec.federation.identityProviders"}},
		"a dashboard over http": {b: withFed(func(f *v1alpha1.FederationSpec) { f.TrustedDashboards = []string{"http://d.example.com/"} }),
			want: []string{"spec.federation.trustedDashboards[0]"}},
		"two providers of one id": {b: withFed(func(f *v1alpha1.FederationSpec) { f.IdentityProviders[1].ID = "corp" }),
			want: []string{idp1 + ".id"}},
		"two OpenID Connect providers": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[1] = oidcProvider("second")
		}), want: []string{idp1 + ".protocol"}},
		"an id with a slash": {b: withFed(func(f *v1alpha1.FederationSpec) { f.IdentityProviders[0].ID = "a/b" }),
			want: []string{idp0 + ".id"}},
		"a remote id on two providers": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[1].RemoteIDs = f.IdentityProviders[0].RemoteIDs
		}), want: []string{idp1 + ".remoteIDs[0]"}},
		"an unknown protocol": {b: withFed(func(f *v1alpha1.FederationSpec) { f.IdentityProviders[0].Protocol = "oauth2" }),
			want: []string{idp0 + ".protocol"}},
		"openid without its block, with saml2's": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[0].OpenID, f.IdentityProviders[0].SAML2 = nil, f.IdentityProviders[1].SAML2
		}), want: []string{idp0 + ".saml2", idp0 + ".openid"}},
		"saml2 without its block": {b: withFed(func(f *v1alpha1.FederationSpec) { f.IdentityProviders[1].SAML2 = nil }),
			want: []string{idp1 + ".saml2"}},
		"issuer and metadata URL": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[0].OpenID.MetadataURL = "https://corp.example.com/.well-known/openid-configuration"
		}), want: []string{idp0 + ".openid"}},
		"an issuer over http, a client id with a space, no secret key, a bad scope": {b: withFed(func(f *v1alpha1.FederationSpec) {
			o := f.IdentityProviders[0].OpenID
			o.Issuer, o.ClientID, o.ClientSecretRef.Key, o.Scopes = "http://corp.example.com", "key stone", "", []string{"open id"}
		}), want: []string{idp0 + ".openid.issuer", idp0 + ".openid.clientID", idp0 + ".openid.clientSecretRef.key", idp0 + ".openid.scopes[0]"}},
		"inline metadata that is not SAML metadata": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[1].SAML2.IdPMetadata.Inline = "<html/>"
		}), want: []string{idp1 + ".saml2.idpMetadata.inline"}},
		"metadata inline and from a ConfigMap": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[1].SAML2.IdPMetadata.ConfigMapKeyRef = &v1alpha1.MetadataConfigMapRef{Name: "idp", Key: "m"}
		}), want: []string{idp1 + ".saml2.idpMetadata"}},
		"no key pair Secret": {b: withFed(func(f *v1alpha1.FederationSpec) { f.IdentityProviders[1].SAML2.SPKeyPairSecretRef.Name = "" }),
			want: []string{idp1 + ".saml2.spKeyPairSecretRef.name"}},
		"no mapping": {b: withFed(func(f *v1alpha1.FederationSpec) { f.IdentityProviders[0].Mapping = nil }),
			want: []string{idp0 + ".mapping"}},
		"a rule without local and remote": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[0].Mapping = []v1alpha1.MappingRule{{}}
		}), want: []string{idp0 + ".mapping[0].local", idp0 + ".mapping[0].remote"}},
		"local entries keystone refuses": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[0].Mapping[0].Local = []v1alpha1.MappingLocal{
				{},
				{User: &v1alpha1.MappedUser{}},
				{User: &v1alpha1.MappedUser{Name: "{0}", Type: "guest"}},
				{Group: &v1alpha1.MappedGroup{ID: "g", Name: "staff"}},
				{Group: &v1alpha1.MappedGroup{Name: "staff"}},
				{Group: &v1alpha1.MappedGroup{ID: "g", Domain: &v1alpha1.MappedDomain{Name: "corp"}}},
				{Groups: "{0}", Domain: &v1alpha1.MappedDomain{}},
				{Projects: []v1alpha1.MappedProject{{Name: "p"}, {Roles: []v1alpha1.MappedRole{{}}}}},
			}
		}), want: []string{
			idp0 + ".mapping[0].local[0]",
			idp0 + ".mapping[0].local[1].user",
			idp0 + ".mapping[0].local[2].user.type",
			idp0 + ".mapping[0].local[3].group",
			idp0 + ".mapping[0].local[4].group.domain",
			idp0 + ".mapping[0].local[5].group.domain",
			idp0 + ".mapping[0].local[6].domain",
			idp0 + ".mapping[0].local[7].projects[0].roles",
			idp0 + ".mapping[0].local[7].projects[1].name",
			idp0 + ".mapping[0].local[7].projects[1].roles[0].name",
		}},
		"remote entries keystone refuses": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[0].Mapping[0].Remote = []v1alpha1.MappingRemote{
				{AnyOneOf: []string{"a"}},
				{Type: "t", AnyOneOf: []string{"a"}, Blacklist: []string{"b"}},
				{Type: "t", Regex: ptr.To(true)},
				{Type: "t", Whitelist: []string{"a"}, Regex: ptr.To(true)},
				{Type: "t", NotAnyOf: []string{}},
			}
		}), want: []string{
			idp0 + ".mapping[0].remote[0].type",
			idp0 + ".mapping[0].remote[1]",
			idp0 + ".mapping[0].remote[2].regex",
			idp0 + ".mapping[0].remote[3].regex",
			idp0 + ".mapping[0].remote[4].not_any_of",
		}},
		"remote entries keystone takes": {b: withFed(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[0].Mapping[0].Remote = []v1alpha1.MappingRemote{
				{Type: "t"}, {Type: "t", AnyOneOf: []string{"a.*"}, Regex: ptr.To(true)}, {Type: "t", NotAnyOf: []string{"b"}},
				{Type: "t", Blacklist: []string{"c"}}, {Type: "t", Whitelist: []string{"d"}},
			}
			f.IdentityProviders[0].Mapping[0].Local = []v1alpha1.MappingLocal{
				{User: &v1alpha1.MappedUser{Name: "{0}", Type: "local", Domain: &v1alpha1.MappedDomain{ID: "d1"}}},
				{Group: &v1alpha1.MappedGroup{ID: "g"}},
				{Group: &v1alpha1.MappedGroup{Name: "staff", Domain: &v1alpha1.MappedDomain{Name: "corp"}}},
				{GroupIDs: "{1}"},
				{Projects: []v1alpha1.MappedProject{{Name: "p", Roles: []v1alpha1.MappedRole{{Name: "member"}}}}},
			}
		})},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range ValidateFederation(tc.b) {
				got = append(got, e.Field)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("fields %v\nwant   %v", got, tc.want)
			}
		})
	}
}
