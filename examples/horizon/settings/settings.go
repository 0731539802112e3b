package settings

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// ErrInvalidSettings is wrapped by every error of [Render]: the input cannot be rendered
// into a local_settings.py that Horizon imports as intended. The error names the Go field
// (for example Settings.WebSSO.InitialChoice) and, except for ExtraConfig values, its value.
var ErrInvalidSettings = errors.New("invalid Horizon settings")

// Settings is the input of [Render]: what the Horizon operator's custom resource says
// about the dashboard's Django settings.
type Settings struct {
	// KeystoneURL is the cluster-local URL of the Keystone Service, rendered as
	// OPENSTACK_KEYSTONE_URL. Required.
	KeystoneURL string

	// Image is the dashboard's container image. It is never rendered itself: the cache
	// KEY_PREFIX is "horizon-" followed by the first 12 hex digits of the SHA-256 of
	// Image, so that pods of a new image never read cache entries written by an old one.
	Image string

	// MemcachedServers are the "host:port" addresses of the memcached servers, rendered
	// in order as the LOCATION of the PyMemcacheCache backend. When empty, the cache is
	// Django's per-process LocMemCache instead (still with the image-scoped KEY_PREFIX).
	// An empty entry is an error.
	MemcachedServers []string

	// Debug renders DEBUG = True and sets the root logger's level to DEBUG instead of
	// INFO.
	Debug bool

	// AllowedHosts is rendered as ALLOWED_HOSTS; empty means ["*"].
	AllowedHosts []string

	// TimeZone is rendered as TIME_ZONE; empty means "UTC".
	TimeZone string

	// Gateway says that the dashboard is reached through a Gateway that terminates TLS:
	// it renders SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https"), so that
	// Django takes a request with X-Forwarded-Proto: https for a secure one.
	Gateway bool

	// WebSSO configures web single sign-on. Nil or not Enabled renders no WEBSSO_*
	// setting at all.
	WebSSO *WebSSO

	// MultiDomain configures Keystone multi-domain login. Nil or not Enabled renders no
	// OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT, OPENSTACK_KEYSTONE_DEFAULT_DOMAIN,
	// OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN or OPENSTACK_KEYSTONE_DOMAIN_CHOICES.
	MultiDomain *MultiDomain

	// ExtraConfig maps a Django setting name to the Python source of its value, a
	// single-line literal such as True, 'x', 300 or ["a", "b"]. Each entry is rendered as
	// NAME = value after every other setting, in sorted order of names, so it overrides
	// whatever the typed fields rendered. Names must match [A-Za-z_][A-Za-z0-9_]* and
	// must not be a Python keyword, __debug__ or SECRET_KEY; values must be literals that
	// Python's ast.literal_eval accepts (see [Render] for the exact subset).
	ExtraConfig map[string]string
}

// WebSSO is Horizon's web single sign-on through Keystone federation.
type WebSSO struct {
	// Enabled renders the WEBSSO_* settings; when false, the other fields are ignored.
	Enabled bool

	// Choices are the login methods offered, in order, rendered as WEBSSO_CHOICES. An
	// ID must not be empty and must not repeat. Omitted when empty.
	Choices []Choice

	// InitialChoice is the ID of the preselected choice, rendered as
	// WEBSSO_INITIAL_CHOICE. It must be the ID of one of Choices. Omitted when empty.
	InitialChoice string

	// IDPMapping maps a choice ID to the Keystone identity provider and protocol it
	// logs in with, rendered as WEBSSO_IDP_MAPPING in sorted order of IDs. Keys, IDP and
	// Protocol must not be empty. Omitted when empty.
	IDPMapping map[string]IDPMapping

	// KeystoneURL is the Keystone URL that the browser is redirected to for federated
	// login, rendered as WEBSSO_KEYSTONE_URL. Omitted when empty.
	KeystoneURL string
}

// Choice is one login method of WEBSSO_CHOICES.
type Choice struct {
	// ID identifies the method: "credentials" for Keystone's own login, otherwise a
	// federation protocol or a key of WebSSO.IDPMapping.
	ID string
	// Label is what the login form shows for the method.
	Label string
}

// IDPMapping is the Keystone identity provider and federation protocol of one WebSSO
// choice.
type IDPMapping struct {
	// IDP is the Keystone identity provider ID.
	IDP string
	// Protocol is the Keystone federation protocol ID, for example "openid" or "saml2".
	Protocol string
}

