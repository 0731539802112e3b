package webhook

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
)

// +kubebuilder:webhook:path=/validate-keystone-openstack-c5c3-io-v1alpha1-keystone,mutating=false,failurePolicy=fail,sideEffects=None,groups=keystone.openstack.c5c3.io,resources=keystones,verbs=create;update,versions=v1alpha1,name=vkeystone.keystone.openstack.c5c3.io,admissionReviewVersions=v1

// Validator refuses a Keystone that the controller would refuse for good (a terminal
// error) from the object alone, checks the CRD schema cannot express. It is the
// admission Validator of the validating webhook that [SetupWebhookWithManager]
// registers; the checks are listed on [Validator.ValidateCreate].
type Validator struct{}

var _ admission.Validator[*v1alpha1.Keystone] = Validator{}

// ValidateCreate admits k or refuses it with an Invalid error (apierrors.IsInvalid) of
// kind Keystone that lists every problem at once, sorted by field path:
//
//   - key rotation that would remove a key a valid token may still need: for
//     spec.fernet and for spec.credential, the numbers of
//     keystone.FernetRotationSettings and keystone.CredentialRotationSettings
//     (defaults applied) checked with their Check, keys.CheckRotationSafety, the check
//     the key repository steps refuse the Keystone with (UnsafeRotation). An unsafe
//     rotation is Invalid on spec.fernet.maxActiveKeys (or spec.credential's) with the
//     smallest safe value, naming rotationInterval, spec.token.expiration and
//     spec.token.allowExpiredWindow as the other ways out; a number that makes no sense
//     on its own (InvalidRotationSettings) is Invalid on its own field;
//   - every problem settings.Render reports for keystone.conf rendered from the
//     Keystone (keystone.CheckSettings), which the Config step refuses with
//     ConfigError, as Invalid with Render's text on the field it comes from, for
//     example spec.memcachedServers[1], spec.bootstrap.publicURL or
//     spec.extraConfig[database][connection], or on spec where no single field
//     produces it. A field the rotation check already names is not named twice.
//
// Messages name fields and extraConfig keys, never an extraConfig value. There are no
// warnings.
func (Validator) ValidateCreate(_ context.Context, k *v1alpha1.Keystone) (admission.Warnings, error) {
	return nil, invalid(keystoneKind, k.Name, validateKeystone(k))
}

// ValidateUpdate checks newObj as [Validator.ValidateCreate] does, but refuses only
// problems that oldObj did not already have: a problem carried over unchanged (the
// same field, type and message) is returned as a warning instead, so a Keystone stored
// before the webhook was installed can still be edited, and its finalizers removed,
// while every edit that introduces a problem is refused.
func (Validator) ValidateUpdate(_ context.Context, oldObj, newObj *v1alpha1.Keystone) (admission.Warnings, error) {
	warnings, introduced := carriedOver(validateKeystone(oldObj), validateKeystone(newObj))
	return warnings, invalid(keystoneKind, newObj.Name, introduced)
}

// ValidateDelete admits every deletion: a Keystone being removed needs no consistent
// settings.
func (Validator) ValidateDelete(context.Context, *v1alpha1.Keystone) (admission.Warnings, error) {
	return nil, nil
}

// +kubebuilder:webhook:path=/validate-keystone-openstack-c5c3-io-v1alpha1-keystoneidentitybackend,mutating=false,failurePolicy=fail,sideEffects=None,groups=keystone.openstack.c5c3.io,resources=keystoneidentitybackends,verbs=create;update,versions=v1alpha1,name=vkeystoneidentitybackend.keystone.openstack.c5c3.io,admissionReviewVersions=v1

// IdentityBackendValidator refuses a KeystoneIdentityBackend whose domain file cannot
// be rendered whatever its bind password, which the IdentityBackend reconciler would
// only report as DomainReady False (InvalidConfig). A KeystoneIdentityBackend needs no
// defaulting webhook: every default it has (driver ldap) is the CRD's.
type IdentityBackendValidator struct{}

var _ admission.Validator[*v1alpha1.KeystoneIdentityBackend] = IdentityBackendValidator{}

// ValidateCreate admits b or refuses it with an Invalid error of kind
// KeystoneIdentityBackend listing what identitybackend.CheckDomainConfig reports:
//
//   - a spec.config that sets [ldap] password, as Forbidden on
//     spec.config[ldap][password]: the bind password comes from
//     spec.passwordSecretRef only;
//   - a domain name settings.DomainConfig refuses (one the CRD pattern admits, such
//     as one containing ".."), as Invalid on spec.domain;
//   - a section or option of spec.config that cannot be written to the domain file,
//     as Invalid on spec.config[section] or spec.config[section][option].
//
// Messages never quote an option's value. There are no warnings.
func (IdentityBackendValidator) ValidateCreate(_ context.Context, b *v1alpha1.KeystoneIdentityBackend) (admission.Warnings, error) {
	return nil, invalid(backendKind, b.Name, validateBackend(b))
}

// ValidateUpdate checks newObj as [IdentityBackendValidator.ValidateCreate] does and,
// like [Validator.ValidateUpdate], turns a problem carried over unchanged from oldObj
// into a warning.
func (IdentityBackendValidator) ValidateUpdate(_ context.Context, oldObj, newObj *v1alpha1.KeystoneIdentityBackend) (admission.Warnings, error) {
	warnings, introduced := carriedOver(validateBackend(oldObj), validateBackend(newObj))
	return warnings, invalid(backendKind, newObj.Name, introduced)
}

// ValidateDelete admits every deletion.
func (IdentityBackendValidator) ValidateDelete(context.Context, *v1alpha1.KeystoneIdentityBackend) (admission.Warnings, error) {
	return nil, nil
}

var (
	keystoneKind = v1alpha1.GroupVersion.WithKind("Keystone").GroupKind()
	backendKind  = v1alpha1.GroupVersion.WithKind("KeystoneIdentityBackend").GroupKind()
)

// invalid is the Invalid error of the object of kind gk named name listing errs, nil
// when errs is empty.
func invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, name, errs)
}

// carriedOver splits the problems of the new object into those the old object already
// had, as warnings, and those the update introduces.
func carriedOver(oldErrs, newErrs field.ErrorList) (admission.Warnings, field.ErrorList) {
	existing := map[string]bool{}
	for _, e := range oldErrs {
		existing[e.Error()] = true
	}
	var warnings admission.Warnings
	var introduced field.ErrorList
	for _, e := range newErrs {
		if existing[e.Error()] {
			warnings = append(warnings, e.Error())
			continue
		}
		introduced = append(introduced, e)
	}
	return warnings, introduced
}

// validateKeystone lists every problem of k, sorted by field path.
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
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
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

// validateBackend lists every problem of b's domain file, sorted by field path.
func validateBackend(b *v1alpha1.KeystoneIdentityBackend) field.ErrorList {
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
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}
