package identitybackend

import (
	"context"
	"crypto/tls"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// FederationVolumeName is the pod volume of the Keystone Deployment that is to mount
// the federation Secret under [FederationDir].
const FederationVolumeName = "federation"

// FederationDir is the directory the federation Secret's files are rendered for: the
// web server fragments name the SAML documents by their path in it.
const FederationDir = "/etc/keystone/federation"

// FederationConfigFile is the data key of the federation Secret holding the
// keystone.conf fragment ([auth] methods, [federation], [openid], [saml2]), read by
// oslo.config after keystone.conf from /etc/keystone/keystone.conf.d, so its options
// win over keystone.conf's.
const FederationConfigFile = "keystone-federation.conf"

// RetainFederationSecrets is how many older federation Secrets of a Keystone the
// IdentityBackends row keeps besides the current one; one a live ReplicaSet or pod
// still mounts is never deleted, whatever its age.
const RetainFederationSecrets = RetainDomainsSecrets

// The remote id attributes keystone.conf names: the web server variables carrying
// the asserting provider's id (mod_auth_openidc's issuer, mod_auth_mellon's IdP).
const (
	openIDRemoteIDAttribute = "HTTP_OIDC_ISS"
	saml2RemoteIDAttribute  = "MELLON_IDP"
)

// defaultAuthMethods are keystone's default [auth] methods; the federation fragment
// adds the protocols in use after them.
var defaultAuthMethods = []string{"external", "password", "token", "oauth1", "mapped", "application_credential"}

// defaultOpenIDScopes are the scopes of an OpenID Connect provider without scopes.
var defaultOpenIDScopes = []string{"openid", "email", "profile"}

// openIDServerFile is the data key of the web server fragment of OpenID Connect
// provider id; saml2ServerFile, saml2MetadataFile, saml2CertFile and saml2KeyFile
// those of a SAML provider.
func openIDServerFile(id string) string  { return "httpd-openid-" + id + ".conf" }
func saml2ServerFile(id string) string   { return "httpd-saml2-" + id + ".conf" }
func saml2MetadataFile(id string) string { return "saml2-" + id + "-idp-metadata.xml" }
func saml2CertFile(id string) string     { return "saml2-" + id + "-sp.crt" }
func saml2KeyFile(id string) string      { return "saml2-" + id + "-sp.key" }
func protocolPath(id, protocol string) string {
	return "/v3/OS-FEDERATION/identity_providers/" + id + "/protocols/" + protocol + "/auth"
}
func webSSOPath(id, protocol string) string {
	return "/v3/auth/OS-FEDERATION/identity_providers/" + id + "/protocols/" + protocol + "/websso"
}

// idPattern is what an identity provider id, a file name part and a URL path segment,
// may hold (the CRD's pattern).
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// scopePattern is one OAuth scope token (RFC 6749 scope-token).
var scopePattern = regexp.MustCompile(`^[!#-\[\]-~]+$`)

// ValidateFederation lists every problem of b's spec.federation that Keystone or the
// federation documents would refuse, each on the field it is about (below
// spec.federation); nil for a nil federation. It checks what the CRD's schema checks,
// for objects admitted before the schema or written past it, and what the schema
// cannot: a remote id named by two providers of the backend (Keystone keeps a remote
// id to one identity provider) and a trusted dashboard or OpenID Connect URL that is
// not an https URL. The mapping rules are checked against Keystone's mapping schema: a
// list of rules, each with a non-empty local and remote list; a local entry names a
// user, a group (by id alone, or by name with its domain), groups, group_ids, a domain
// or projects (each with a name and roles); a remote entry has a type and at most one
// of any_one_of, not_any_of, blacklist and whitelist, regex only with the first two.
// No value of a Secret is read or quoted.
//
// A backend declares at most one OpenID Connect provider: a second one is refused at
// its protocol field. mod_auth_openidc reads one relying party (discovery URL, client
// id and secret, session passphrase, redirect URI) per virtual host, so the fragment of
// a second provider would silently replace the first one's. Across the backends of one
// Keystone the same limit holds; that case is reported by FederationReady
// ([ReasonTooManyOpenIDProviders]), not refused at admission.
func ValidateFederation(b *v1alpha1.KeystoneIdentityBackend) field.ErrorList {
	return validateFederation(b, true)
}

// validateFederation is ValidateFederation; without oneOpenID a second OpenID Connect
// provider of the backend is not an error (the controller and the IdentityBackends row
// leave it out on their own, keeping the backend's other providers: openIDHolder).
func validateFederation(b *v1alpha1.KeystoneIdentityBackend, oneOpenID bool) field.ErrorList {
	f := b.Spec.Federation
	if f == nil {
		return nil
	}
	p := field.NewPath("spec", "federation")
	var errs field.ErrorList
	if len(f.IdentityProviders) == 0 {
		errs = append(errs, field.Required(p.Child("identityProviders"), "declare at least one identity provider, or remove spec.federation"))
	}
	for i, d := range f.TrustedDashboards {
		if err := checkHTTPSURL(d); err != nil {
			errs = append(errs, field.Invalid(p.Child("trustedDashboards").Index(i), d, err.Error()))
		}
	}
	ids := map[string]bool{}
	remoteIDs := map[string]string{}
	firstOpenID := -1
	for i := range f.IdentityProviders {
		idp := &f.IdentityProviders[i]
		ip := p.Child("identityProviders").Index(i)
		if idp.Protocol == v1alpha1.ProtocolOpenID {
			if firstOpenID < 0 {
				firstOpenID = i
			} else if oneOpenID {
				errs = append(errs, field.Forbidden(ip.Child("protocol"), fmt.Sprintf(
					"identity provider %s (spec.federation.identityProviders[%d]) is this backend's OpenID Connect provider already: "+
						"a Keystone serves at most one OpenID Connect provider (mod_auth_openidc reads one per virtual host)",
					f.IdentityProviders[firstOpenID].ID, firstOpenID)))
			}
		}
		switch {
		case !idPattern.MatchString(idp.ID) || len(idp.ID) > 64:
			errs = append(errs, field.Invalid(ip.Child("id"), idp.ID, "must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit"))
		case ids[idp.ID]:
			errs = append(errs, field.Duplicate(ip.Child("id"), idp.ID))
		}
		ids[idp.ID] = true
		for j, r := range idp.RemoteIDs {
			rp := ip.Child("remoteIDs").Index(j)
			if r == "" {
				errs = append(errs, field.Required(rp, "a remote id is not empty"))
				continue
			}
			if other, ok := remoteIDs[r]; ok && other != idp.ID {
				errs = append(errs, field.Invalid(rp, r, fmt.Sprintf("is also a remote id of identity provider %s: Keystone keeps a remote id to one identity provider", other)))
			}
			remoteIDs[r] = idp.ID
		}
		errs = append(errs, protocolErrors(ip, idp)...)
		errs = append(errs, mappingErrors(ip.Child("mapping"), idp.Mapping)...)
	}
	return errs
}

// protocolErrors lists the problems of idp's protocol and its settings block.
func protocolErrors(ip *field.Path, idp *v1alpha1.IdentityProviderSpec) field.ErrorList {
	var errs field.ErrorList
	switch idp.Protocol {
	case v1alpha1.ProtocolOpenID:
		if idp.SAML2 != nil {
			errs = append(errs, field.Forbidden(ip.Child("saml2"), "is set, but protocol is not saml2"))
		}
		o := idp.OpenID
		if o == nil {
			return append(errs, field.Required(ip.Child("openid"), "is required when protocol is openid"))
		}
		op := ip.Child("openid")
		switch {
		case (o.MetadataURL == "") == (o.Issuer == ""):
			errs = append(errs, field.Invalid(op, field.OmitValueType{}, "set exactly one of metadataURL and issuer"))
		case o.MetadataURL != "":
			if err := checkHTTPSURL(o.MetadataURL); err != nil {
				errs = append(errs, field.Invalid(op.Child("metadataURL"), o.MetadataURL, err.Error()))
			}
		default:
			if err := checkHTTPSURL(o.Issuer); err != nil {
				errs = append(errs, field.Invalid(op.Child("issuer"), o.Issuer, err.Error()))
			}
		}
		if o.ClientID == "" || strings.ContainsFunc(o.ClientID, func(r rune) bool { return r <= ' ' || r > '~' }) {
			errs = append(errs, field.Invalid(op.Child("clientID"), o.ClientID, "must be printable ASCII without spaces"))
		}
		if o.ClientSecretRef.Name == "" {
			errs = append(errs, field.Required(op.Child("clientSecretRef", "name"), "the client secret comes from a Secret"))
		}
		if o.ClientSecretRef.Key == "" {
			errs = append(errs, field.Required(op.Child("clientSecretRef", "key"), "the client secret comes from a Secret key"))
		}
		for j, s := range o.Scopes {
			if !scopePattern.MatchString(s) {
				errs = append(errs, field.Invalid(op.Child("scopes").Index(j), s, "a scope is printable ASCII without spaces, '\"' or '\\'"))
			}
		}
	case v1alpha1.ProtocolSAML2:
		if idp.OpenID != nil {
			errs = append(errs, field.Forbidden(ip.Child("openid"), "is set, but protocol is not openid"))
		}
		s := idp.SAML2
		if s == nil {
			return append(errs, field.Required(ip.Child("saml2"), "is required when protocol is saml2"))
		}
		sp := ip.Child("saml2")
		m := s.IdPMetadata
		switch {
		case (m.Inline == "") == (m.ConfigMapKeyRef == nil):
			errs = append(errs, field.Invalid(sp.Child("idpMetadata"), field.OmitValueType{}, "set exactly one of inline and configMapKeyRef"))
		case m.Inline != "":
			if err := checkSAMLMetadata(m.Inline); err != nil {
				errs = append(errs, field.Invalid(sp.Child("idpMetadata", "inline"), field.OmitValueType{}, err.Error()))
			}
		case m.ConfigMapKeyRef.Name == "" || m.ConfigMapKeyRef.Key == "":
			errs = append(errs, field.Required(sp.Child("idpMetadata", "configMapKeyRef"), "name and key are required"))
		}
		if s.SPKeyPairSecretRef.Name == "" {
			errs = append(errs, field.Required(sp.Child("spKeyPairSecretRef", "name"), "the service provider's key pair comes from a Secret"))
		}
	default:
		errs = append(errs, field.NotSupported(ip.Child("protocol"), idp.Protocol, []string{v1alpha1.ProtocolOpenID, v1alpha1.ProtocolSAML2}))
	}
	return errs
}

// mappingErrors lists what Keystone's mapping schema refuses in rules.
func mappingErrors(mp *field.Path, rules []v1alpha1.MappingRule) field.ErrorList {
	var errs field.ErrorList
	if len(rules) == 0 {
		return field.ErrorList{field.Required(mp, "a mapping has at least one rule")}
	}
	for i, rule := range rules {
		rp := mp.Index(i)
		if len(rule.Local) == 0 {
			errs = append(errs, field.Required(rp.Child("local"), "a rule maps to at least one local entry"))
		}
		if len(rule.Remote) == 0 {
			errs = append(errs, field.Required(rp.Child("remote"), "a rule matches at least one remote entry"))
		}
		for j, l := range rule.Local {
			errs = append(errs, localErrors(rp.Child("local").Index(j), l)...)
		}
		for j, r := range rule.Remote {
			errs = append(errs, remoteErrors(rp.Child("remote").Index(j), r)...)
		}
	}
	return errs
}

// localErrors lists the problems of one local entry.
func localErrors(lp *field.Path, l v1alpha1.MappingLocal) field.ErrorList {
	var errs field.ErrorList
	if l.User == nil && l.Group == nil && l.Groups == "" && l.GroupIDs == "" && l.Domain == nil && l.Projects == nil {
		errs = append(errs, field.Required(lp, "a local entry names a user, group, groups, group_ids, domain or projects"))
	}
	if u := l.User; u != nil {
		up := lp.Child("user")
		if u.ID == "" && u.Name == "" && u.Email == "" && u.Domain == nil && u.Type == "" {
			errs = append(errs, field.Required(up, "a user names at least one of id, name, email, domain and type"))
		}
		if u.Type != "" && u.Type != "ephemeral" && u.Type != "local" {
			errs = append(errs, field.NotSupported(up.Child("type"), u.Type, []string{"ephemeral", "local"}))
		}
		errs = append(errs, domainErrors(up.Child("domain"), u.Domain)...)
	}
	if g := l.Group; g != nil {
		gp := lp.Child("group")
		switch {
		case (g.ID == "") == (g.Name == ""):
			errs = append(errs, field.Invalid(gp, field.OmitValueType{}, "set exactly one of id and name"))
		case g.Name != "" && g.Domain == nil:
			errs = append(errs, field.Required(gp.Child("domain"), "a group by name needs its domain"))
		case g.ID != "" && g.Domain != nil:
			errs = append(errs, field.Forbidden(gp.Child("domain"), "a group by id takes no domain"))
		}
		errs = append(errs, domainErrors(gp.Child("domain"), g.Domain)...)
	}
	errs = append(errs, domainErrors(lp.Child("domain"), l.Domain)...)
	for k, pr := range l.Projects {
		pp := lp.Child("projects").Index(k)
		if pr.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), "a project has a name"))
		}
		if len(pr.Roles) == 0 {
			errs = append(errs, field.Required(pp.Child("roles"), "a project lists at least one role"))
		}
		for n, role := range pr.Roles {
			if role.Name == "" {
				errs = append(errs, field.Required(pp.Child("roles").Index(n).Child("name"), "a role has a name"))
			}
		}
	}
	return errs
}

