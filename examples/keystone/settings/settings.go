package settings

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/database"
)

// ErrInvalidSettings is wrapped by every error of [Render], [DomainConfig] and
// [EscapeValue]: the input cannot be rendered into configuration that Keystone reads as
// intended. The error names the Go field or parameter (for example
// Settings.FernetKeyRepository) and never quotes a password,
// an ExtraConfig value or a value of a domain-specific file.
var ErrInvalidSettings = errors.New("invalid Keystone settings")

// Defaults of [Settings] and fixed locations of the rendered configuration.
const (
	// DefaultFernetKeyRepository is the [fernet_tokens] and [fernet_receipts]
	// key_repository rendered when Settings.FernetKeyRepository is empty.
	DefaultFernetKeyRepository = "/etc/keystone/fernet-keys"

	// DefaultCredentialKeyRepository is the [credential] key_repository rendered when
	// Settings.CredentialKeyRepository is empty.
	DefaultCredentialKeyRepository = "/etc/keystone/credential-keys"

	// DefaultMaxActiveKeys is the [fernet_tokens] and [fernet_receipts]
	// max_active_keys rendered when Settings.MaxActiveKeys is 0 (Keystone's own
	// default).
	DefaultMaxActiveKeys = 3

	// DefaultTokenExpiration is the [token] expiration in seconds rendered when
	// Settings.TokenExpiration is 0 (Keystone's own default, one hour).
	DefaultTokenExpiration = 3600

	// DefaultAllowExpiredWindow is the [token] allow_expired_window in seconds rendered
	// when Settings.AllowExpiredWindow is 0 (Keystone's own default, two days).
	DefaultAllowExpiredWindow = 172800

	// DomainConfigDir is the [identity] domain_config_dir rendered when
	// Settings.IdentityDomains is not empty: the directory that holds the files of
	// [DomainConfig].
	DomainConfigDir = "/etc/keystone/domains"

	// ConnectionEnv is the environment variable that oslo.config reads [database]
	// connection from (its OS_<GROUP>__<OPTION> source, which takes precedence over the
	// configuration files): database.ConnectionEnv, set from the connection Secret
	// (database.ConnectionEnvVar); keystone.conf never holds it.
	ConnectionEnv = database.ConnectionEnv

	header       = "# Rendered by the keystone operator; do not edit.\n"
	cacheBackend = "dogpile.cache.pymemcache"
)

// Settings is the input of [Render]: what the Keystone operator's custom resource says
// about keystone.conf. Every field is optional; the zero value renders Keystone's
// defaults for the options this package manages.
type Settings struct {
	// Debug renders [DEFAULT] debug = true instead of false.
	Debug bool

	// PublicEndpoint is the base URL of the Keystone API as clients reach it, for
	// example https://keystone.example.org, rendered as [DEFAULT] public_endpoint. It
	// must be an absolute http or https URL without query or fragment. Omitted when
	// empty: Keystone then derives the URL from each request.
	PublicEndpoint string

	// MemcachedServers are the "host:port" addresses of the memcached servers. When set,
	// [cache] enabled = true, backend = dogpile.cache.pymemcache and memcache_servers =
	// the addresses joined by commas, in order. An entry must not be empty or contain a
	// comma, white space or a control character. Without servers there is no [cache]
	// section and caching stays off.
	MemcachedServers []string

	// FernetKeyRepository is the directory of the Fernet keys that sign tokens and
	// receipts, rendered as key_repository of [fernet_tokens] and [fernet_receipts];
	// [DefaultFernetKeyRepository] when empty.
	FernetKeyRepository string

	// CredentialKeyRepository is the directory of the Fernet keys that encrypt stored
	// credentials, rendered as [credential] key_repository;
	// [DefaultCredentialKeyRepository] when empty. It must differ from the Fernet key
	// repository: Keystone keeps and rotates the two key sets separately.
	CredentialKeyRepository string

	// MaxActiveKeys is the number of Fernet keys kept in rotation (one staged, one
	// primary, the rest secondary), rendered as max_active_keys of [fernet_tokens] and
	// [fernet_receipts]; [DefaultMaxActiveKeys] when 0. Negative is an error. Keystone
	// has no such option for credential keys: keystone-manage credential_rotate always
	// keeps 3.
	MaxActiveKeys int

	// TokenExpiration is the lifetime of a token in seconds, rendered as [token]
	// expiration; [DefaultTokenExpiration] when 0. Negative is an error.
	TokenExpiration int

	// AllowExpiredWindow is how many seconds past its expiry a token can still be
	// fetched with allow_expired, rendered as [token] allow_expired_window;
	// [DefaultAllowExpiredWindow] when 0. Negative is an error.
	AllowExpiredWindow int

	// IdentityDomains are the names of the Keystone domains that have a
	// domain-specific identity backend, each configured by the file of [DomainConfig]
	// in [DomainConfigDir]. When not empty, [identity] domain_specific_drivers_enabled
	// = true and domain_config_dir = DomainConfigDir. Each name must be valid for
	// DomainConfig and appear once.
	IdentityDomains []string

	// PolicyFile is the policy file of oslo.policy, rendered as [oslo_policy]
	// policy_file. A relative name is looked up in the configuration directories.
	// Omitted when empty.
	PolicyFile string

	// ExtraConfig maps an INI section to option names and raw oslo.config values. It is
	// merged last with config.Merge, so an entry replaces the option of the same
	// section and name that the fields above render. Section names other than DEFAULT
	// must be lower case, as oslo.config reads them. The values are written as given:
	// "$name" in a value is oslo.config's substitution of another option ([EscapeValue]
	// writes a literal). [database] connection cannot be set here, since [ConnectionEnv]
	// overrides it.
	ExtraConfig map[string]map[string]string
}