// MultiDomain is Keystone multi-domain login.
type MultiDomain struct {
	// Enabled renders OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT = True and the other
	// settings of this block; when false, the other fields are ignored.
	Enabled bool

	// DefaultDomain is rendered as OPENSTACK_KEYSTONE_DEFAULT_DOMAIN. Omitted when
	// empty.
	DefaultDomain string

	// Dropdown renders OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN = True: the login form offers
	// Domains in a drop-down instead of a text field. Omitted when false, which is
	// Horizon's default.
	Dropdown bool

	// Domains are the domains of the drop-down, in order, rendered as
	// OPENSTACK_KEYSTONE_DOMAIN_CHOICES. An ID must not be empty. Omitted when empty.
	Domains []DomainChoice
}

// DomainChoice is one entry of OPENSTACK_KEYSTONE_DOMAIN_CHOICES.
type DomainChoice struct {
	// ID is the Keystone domain name sent at login.
	ID string
	// Label is what the drop-down shows.
	Label string
}

// Fixed values of the rendered file.
const (
	// SecretKeyEnv is the environment variable that SECRET_KEY is read from at import
	// time; the key itself is never rendered.
	SecretKeyEnv = "HORIZON_SECRET_KEY"

	header          = "# Rendered by the horizon operator; do not edit.\n"
	memcachedCache  = "django.core.cache.backends.memcached.PyMemcacheCache"
	locMemCache     = "django.core.cache.backends.locmem.LocMemCache"
	signedCookies   = "django.contrib.sessions.backends.signed_cookies"
	keyPrefixPrefix = "horizon-"
	indent          = "    "
)

// setting is one top-level assignment of a typed block: its name, the path of the
// custom resource field that produces it (below the resource's desired state), and the
// Python source of its value (possibly several lines).
type setting struct {
	name, path, value string
}

// Render writes Horizon's local_settings.py for s. The output is deterministic: equal
// input gives byte-identical output, with maps rendered in sorted order of keys.
//
// Every string taken from s is written as a double-quoted Python string literal in which
// backslash, the double quote and every character that is not printable (control and
// format characters, line and paragraph separators, non-ASCII spaces) are escaped, so no
// input can end the literal or start a new line. Strings must be valid UTF-8.
//
// ExtraConfig values are Python source and are checked to be a single-line literal
// before they are rendered: str and bytes literals (optionally with an r, u, b, rb or br
// prefix, no f-strings, no implicit concatenation, escapes limited to those Python
// defines except \N{...}), int, float and imaginary numbers with at most one sign, a
// real number plus or minus an imaginary one, True, False, None, and tuples, lists,
// dicts and sets of these, nested at most 64 deep, with hashable dict keys and set
// elements. Names, calls, operators, comments, semicolons and line continuations are
// refused, so an ExtraConfig value can neither run code nor add a statement. Values are
// trimmed of surrounding spaces and tabs.
//
// All problems are reported at once, joined, each wrapping [ErrInvalidSettings] and
// naming its field: an empty KeystoneURL; a string that is not valid UTF-8; an empty
// MemcachedServers entry; with WebSSO enabled, an empty or repeated choice ID, an
// InitialChoice that is not a choice ID, or an IDPMapping with an empty key, IDP or
// Protocol; with MultiDomain enabled, an empty domain ID; an ExtraConfig name that is
// not an identifier, is a Python keyword, __debug__ or SECRET_KEY; an ExtraConfig value
// that is empty, spans lines or is not such a literal. Errors quote names and typed
// values but never ExtraConfig values, which may carry credentials. On error the output
// is nil.
func Render(s Settings) ([]byte, error) {
	if err := validate(s); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("import os\n\n")

	assign(&b, "DEBUG", pyBool(s.Debug))
	hosts := s.AllowedHosts
	if len(hosts) == 0 {
		hosts = []string{"*"}
	}
	assign(&b, "ALLOWED_HOSTS", pyInlineList(hosts))
	tz := s.TimeZone
	if tz == "" {
		tz = "UTC"
	}
	assign(&b, "TIME_ZONE", pyString(tz))
	b.WriteString("\n")

	assign(&b, "SECRET_KEY", "os.environ["+pyString(SecretKeyEnv)+"]")
	assign(&b, "SESSION_ENGINE", pyString(signedCookies))
	b.WriteString("\n")

	cache := [][2]string{}
	if len(s.MemcachedServers) > 0 {
		cache = append(cache,
			[2]string{pyString("BACKEND"), pyString(memcachedCache)},
			[2]string{pyString("LOCATION"), pyInlineList(s.MemcachedServers)})
	} else {
		cache = append(cache, [2]string{pyString("BACKEND"), pyString(locMemCache)})
	}
	cache = append(cache, [2]string{pyString("KEY_PREFIX"), pyString(KeyPrefix(s.Image))})
	assign(&b, "CACHES", pyDict([][2]string{{pyString("default"), pyDict(cache)}}))
	b.WriteString("\n")

	assign(&b, "OPENSTACK_KEYSTONE_URL", pyString(s.KeystoneURL))
	assign(&b, "OPENSTACK_ENDPOINT_TYPE", pyString("internalURL"))
	b.WriteString("\n")

	level := "INFO"
	if s.Debug {
		level = "DEBUG"
	}
	assign(&b, "LOGGING", pyDict([][2]string{
		{pyString("version"), "1"},
		{pyString("disable_existing_loggers"), "False"},
		{pyString("handlers"), pyDict([][2]string{
			{pyString("console"), pyDict([][2]string{
				{pyString("class"), pyString("logging.StreamHandler")},
			})},
		})},
		{pyString("root"), pyDict([][2]string{
			{pyString("handlers"), pyInlineList([]string{"console"})},
			{pyString("level"), pyString(level)},
		})},
	}))
	b.WriteString("\n")

	assign(&b, "COMPRESS_OFFLINE", "True")
	assign(&b, "COMPRESS_ENABLED", "True")

	if s.Gateway {
		b.WriteString("\n")
		assign(&b, "SECURE_PROXY_SSL_HEADER", "("+pyString("HTTP_X_FORWARDED_PROTO")+", "+pyString("https")+")")
	}
	for _, block := range [][]setting{webSSOSettings(s.WebSSO), multiDomainSettings(s.MultiDomain)} {
		if len(block) == 0 {
			continue
		}
		b.WriteString("\n")
		for _, st := range block {
			assign(&b, st.name, st.value)
		}
	}
	if len(s.ExtraConfig) > 0 {
		b.WriteString("\n# ExtraConfig, applied last: overrides the settings above.\n")
		for _, name := range sortedKeys(s.ExtraConfig) {
			assign(&b, name, strings.Trim(s.ExtraConfig[name], " \t"))
		}
	}
	return []byte(b.String()), nil
}

