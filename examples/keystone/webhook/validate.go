package webhook

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/reconciler-sdk/admit"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
)

// +kubebuilder:webhook:path=/validate-keystone-openstack-c5c3-io-v1alpha1-keystone,mutating=false,failurePolicy=fail,sideEffects=None,groups=keystone.openstack.c5c3.io,resources=keystones,verbs=create;update,versions=v1alpha1,name=vkeystone.keystone.openstack.c5c3.io,admissionReviewVersions=v1

// Validator refuses a Keystone that the controller would refuse for good (a terminal
// error) from the object alone, the checks the package's Validation section lists
// (keys.CheckRotationSafety, keystone.CheckSettings), as an admit.Validator: one
// Invalid error of kind Keystone listing every problem by field path, on update only
// the new ones. It is the validating webhook [SetupWebhookWithManager] registers.
type Validator = admit.Validator[*v1alpha1.Keystone, keystoneRules]

// +kubebuilder:webhook:path=/validate-keystone-openstack-c5c3-io-v1alpha1-keystoneidentitybackend,mutating=false,failurePolicy=fail,sideEffects=None,groups=keystone.openstack.c5c3.io,resources=keystoneidentitybackends,verbs=create;update,versions=v1alpha1,name=vkeystoneidentitybackend.keystone.openstack.c5c3.io,admissionReviewVersions=v1

// IdentityBackendValidator refuses a KeystoneIdentityBackend whose domain file cannot
// be rendered whatever its bind password (identitybackend.CheckDomainConfig), which the
// IdentityBackend reconciler would only report as DomainReady False (InvalidConfig),
// and one whose spec.federation Keystone would refuse or the Keystone's
// IdentityBackends row would leave out (identitybackend.ValidateFederation: mapping
// rules outside Keystone's mapping schema, a remote id on two providers, a URL that
// is not https, inline IdP metadata that is not SAML metadata); an admit.Validator
// like [Validator]. A KeystoneIdentityBackend needs no defaulting
// webhook: its only default, driver ldap, is the CRD's.
type IdentityBackendValidator = admit.Validator[*v1alpha1.KeystoneIdentityBackend, backendRules]

// keystoneRules are the checks of a Keystone that [Validator] runs.
type keystoneRules struct{}

// GroupKind is the Keystone's.
func (keystoneRules) GroupKind() schema.GroupKind {
	return v1alpha1.GroupVersion.WithKind("Keystone").GroupKind()
}

// Problems lists every problem of k.
func (keystoneRules) Problems(k *v1alpha1.Keystone) field.ErrorList { return validateKeystone(k) }

// backendRules are the checks of a KeystoneIdentityBackend that
// [IdentityBackendValidator] runs.
type backendRules struct{}

// GroupKind is the KeystoneIdentityBackend's.
func (backendRules) GroupKind() schema.GroupKind {
	return v1alpha1.GroupVersion.WithKind("KeystoneIdentityBackend").GroupKind()
}

// Problems lists every problem of b.
func (backendRules) Problems(b *v1alpha1.KeystoneIdentityBackend) field.ErrorList {
	return validateBackend(b)
}

// validateKeystone lists every problem of k.
func validateKeystone(k *v1alpha1.Keystone) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	seen := map[string]bool{}
	add := func(e *field.Error) {
		if !seen[e.Error()] {
			seen[e.Error()] = true
			errs = append(errs, e)
		}
	}
	for _, e := range rotationErrors(spec, "fernet", keystone.FernetRotationSettings(k)) {
		add(e)
	}
	for _, e := range rotationErrors(spec, "credential", keystone.CredentialRotationSettings(k)) {
		add(e)
	}
	named := map[string]bool{}
	for _, e := range errs {
		named[e.Field] = true
	}
	if err := keystone.CheckSettings(k); err != nil {
		for _, msg := range strings.Split(err.Error(), "\n") {
			p := settingsPath(spec, msg)
			if !named[p.String()] {
				add(field.Invalid(p, field.OmitValueType{}, msg))
			}
		}
	}
	return errs
}

// rotationErrors is the problem, if any, of the rotation of the key repository repo
// ("fernet" or "credential") with rs, on the field it is about.
func rotationErrors(spec *field.Path, repo string, rs keystone.KeyRotationSettings) field.ErrorList {
	err := rs.Check()
	if err == nil {
		return nil
	}
	p, token := spec.Child(repo), spec.Child("token")
	var e *field.Error
	switch {
	case errors.Is(err, keys.ErrUnsafeRotation):
		e = field.Invalid(p.Child("maxActiveKeys"), rs.MaxActiveKeys, fmt.Sprintf("%v; or lengthen %s, or shorten %s or %s",
			err, p.Child("rotationInterval"), token.Child("expiration"), token.Child("allowExpiredWindow")))
	case rs.MaxActiveKeys < keys.MinActiveKeys:
		e = field.Invalid(p.Child("maxActiveKeys"), rs.MaxActiveKeys, err.Error())
	case rs.RotationInterval <= 0:
		e = field.Invalid(p.Child("rotationInterval"), rs.RotationInterval.String(), err.Error())
	case rs.TokenExpiration < 0:
		e = field.Invalid(token.Child("expiration"), rs.TokenExpiration.String(), err.Error())
	case rs.AllowExpiredWindow < 0:
		e = field.Invalid(token.Child("allowExpiredWindow"), rs.AllowExpiredWindow.String(), err.Error())
	default:
		e = field.Invalid(p, field.OmitValueType{}, err.Error())
	}
	return field.ErrorList{e}
}