// Render writes keystone.conf for s. The output is deterministic: equal input gives
// byte-identical output. It is a comment line followed by the INI text of
// config.RenderINI, so [DEFAULT] comes first, then the other sections and the options
// within each section in sorted order.
//
// Rendered always: [DEFAULT] debug; [credential] key_repository; [fernet_receipts] and
// [fernet_tokens] key_repository and max_active_keys; [token] allow_expired_window,
// expiration and provider = fernet. Rendered when asked for: [DEFAULT]
// public_endpoint, [cache] backend, enabled and memcache_servers, [identity]
// domain_config_dir and domain_specific_drivers_enabled, [oslo_policy] policy_file.
// Then Settings.ExtraConfig is merged over all of these.
//
// The database connection is not part of the file: the password would be in it.
// oslo.config reads [database] connection from the environment variable
// [ConnectionEnv], before any configuration file, so every Keystone container and
// keystone-manage Job sets ConnectionEnv from a Secret key holding database.ConnectionURL, and
// keystone.conf holds no credential and fits an immutable ConfigMap
// (config.CreateImmutableConfigMap). Putting the URL into the file instead would make
// the whole file a secret, to be stored with config.CreateImmutableSecret; ExtraConfig
// refuses [database] connection so that the file never carries it.
//
// Typed string fields must be valid UTF-8 and must not contain control characters or
// "$" (oslo.config would read "$" as a substitution). All problems are reported at
// once, joined, each wrapping [ErrInvalidSettings] and naming its field; ExtraConfig
// values are never quoted. On error the output is "".
func Render(s Settings) (string, error) {
	if err := validate(s); err != nil {
		return "", err
	}
	out, err := config.RenderINI(config.Merge(sections(s), config.LiftSections(s.ExtraConfig)))
	if err != nil {
		// validate checks every typed value and every ExtraConfig entry on its own, so
		// this is unreachable unless the two disagree; it still must not render.
		return "", fmt.Errorf("%w: Settings: %w", ErrInvalidSettings, err)
	}
	return header + out, nil
}

// sections is keystone.conf for the typed fields of a validated s.
func sections(s Settings) config.Sections {
	one := func(v string) []string { return []string{v} }
	fernet := orDefault(s.FernetKeyRepository, DefaultFernetKeyRepository)
	maxKeys := strconv.Itoa(intOrDefault(s.MaxActiveKeys, DefaultMaxActiveKeys))
	out := config.Sections{
		config.DefaultSection: {"debug": one(strconv.FormatBool(s.Debug))},
		"credential":          {"key_repository": one(orDefault(s.CredentialKeyRepository, DefaultCredentialKeyRepository))},
		"fernet_receipts":     {"key_repository": one(fernet), "max_active_keys": one(maxKeys)},
		"fernet_tokens":       {"key_repository": one(fernet), "max_active_keys": one(maxKeys)},
		"token": {
			"allow_expired_window": one(strconv.Itoa(intOrDefault(s.AllowExpiredWindow, DefaultAllowExpiredWindow))),
			"expiration":           one(strconv.Itoa(intOrDefault(s.TokenExpiration, DefaultTokenExpiration))),
			"provider":             one("fernet"),
		},
	}
	if s.PublicEndpoint != "" {
		out[config.DefaultSection]["public_endpoint"] = one(s.PublicEndpoint)
	}
	if len(s.MemcachedServers) > 0 {
		out["cache"] = map[string][]string{
			"backend":          one(cacheBackend),
			"enabled":          one("true"),
			"memcache_servers": one(strings.Join(s.MemcachedServers, ",")),
		}
	}
	if len(s.IdentityDomains) > 0 {
		out["identity"] = map[string][]string{
			"domain_config_dir":               one(DomainConfigDir),
			"domain_specific_drivers_enabled": one("true"),
		}
	}
	if s.PolicyFile != "" {
		out["oslo_policy"] = map[string][]string{"policy_file": one(s.PolicyFile)}
	}
	return out
}