// DeclaredSettings maps each setting name that the WebSSO and MultiDomain blocks of s
// render to the path of the Horizon custom resource field that produces it, written
// below the resource's top-level desired-state field:
//
//	WEBSSO_ENABLED                          websso.enabled
//	WEBSSO_CHOICES                          websso.choices
//	WEBSSO_INITIAL_CHOICE                   websso.initialChoice
//	WEBSSO_IDP_MAPPING                      websso.idpMapping
//	WEBSSO_KEYSTONE_URL                     websso.keystoneURL
//	WEBSSO_USE_HTTP_REFERER                 websso.enabled (pinned to False)
//	OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT  multiDomain.enabled
//	OPENSTACK_KEYSTONE_DEFAULT_DOMAIN       multiDomain.defaultDomain
//	OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN      multiDomain.dropdown
//	OPENSTACK_KEYSTONE_DOMAIN_CHOICES       multiDomain.domains
//
// It holds exactly the names [Render] writes for these blocks, so a setting omitted
// because its field is empty, and every setting of a disabled block, is absent. Render
// itself lets ExtraConfig override these settings like any other; DeclaredSettings is
// for an admission webhook that refuses an extraConfig key which would silently
// override a typed field, naming both extraConfig.<key> and the field. It does not
// validate s, and the result is never nil.
func DeclaredSettings(s Settings) map[string]string {
	declared := map[string]string{}
	for _, block := range [][]setting{webSSOSettings(s.WebSSO), multiDomainSettings(s.MultiDomain)} {
		for _, st := range block {
			declared[st.name] = st.path
		}
	}
	return declared
}

// KeyPrefix is the cache KEY_PREFIX rendered for image: "horizon-" followed by the first
// 12 hex digits of the SHA-256 of image.
func KeyPrefix(image string) string {
	sum := sha256.Sum256([]byte(image))
	return keyPrefixPrefix + hex.EncodeToString(sum[:])[:12]
}