// domainErrors lists the problems of a domain reference (nil: none).
func domainErrors(dp *field.Path, d *v1alpha1.MappedDomain) field.ErrorList {
	if d != nil && d.ID == "" && d.Name == "" {
		return field.ErrorList{field.Required(dp, "a domain names its id or its name")}
	}
	return nil
}

// remoteErrors lists the problems of one remote entry.
func remoteErrors(rp *field.Path, r v1alpha1.MappingRemote) field.ErrorList {
	var errs field.ErrorList
	if r.Type == "" {
		errs = append(errs, field.Required(rp.Child("type"), "a remote entry names the attribute it matches"))
	}
	var set []string
	for _, l := range []struct {
		name   string
		values []string
	}{{"any_one_of", r.AnyOneOf}, {"not_any_of", r.NotAnyOf}, {"blacklist", r.Blacklist}, {"whitelist", r.Whitelist}} {
		if l.values == nil {
			continue
		}
		set = append(set, l.name)
		if len(l.values) == 0 {
			errs = append(errs, field.Required(rp.Child(l.name), "lists at least one value when set"))
		}
	}
	if len(set) > 1 {
		errs = append(errs, field.Invalid(rp, field.OmitValueType{},
			fmt.Sprintf("sets %s: set at most one of any_one_of, not_any_of, blacklist and whitelist", strings.Join(set, " and "))))
	}
	if r.Regex != nil && r.AnyOneOf == nil && r.NotAnyOf == nil {
		errs = append(errs, field.Forbidden(rp.Child("regex"), "is used only with any_one_of or not_any_of"))
	}
	return errs
}