// validate reports every problem of s, each wrapping ErrInvalidSettings.
func validate(s Settings) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidSettings}, args...)...))
	}
	text := func(field, v string) bool {
		if why := plainText(v); why != "" {
			bad("%s %q %s", field, v, why)
			return false
		}
		return true
	}

	if s.PublicEndpoint != "" && text("Settings.PublicEndpoint", s.PublicEndpoint) {
		if why := httpURL(s.PublicEndpoint); why != "" {
			bad("Settings.PublicEndpoint %q %s", s.PublicEndpoint, why)
		}
	}
	for i, m := range s.MemcachedServers {
		field := fmt.Sprintf("Settings.MemcachedServers[%d]", i)
		switch {
		case m == "":
			bad("%s %q is empty: want host:port", field, m)
		case !text(field, m):
		case strings.ContainsRune(m, ','):
			bad("%s %q contains \",\", which separates the servers of memcache_servers", field, m)
		case strings.IndexFunc(m, unicode.IsSpace) >= 0:
			bad("%s %q contains white space: want host:port", field, m)
		}
	}
	fernet := orDefault(s.FernetKeyRepository, DefaultFernetKeyRepository)
	credential := orDefault(s.CredentialKeyRepository, DefaultCredentialKeyRepository)
	okFernet := absPath("Settings.FernetKeyRepository", s.FernetKeyRepository, text, bad)
	okCredential := absPath("Settings.CredentialKeyRepository", s.CredentialKeyRepository, text, bad)
	if okFernet && okCredential && path.Clean(fernet) == path.Clean(credential) {
		bad("Settings.CredentialKeyRepository %q is the Fernet key repository: credential and token keys must be kept apart", credential)
	}
	for _, n := range []struct {
		field string
		v     int
	}{
		{"Settings.MaxActiveKeys", s.MaxActiveKeys},
		{"Settings.TokenExpiration", s.TokenExpiration},
		{"Settings.AllowExpiredWindow", s.AllowExpiredWindow},
	} {
		if n.v < 0 {
			bad("%s %d is negative", n.field, n.v)
		}
	}
	seen := map[string]bool{}
	for i, d := range s.IdentityDomains {
		field := fmt.Sprintf("Settings.IdentityDomains[%d]", i)
		if why := domainName(d); why != "" {
			bad("%s %q %s", field, d, why)
		} else if seen[d] {
			bad("%s %q repeats an earlier domain", field, d)
		}
		seen[d] = true
	}
	if s.PolicyFile != "" {
		text("Settings.PolicyFile", s.PolicyFile)
	}

	for _, section := range slices.Sorted(maps.Keys(s.ExtraConfig)) {
		options := s.ExtraConfig[section]
		if why := sectionCase(section); why != "" {
			bad("Settings.ExtraConfig[%q]: %s", section, why)
			continue
		}
		if len(options) == 0 {
			if _, err := config.RenderINI(config.Sections{section: {"x": {""}}}); err != nil {
				bad("Settings.ExtraConfig[%q]: %w", section, err)
			}
			continue
		}
		for _, key := range slices.Sorted(maps.Keys(options)) {
			field := fmt.Sprintf("Settings.ExtraConfig[%q][%q]", section, key)
			if strings.EqualFold(section, "database") && strings.EqualFold(key, "connection") {
				bad("%s: the connection is read from the environment variable %s, which overrides the file", field, ConnectionEnv)
				continue
			}
			if _, err := config.RenderINI(config.Sections{section: {key: {options[key]}}}); err != nil {
				bad("%s: %w", field, err)
			}
		}
	}
	return errors.Join(errs...)
}

// sectionCase returns why oslo.config would not read section under its own name, or
// "": it lower-cases every section name except DEFAULT, so "[Token]" would be merged
// with "[token]" and one of the two values would silently lose.
func sectionCase(section string) string {
	if section != config.DefaultSection && strings.ToLower(section) != section {
		return fmt.Sprintf("oslo.config reads the section as %q; write it in lower case", strings.ToLower(section))
	}
	return ""
}

// absPath checks an optional directory field: empty, or a clean absolute path of plain
// text. It reports whether the field is valid.
func absPath(field, v string, text func(field, v string) bool, bad func(string, ...any)) bool {
	switch {
	case v == "":
		return true
	case !text(field, v):
		return false
	case !path.IsAbs(v):
		bad("%s %q is not an absolute path", field, v)
		return false
	case path.Clean(v) != v && path.Clean(v)+"/" != v:
		bad("%s %q is not a clean path (%q)", field, v, path.Clean(v))
		return false
	}
	return true
}

// plainText returns why v cannot be written as a typed oslo.config value, or "".
func plainText(v string) string {
	switch {
	case !utf8.ValidString(v):
		return "is not valid UTF-8"
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "contains a control character"
	case strings.ContainsRune(v, '$'):
		return `contains "$", which oslo.config reads as a substitution`
	case strings.TrimSpace(v) != v:
		return "starts or ends with white space"
	}
	return ""
}

// httpURL returns why v is not an absolute http or https URL without query or
// fragment, or "".
func httpURL(v string) string {
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "is not an http or https URL"
	case u.Host == "":
		return "has no host"
	case u.User != nil:
		return "carries user information"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "has a query or a fragment"
	case strings.ContainsAny(v, " \t"):
		return "contains white space"
	}
	return ""
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func intOrDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