// webSSOSettings is the WEBSSO_* block of w, empty when w is nil or disabled.
func webSSOSettings(w *WebSSO) []setting {
	if w == nil || !w.Enabled {
		return nil
	}
	out := []setting{{"WEBSSO_ENABLED", "websso.enabled", "True"}}
	if len(w.Choices) > 0 {
		pairs := make([][2]string, len(w.Choices))
		for i, c := range w.Choices {
			pairs[i] = [2]string{c.ID, c.Label}
		}
		out = append(out, setting{"WEBSSO_CHOICES", "websso.choices", pyTupleOfPairs(pairs)})
	}
	if w.InitialChoice != "" {
		out = append(out, setting{"WEBSSO_INITIAL_CHOICE", "websso.initialChoice", pyString(w.InitialChoice)})
	}
	if len(w.IDPMapping) > 0 {
		items := make([][2]string, 0, len(w.IDPMapping))
		for _, id := range sortedKeys(w.IDPMapping) {
			m := w.IDPMapping[id]
			items = append(items, [2]string{pyString(id), "(" + pyString(m.IDP) + ", " + pyString(m.Protocol) + ")"})
		}
		out = append(out, setting{"WEBSSO_IDP_MAPPING", "websso.idpMapping", pyDict(items)})
	}
	if w.KeystoneURL != "" {
		out = append(out, setting{"WEBSSO_KEYSTONE_URL", "websso.keystoneURL", pyString(w.KeystoneURL)})
	}
	// Pinned: OPENSTACK_KEYSTONE_URL is the cluster-local Service; with True,
	// openstack_auth would validate the token against the Keystone URL taken from the
	// browser's Referer, resolved from inside the pod.
	return append(out, setting{"WEBSSO_USE_HTTP_REFERER", "websso.enabled", "False"})
}

// multiDomainSettings is the multi-domain block of m, empty when m is nil or disabled.
func multiDomainSettings(m *MultiDomain) []setting {
	if m == nil || !m.Enabled {
		return nil
	}
	out := []setting{{"OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT", "multiDomain.enabled", "True"}}
	if m.DefaultDomain != "" {
		out = append(out, setting{"OPENSTACK_KEYSTONE_DEFAULT_DOMAIN", "multiDomain.defaultDomain", pyString(m.DefaultDomain)})
	}
	if m.Dropdown {
		out = append(out, setting{"OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN", "multiDomain.dropdown", "True"})
	}
	if len(m.Domains) > 0 {
		pairs := make([][2]string, len(m.Domains))
		for i, d := range m.Domains {
			pairs[i] = [2]string{d.ID, d.Label}
		}
		out = append(out, setting{"OPENSTACK_KEYSTONE_DOMAIN_CHOICES", "multiDomain.domains", pyTupleOfPairs(pairs)})
	}
	return out
}