// checkHTTPSURL refuses a URL that is not https with a host, or that carries user
// information, a query or a fragment.
func checkHTTPSURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return errors.New("must be an https:// URL with a host and without user information, query or fragment")
	}
	return nil
}

// checkSAMLMetadata refuses a document whose root element is not a SAML metadata
// EntityDescriptor or EntitiesDescriptor. The error never quotes the document.
func checkSAMLMetadata(doc string) error {
	dec := xml.NewDecoder(strings.NewReader(doc))
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return errors.New("holds no XML element: expected a SAML metadata EntityDescriptor")
		}
		if err != nil {
			return errors.New("is not well-formed XML: expected a SAML metadata EntityDescriptor")
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Space != "urn:oasis:names:tc:SAML:2.0:metadata" ||
				(se.Name.Local != "EntityDescriptor" && se.Name.Local != "EntitiesDescriptor") {
				return fmt.Errorf("has root element %s: expected a SAML metadata EntityDescriptor (namespace urn:oasis:names:tc:SAML:2.0:metadata)", se.Name.Local)
			}
			return nil
		}
	}
}

// providerDocuments are one identity provider of a backend with the documents read
// for it from the cluster: the client secret of an OpenID Connect provider, the IdP
// metadata and the service provider's key pair of a SAML provider.
//
// passphrase is the OpenID Connect provider's session passphrase
// (OIDCCryptoPassphrase), random and generated once into the Keystone's Secret
// names.OpenIDPassphraseSecretName (ensurePassphrase); it is not a user's document and
// readProviderDocuments leaves it empty.
type providerDocuments struct {
	spec         *v1alpha1.IdentityProviderSpec
	clientSecret string
	passphrase   string
	idpMetadata  string
	spCert       []byte
	spKey        []byte
}

