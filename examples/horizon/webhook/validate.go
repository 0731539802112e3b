package webhook

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/reconciler-sdk/admit"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
)

// +kubebuilder:webhook:path=/validate-horizon-openstack-c5c3-io-v1alpha1-horizon,mutating=false,failurePolicy=fail,sideEffects=None,groups=horizon.openstack.c5c3.io,resources=horizons,verbs=create;update,versions=v1alpha1,name=vhorizon.horizon.openstack.c5c3.io,admissionReviewVersions=v1

// Validator refuses a Horizon whose fields contradict each other or that the operator
// could not render into Django settings, the checks the package's Validation section
// lists, as an admit.Validator: one Invalid error of kind Horizon listing every problem
// by field path, on update only the problems the old Horizon did not have. It is the
// validating webhook [SetupWebhookWithManager] registers.
type Validator = admit.Validator[*v1alpha1.Horizon, rules]

// rules are the checks of a Horizon that [Validator] runs. The networkPolicy check
// repeats the CRD's, for a CRD installed without that rule.
type rules struct{}

// GroupKind is the Horizon's.
func (rules) GroupKind() schema.GroupKind {
	return v1alpha1.GroupVersion.WithKind("Horizon").GroupKind()
}

// Problems lists every problem of h.
func (rules) Problems(h *v1alpha1.Horizon) field.ErrorList { return validate(h) }

// validate lists every problem of h.
func validate(h *v1alpha1.Horizon) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList

	if np := h.Spec.NetworkPolicy; np != nil && len(np.Ingress) == 0 {
		errs = append(errs, field.Required(spec.Child("networkPolicy", "ingress"),
			"at least one rule is required: an empty list would refuse all traffic to the dashboard"))
	}

	s := settings.FromSpec(&h.Spec)
	declared := settings.DeclaredSettings(s)
	keys := make([]string, 0, len(h.Spec.ExtraConfig))
	for k := range h.Spec.ExtraConfig {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	backends := identityBackends(h)
	for _, k := range keys {
		path, ok := declared[k]
		if !ok && len(backends) > 0 && (k == "WEBSSO_CHOICES" || k == "WEBSSO_IDP_MAPPING") {
			// The identity backends' providers add to both at reconcile time.
			path, ok = "websso.identityBackends", true
		}
		if ok {
			errs = append(errs, field.Forbidden(spec.Child("extraConfig", k),
				"also set by "+spec.String()+"."+path+"; remove one of them"))
		}
	}
	if h.Spec.WebSSO != nil {
		errs = append(errs, identityBackendErrors(spec.Child("websso", "identityBackends"), h.Spec.WebSSO.IdentityBackends)...)
	}

	if _, err := settings.Render(s); err != nil {
		errs = append(errs, renderErrors(spec, err)...)
	}
	return errs
}

// renderErrors turns an error of settings.Render, the errors.Join of one error per
// problem, into one Invalid per problem with its text, on the field it names.
func renderErrors(spec *field.Path, err error) field.ErrorList {
	list := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok && isJoin(err, joined.Unwrap()) {
		list = joined.Unwrap()
	}
	out := make(field.ErrorList, 0, len(list))
	for _, e := range list {
		msg := e.Error()
		out = append(out, field.Invalid(settingsPath(spec, msg), field.OmitValueType{}, msg))
	}
	return out
}

// isJoin reports whether err is the errors.Join of parts, whose text is theirs one a
// line, rather than one error wrapping several (fmt.Errorf with more than one %w),
// whose text is its own.
func isJoin(err error, parts []error) bool {
	msgs := make([]string, len(parts))
	for i, p := range parts {
		msgs[i] = p.Error()
	}
	return err.Error() == strings.Join(msgs, "\n")
}