var (
	// settingsField matches the field of settings.Settings a settings.Render error
	// names right after the sentinel's text, e.g. Settings.ExtraConfig["token"]["x"];
	// group 1 is the field, group 2 the index or keys after it.
	settingsField = regexp.MustCompile(`^` + regexp.QuoteMeta(settings.ErrInvalidSettings.Error()) +
		`: Settings\.([A-Za-z]+)((?:\[[0-9]+\]|\["(?:[^"\\]|\\.)*"\])*)`)
	// domainField matches what a settings.DomainConfig error names: the domain, or
	// sections with up to two keys; group 1 is "domain" or "sections", group 2 the
	// keys.
	domainField = regexp.MustCompile(`^` + regexp.QuoteMeta(settings.ErrInvalidSettings.Error()) +
		`: (domain|sections)((?:\["(?:[^"\\]|\\.)*"\])*)`)
	// subscript is one index or quoted key of such a path.
	subscript = regexp.MustCompile(`\[([0-9]+)\]|\[("(?:[^"\\]|\\.)*")\]`)
)

// keystoneFields maps a field of settings.Settings to the path, below spec, of the
// Keystone field keystone.CheckSettings fills it from.
var keystoneFields = map[string][]string{
	"PublicEndpoint":     {"bootstrap", "publicURL"},
	"MemcachedServers":   {"memcachedServers"},
	"MaxActiveKeys":      {"fernet", "maxActiveKeys"},
	"TokenExpiration":    {"token", "expiration"},
	"AllowExpiredWindow": {"token", "allowExpiredWindow"},
	"ExtraConfig":        {"extraConfig"},
}

// settingsPath is the path of the Keystone field the settings.Render error msg is
// about, with the index or keys msg names after it; spec itself when msg names no
// field that comes from a Keystone field.
func settingsPath(spec *field.Path, msg string) *field.Path {
	m := settingsField.FindStringSubmatch(msg)
	if m == nil {
		return spec
	}
	names, ok := keystoneFields[m[1]]
	if !ok {
		return spec
	}
	return subscripts(spec.Child(names[0], names[1:]...), m[2])
}

// subscripts is p followed by each index and quoted key of s; it stops at the first
// that does not parse.
func subscripts(p *field.Path, s string) *field.Path {
	for _, step := range subscript.FindAllStringSubmatch(s, -1) {
		if step[1] != "" {
			i, err := strconv.Atoi(step[1])
			if err != nil {
				return p
			}
			p = p.Index(i)
			continue
		}
		key, err := strconv.Unquote(step[2])
		if err != nil {
			return p
		}
		p = p.Key(key)
	}
	return p
}

// validateBackend lists every problem of b's domain file and of its federation
// (identitybackend.ValidateFederation: the mapping rules Keystone would refuse, among
// them).
func validateBackend(b *v1alpha1.KeystoneIdentityBackend) field.ErrorList {
	return append(domainFileErrors(b), identitybackend.ValidateFederation(b)...)
}

// domainFileErrors lists every problem of b's domain file.
func domainFileErrors(b *v1alpha1.KeystoneIdentityBackend) field.ErrorList {
	err := identitybackend.CheckDomainConfig(b)
	if err == nil {
		return nil
	}
	spec := field.NewPath("spec")
	if errors.Is(err, identitybackend.ErrBindPasswordInConfig) {
		return field.ErrorList{field.Forbidden(spec.Child("config").Key("ldap").Key("password"),
			"the bind password comes from spec.passwordSecretRef; remove it from spec.config")}
	}
	prefix := fmt.Sprintf("KeystoneIdentityBackend %s/%s: ", b.Namespace, b.Name)
	var errs field.ErrorList
	for _, msg := range strings.Split(err.Error(), "\n") {
		msg = strings.TrimPrefix(msg, prefix)
		p := spec.Child("config")
		if m := domainField.FindStringSubmatch(msg); m != nil {
			if m[1] == "domain" {
				p = spec.Child("domain")
			} else {
				p = subscripts(p, m[2])
			}
		}
		errs = append(errs, field.Invalid(p, field.OmitValueType{}, msg))
	}
	return errs
}