// readProviderDocuments reads through c what idp, a provider of b, needs beyond b: its
// client secret (secrets.GetSecretValue, as the bind password), or its IdP metadata
// ConfigMap key and its key pair Secret. A missing object or key, an empty or
// unusable value returns why in words (naming the object and key, never a value); any
// other failure the error.
func readProviderDocuments(ctx context.Context, c client.Client, b *v1alpha1.KeystoneIdentityBackend,
	idp *v1alpha1.IdentityProviderSpec) (docs providerDocuments, why string, err error) {
	docs.spec = idp
	wrap := func(what string, err error) error {
		return fmt.Errorf("reading the %s of identity provider %s of KeystoneIdentityBackend %s/%s: %w", what, idp.ID, b.Namespace, b.Name, err)
	}
	switch idp.Protocol {
	case v1alpha1.ProtocolOpenID:
		ref := idp.OpenID.ClientSecretRef
		key := client.ObjectKey{Namespace: b.Namespace, Name: ref.Name}
		value, err := secrets.GetSecretValue(ctx, c, key, ref.Key)
		switch {
		case apierrors.IsNotFound(err):
			return docs, fmt.Sprintf("client secret Secret %s does not exist", key), nil
		case errors.Is(err, secrets.ErrKeyNotFound):
			return docs, fmt.Sprintf("client secret Secret %s has no key %q", key, ref.Key), nil
		case err != nil:
			return docs, "", wrap("client secret", err)
		case value == "":
			return docs, fmt.Sprintf("client secret Secret %s holds an empty %q", key, ref.Key), nil
		case !serverValueOK(value):
			return docs, fmt.Sprintf("client secret Secret %s key %q holds a control character or \"${\", which the web server configuration cannot carry", key, ref.Key), nil
		}
		docs.clientSecret = value
	case v1alpha1.ProtocolSAML2:
		docs.idpMetadata = idp.SAML2.IdPMetadata.Inline
		if ref := idp.SAML2.IdPMetadata.ConfigMapKeyRef; ref != nil {
			key := client.ObjectKey{Namespace: b.Namespace, Name: ref.Name}
			var cm corev1.ConfigMap
			err := c.Get(ctx, key, &cm)
			switch {
			case apierrors.IsNotFound(err):
				return docs, fmt.Sprintf("IdP metadata ConfigMap %s does not exist", key), nil
			case err != nil:
				return docs, "", wrap("IdP metadata", fmt.Errorf("get ConfigMap %s: %w", key, err))
			}
			doc, ok := cm.Data[ref.Key]
			if !ok {
				return docs, fmt.Sprintf("IdP metadata ConfigMap %s has no key %q", key, ref.Key), nil
			}
			if err := checkSAMLMetadata(doc); err != nil {
				return docs, fmt.Sprintf("IdP metadata ConfigMap %s key %q %v", key, ref.Key, err), nil
			}
			docs.idpMetadata = doc
		}
		key := client.ObjectKey{Namespace: b.Namespace, Name: idp.SAML2.SPKeyPairSecretRef.Name}
		var s corev1.Secret
		err := c.Get(ctx, key, &s)
		switch {
		case apierrors.IsNotFound(err):
			return docs, fmt.Sprintf("service provider key pair Secret %s does not exist", key), nil
		case err != nil:
			return docs, "", wrap("service provider key pair", fmt.Errorf("get Secret %s: %w", key, err))
		}
		docs.spCert, docs.spKey = s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
		if len(docs.spCert) == 0 || len(docs.spKey) == 0 {
			return docs, fmt.Sprintf("service provider key pair Secret %s lacks %s or %s", key, corev1.TLSCertKey, corev1.TLSPrivateKeyKey), nil
		}
		if _, err := tls.X509KeyPair(docs.spCert, docs.spKey); err != nil {
			// The parse error describes the PEM structure, never the key's bytes.
			return docs, fmt.Sprintf("service provider key pair Secret %s holds no matching PEM certificate and key", key), nil
		}
	}
	return docs, "", nil
}