var (
	// settingsField matches the Go field a settings.Render error names right after the
	// sentinel's text, e.g. Settings.WebSSO.IDPMapping["oidc"].IDP; group 1 is the
	// part after "Settings".
	settingsField = regexp.MustCompile(`^` + regexp.QuoteMeta(settings.ErrInvalidSettings.Error()) +
		`: Settings((?:\.[A-Za-z]+|\[[0-9]+\]|\["(?:[^"\\]|\\.)*"\])*)`)
	// settingsStep is one step of that path: a field, an index or a quoted map key.
	settingsStep = regexp.MustCompile(`\.([A-Za-z]+)|\[([0-9]+)\]|\[("(?:[^"\\]|\\.)*")\]`)
)

// resourceFields maps the Go path of a field of settings.Settings (indices left out) to
// the name of the Horizon field, below the top-level desired-state field, that
// settings.FromSpec fills it from.
var resourceFields = map[string]string{
	"KeystoneURL":                "keystoneEndpoint",
	"Image":                      "image",
	"TimeZone":                   "timeZone",
	"MemcachedServers":           "memcachedServers",
	"WebSSO":                     "websso",
	"WebSSO.Choices":             "choices",
	"WebSSO.Choices.ID":          "id",
	"WebSSO.Choices.Label":       "label",
	"WebSSO.InitialChoice":       "initialChoice",
	"WebSSO.IDPMapping":          "idpMapping",
	"WebSSO.IDPMapping.IDP":      "idp",
	"WebSSO.IDPMapping.Protocol": "protocol",
	"WebSSO.KeystoneURL":         "keystoneURL",
	"MultiDomain":                "multiDomain",
	"MultiDomain.DefaultDomain":  "defaultDomain",
	"MultiDomain.Domains":        "domains",
	"MultiDomain.Domains.ID":     "id",
	"MultiDomain.Domains.Label":  "label",
	"ExtraConfig":                "extraConfig",
}

// settingsPath is the path, below spec, of the Horizon field that the settings.Render
// error msg is about: the Go field it names, translated step by step as far as a step
// has a Horizon field; spec itself when the first step has none (AllowedHosts) or msg
// names no field. An extraConfig key is a child (spec.extraConfig.NAME), other map
// keys are keys (spec.websso.idpMapping[oidc]).
func settingsPath(spec *field.Path, msg string) *field.Path {
	m := settingsField.FindStringSubmatch(msg)
	if m == nil {
		return spec
	}
	p, goPath := spec, ""
	for _, step := range settingsStep.FindAllStringSubmatch(m[1], -1) {
		switch {
		case step[1] != "":
			if goPath != "" {
				goPath += "."
			}
			goPath += step[1]
			name, ok := resourceFields[goPath]
			if !ok {
				return p
			}
			p = p.Child(name)
		case step[2] != "":
			i, err := strconv.Atoi(step[2])
			if err != nil {
				return p
			}
			p = p.Index(i)
		default:
			key, err := strconv.Unquote(step[3])
			if err != nil {
				return p
			}
			if goPath == "ExtraConfig" {
				p = p.Child(key)
			} else {
				p = p.Key(key)
			}
		}
	}
	return p
}

// identityBackends is h's spec.websso.identityBackends when websso is enabled (the
// backends then add choices and mappings), else nil.
func identityBackends(h *v1alpha1.Horizon) []v1alpha1.IdentityBackendRef {
	if w := h.Spec.WebSSO; w != nil && w.Enabled {
		return w.IdentityBackends
	}
	return nil
}

// identityBackendErrors repeats the CRD's checks of spec.websso.identityBackends at
// path, for a CRD installed without them: each name a DNS subdomain name (a
// KeystoneIdentityBackend's name; the list has no namespace, a backend is always in the
// Horizon's own), each name once.
func identityBackendErrors(path *field.Path, refs []v1alpha1.IdentityBackendRef) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]bool, len(refs))
	for i, ref := range refs {
		name := path.Index(i).Child("name")
		for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
			errs = append(errs, field.Invalid(name, ref.Name, msg))
		}
		if seen[ref.Name] {
			errs = append(errs, field.Duplicate(name, ref.Name))
		}
		seen[ref.Name] = true
	}
	return errs
}