// validate reports every problem of s, each wrapping ErrInvalidSettings.
func validate(s Settings) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidSettings}, args...)...))
	}
	utf8Field := func(field, v string) {
		if !utf8.ValidString(v) {
			bad("%s %q is not valid UTF-8", field, v)
		}
	}

	if s.KeystoneURL == "" {
		bad("Settings.KeystoneURL %q is empty: OPENSTACK_KEYSTONE_URL is required", s.KeystoneURL)
	}
	utf8Field("Settings.KeystoneURL", s.KeystoneURL)
	utf8Field("Settings.Image", s.Image)
	utf8Field("Settings.TimeZone", s.TimeZone)
	for i, m := range s.MemcachedServers {
		field := fmt.Sprintf("Settings.MemcachedServers[%d]", i)
		if m == "" {
			bad("%s %q is empty: want host:port", field, m)
		}
		utf8Field(field, m)
	}
	for i, h := range s.AllowedHosts {
		utf8Field(fmt.Sprintf("Settings.AllowedHosts[%d]", i), h)
	}

	if w := s.WebSSO; w != nil && w.Enabled {
		ids := map[string]bool{}
		for i, c := range w.Choices {
			field := fmt.Sprintf("Settings.WebSSO.Choices[%d]", i)
			switch {
			case c.ID == "":
				bad("%s.ID %q is empty", field, c.ID)
			case ids[c.ID]:
				bad("%s.ID %q repeats an earlier choice ID", field, c.ID)
			}
			ids[c.ID] = true
			utf8Field(field+".ID", c.ID)
			utf8Field(field+".Label", c.Label)
		}
		if w.InitialChoice != "" && !ids[w.InitialChoice] {
			bad("Settings.WebSSO.InitialChoice %q is not the ID of any of Settings.WebSSO.Choices", w.InitialChoice)
		}
		utf8Field("Settings.WebSSO.InitialChoice", w.InitialChoice)
		for _, id := range sortedKeys(w.IDPMapping) {
			m := w.IDPMapping[id]
			field := fmt.Sprintf("Settings.WebSSO.IDPMapping[%q]", id)
			if id == "" {
				bad("%s: the choice ID is empty", field)
			}
			if m.IDP == "" {
				bad("%s.IDP %q is empty", field, m.IDP)
			}
			if m.Protocol == "" {
				bad("%s.Protocol %q is empty", field, m.Protocol)
			}
			utf8Field(field, id)
			utf8Field(field+".IDP", m.IDP)
			utf8Field(field+".Protocol", m.Protocol)
		}
		utf8Field("Settings.WebSSO.KeystoneURL", w.KeystoneURL)
	}

	if m := s.MultiDomain; m != nil && m.Enabled {
		utf8Field("Settings.MultiDomain.DefaultDomain", m.DefaultDomain)
		for i, d := range m.Domains {
			field := fmt.Sprintf("Settings.MultiDomain.Domains[%d]", i)
			if d.ID == "" {
				bad("%s.ID %q is empty", field, d.ID)
			}
			utf8Field(field+".ID", d.ID)
			utf8Field(field+".Label", d.Label)
		}
	}

	for _, name := range sortedKeys(s.ExtraConfig) {
		field := fmt.Sprintf("Settings.ExtraConfig[%q]", name)
		switch {
		case !isIdentifier(name):
			bad("%s: the setting name is not a Python identifier ([A-Za-z_][A-Za-z0-9_]*)", field)
			continue
		case pythonKeywords[name]:
			bad("%s: the setting name is a Python keyword or __debug__, which cannot be assigned", field)
			continue
		case name == "SECRET_KEY":
			bad("%s: SECRET_KEY is read from the environment variable %s and never rendered", field, SecretKeyEnv)
			continue
		}
		if err := checkLiteral(strings.Trim(s.ExtraConfig[name], " \t")); err != nil {
			bad("%s: the value is not a single-line Python literal: %w", field, err)
		}
	}
	return errors.Join(errs...)
}

// isIdentifier reports whether name matches [A-Za-z_][A-Za-z0-9_]*.
func isIdentifier(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if ok := isIdentStart(name[i]) || i > 0 && isDigit(name[i]); !ok {
			return false
		}
	}
	return true
}

// pythonKeywords are the names that Python 3 refuses as an assignment target: its
// keywords and __debug__.
var pythonKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true,
	"def": true, "del": true, "elif": true, "else": true, "except": true,
	"finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true,
	"not": true, "or": true, "pass": true, "raise": true, "return": true, "try": true,
	"while": true, "with": true, "yield": true,
	// Not a keyword, but Python refuses to assign it all the same.
	"__debug__": true,
}

// assign writes "name = value\n".
func assign(b *strings.Builder, name, value string) {
	b.WriteString(name)
	b.WriteString(" = ")
	b.WriteString(value)
	b.WriteString("\n")
}

// pyBool is the Python source of v.
func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

// pyInlineList is a one-line Python list of the strings in items.
func pyInlineList(items []string) string {
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = pyString(it)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// pyTupleOfPairs is a multi-line Python tuple of 2-tuples of strings, each line ending
// in a comma (so a single pair is still a tuple of tuples).
func pyTupleOfPairs(pairs [][2]string) string {
	var b strings.Builder
	b.WriteString("(\n")
	for _, p := range pairs {
		b.WriteString(indent + "(" + pyString(p[0]) + ", " + pyString(p[1]) + "),\n")
	}
	b.WriteString(")")
	return b.String()
}

// pyDict is a multi-line Python dict of items, given as key and value source in order;
// a multi-line value is indented one level further.
func pyDict(items [][2]string) string {
	var b strings.Builder
	b.WriteString("{\n")
	for _, it := range items {
		b.WriteString(indent + it[0] + ": " + strings.ReplaceAll(it[1], "\n", "\n"+indent) + ",\n")
	}
	b.WriteString("}")
	return b.String()
}

// sortedKeys returns the keys of m in sorted order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