// serverValueOK reports whether v can be written as a quoted web server directive
// argument: no control character (a newline would end the directive) and no "${",
// which the server expands as a variable.
func serverValueOK(v string) bool {
	return !strings.Contains(v, "${") && !strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f })
}

// quote writes v as a double-quoted web server directive argument, its backslashes
// and double quotes escaped. v has passed serverValueOK.
func quote(v string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// renderFederation renders the federation Secret's data from the providers of the
// Keystone's backends, in order, and the union of their trusted dashboards:
//
//   - FederationConfigFile, the keystone.conf fragment: [auth] methods (keystone's
//     defaults and the protocols in use), [federation] trusted_dashboard (one line per
//     dashboard, in order, without repeats), and [openid] / [saml2]
//     remote_id_attribute for the protocols in use;
//   - per OpenID Connect provider (at most one: federationOf and openIDHolder leave
//     out any other), httpd-openid-<id>.conf: the mod_auth_openidc relying party
//     (discovery URL, client id and secret, scopes, the session passphrase of
//     providerDocuments.passphrase, random and kept in a Secret so every replica
//     agrees and it survives restarts and client secret rotations, the redirect URI
//     below the provider's auth path) and the locations of its API and WebSSO paths;
//   - per SAML provider, httpd-saml2-<id>.conf, the mod_auth_mellon locations of its
//     API and WebSSO paths, and the files they name in FederationDir:
//     saml2-<id>-idp-metadata.xml, saml2-<id>-sp.crt and saml2-<id>-sp.key.
//
// No providers render nothing (nil); an OpenID Connect provider without a passphrase
// is an error. The result is deterministic, so equal input names the same
// content-addressed Secret.
func renderFederation(providers []providerDocuments, dashboards []string) (map[string][]byte, error) {
	if len(providers) == 0 {
		return nil, nil
	}
	data := map[string][]byte{}
	methods := slices.Clone(defaultAuthMethods)
	sections := config.Sections{}
	for _, p := range providers {
		id := p.spec.ID
		if !slices.Contains(methods, p.spec.Protocol) {
			methods = append(methods, p.spec.Protocol)
		}
		switch p.spec.Protocol {
		case v1alpha1.ProtocolOpenID:
			if p.passphrase == "" {
				return nil, fmt.Errorf("identity provider %s: no session passphrase", id)
			}
			sections["openid"] = map[string][]string{"remote_id_attribute": {openIDRemoteIDAttribute}}
			data[openIDServerFile(id)] = []byte(openIDServerConfig(p))
		case v1alpha1.ProtocolSAML2:
			sections["saml2"] = map[string][]string{"remote_id_attribute": {saml2RemoteIDAttribute}}
			data[saml2ServerFile(id)] = []byte(saml2ServerConfig(id))
			data[saml2MetadataFile(id)] = []byte(p.idpMetadata)
			data[saml2CertFile(id)] = slices.Clone(p.spCert)
			data[saml2KeyFile(id)] = slices.Clone(p.spKey)
		}
	}
	sections["auth"] = map[string][]string{"methods": {strings.Join(methods, ",")}}
	var trusted []string
	for _, d := range dashboards {
		if !slices.Contains(trusted, d) {
			trusted = append(trusted, d)
		}
	}
	if len(trusted) > 0 {
		sections["federation"] = map[string][]string{"trusted_dashboard": trusted}
	}
	conf, err := config.RenderINI(sections)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", FederationConfigFile, err)
	}
	data[FederationConfigFile] = []byte(conf)
	return data, nil
}

// openIDServerConfig is the mod_auth_openidc fragment of OpenID Connect provider p.
func openIDServerConfig(p providerDocuments) string {
	o, id := p.spec.OpenID, p.spec.ID
	metadata := o.MetadataURL
	if metadata == "" {
		metadata = strings.TrimSuffix(o.Issuer, "/") + "/.well-known/openid-configuration"
	}
	scopes := o.Scopes
	if len(scopes) == 0 {
		scopes = defaultOpenIDScopes
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# OpenID Connect identity provider %s, rendered by the Keystone operator.\n", id)
	fmt.Fprintf(&b, "OIDCProviderMetadataURL %s\n", quote(metadata))
	fmt.Fprintf(&b, "OIDCClientID %s\n", quote(o.ClientID))
	fmt.Fprintf(&b, "OIDCClientSecret %s\n", quote(p.clientSecret))
	fmt.Fprintf(&b, "OIDCScope %s\n", quote(strings.Join(scopes, " ")))
	b.WriteString("OIDCResponseType \"code\"\n")
	b.WriteString("OIDCClaimPrefix \"OIDC-\"\n")
	fmt.Fprintf(&b, "OIDCCryptoPassphrase %s\n", quote(p.passphrase))
	fmt.Fprintf(&b, "OIDCRedirectURI %s\n", quote(protocolPath(id, v1alpha1.ProtocolOpenID)+"/redirect"))
	for _, loc := range []string{protocolPath(id, v1alpha1.ProtocolOpenID), webSSOPath(id, v1alpha1.ProtocolOpenID)} {
		fmt.Fprintf(&b, "<Location %s>\n    AuthType \"openid-connect\"\n    Require valid-user\n</Location>\n", quote(loc))
	}
	return b.String()
}

// saml2ServerConfig is the mod_auth_mellon fragment of SAML provider id.
func saml2ServerConfig(id string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# SAML 2.0 identity provider %s, rendered by the Keystone operator.\n", id)
	for _, loc := range []string{protocolPath(id, v1alpha1.ProtocolSAML2), webSSOPath(id, v1alpha1.ProtocolSAML2)} {
		fmt.Fprintf(&b, "<Location %s>\n", quote(loc))
		b.WriteString("    AuthType \"Mellon\"\n    MellonEnable \"auth\"\n    Require valid-user\n    MellonIdP \"IDP\"\n")
		fmt.Fprintf(&b, "    MellonEndpointPath %s\n", quote(protocolPath(id, v1alpha1.ProtocolSAML2)+"/mellon"))
		fmt.Fprintf(&b, "    MellonSPCertFile %s\n", quote(path.Join(FederationDir, saml2CertFile(id))))
		fmt.Fprintf(&b, "    MellonSPPrivateKeyFile %s\n", quote(path.Join(FederationDir, saml2KeyFile(id))))
		fmt.Fprintf(&b, "    MellonIdPMetadataFile %s\n", quote(path.Join(FederationDir, saml2MetadataFile(id))))
		b.WriteString("</Location>\n")
	}
	return b.String()
}
