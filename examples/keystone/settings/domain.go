package settings

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/c5c3/reconciler-sdk/config"
)

// maxDomainName is the length limit of a Keystone domain name (its database column).
const maxDomainName = 64

// DomainConfig renders the configuration file of a domain-specific identity backend:
// keystone.<domain>.conf, which Keystone reads from [DomainConfigDir] when
// Settings.IdentityDomains holds domain. sections maps an INI section to option names
// and raw oslo.config values, for example an LDAP domain:
//
//	[identity]
//	driver = ldap
//
//	[ldap]
//	url = ldaps://ldap.example.org
//	user = cn=keystone,ou=services,dc=example,dc=org
//	password = ...
//	suffix = dc=example,dc=org
//
// sections must set [identity] driver, and section names other than DEFAULT must be
// lower case, as oslo.config reads them. The content is deterministic (config.RenderINI,
// after a comment line) and usually holds the bind password of the backend, so it
// belongs in a Secret (config.CreateImmutableSecret), not a ConfigMap; oslo.config's
// environment source cannot stand in for it, since one variable would apply to every
// domain. Values are written as given: "$name" in a value is oslo.config's
// substitution of another option, and [EscapeValue] turns a password into a literal.
//
// domain is the name of the Keystone domain (not its ID) and becomes part of the file
// name, which is also the key of the file in the Secret. It must be 1 to 64 characters
// from ASCII letters, digits, "-", "_" and ".", the characters of a Secret key, and
// must not contain "..": so it can hold no "/", no control character and nothing
// that leaves DomainConfigDir.
//
// Keystone walks DomainConfigDir recursively, and a Secret volume keeps a second copy
// of every file in a hidden, timestamped subdirectory; mount each file with subPath
// (safe with an immutable, content-addressed Secret: a change is a new Secret and a
// rollout) rather than the whole volume at DomainConfigDir.
//
// Errors wrap [ErrInvalidSettings], name the parameter and never quote a value; all
// problems are reported at once. On error fileName and content are "".
func DomainConfig(domain string, sections map[string]map[string]string) (fileName, content string, err error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidSettings}, args...)...))
	}
	if why := domainName(domain); why != "" {
		bad("domain %q %s", domain, why)
	}
	driver, ok := sections["identity"]["driver"]
	if !ok || strings.TrimSpace(driver) == "" {
		bad(`sections["identity"]["driver"] is not set: a domain-specific file exists to choose the domain's identity backend`)
	}
	for _, section := range slices.Sorted(maps.Keys(sections)) {
		options := sections[section]
		if why := sectionCase(section); why != "" {
			bad("sections[%q]: %s", section, why)
			continue
		}
		if len(options) == 0 {
			bad("sections[%q] has no options", section)
			continue
		}
		for _, key := range slices.Sorted(maps.Keys(options)) {
			if _, err := config.RenderINI(config.Sections{section: {key: {options[key]}}}); err != nil {
				bad("sections[%q][%q]: %w", section, key, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return "", "", err
	}
	out, err := config.RenderINI(config.LiftSections(sections))
	if err != nil {
		return "", "", fmt.Errorf("%w: sections: %w", ErrInvalidSettings, err)
	}
	return DomainConfigFileName(domain), "# Rendered by the keystone operator for the domain " + domain + "; do not edit.\n" + out, nil
}

// DomainConfigFileName is the file name Keystone reads the domain-specific
// configuration of domain from: "keystone.<domain>.conf". It does not validate domain;
// [DomainConfig] does.
func DomainConfigFileName(domain string) string {
	return "keystone." + domain + ".conf"
}

// EscapeValue returns s as a raw oslo.config value that reads back as s: every "$" is
// doubled, so oslo.config does not substitute it. Use it to put a literal (a password
// from a Secret) into ExtraConfig or the sections of [DomainConfig]. oslo.config also
// reads a backslash followed by "$" as an escaped "$", so a string containing `\$`
// has no raw form and is refused with an error wrapping [ErrInvalidSettings] that does
// not quote s.
func EscapeValue(s string) (string, error) {
	if strings.Contains(s, `\$`) {
		return "", fmt.Errorf(`%w: the value contains a backslash followed by "$", which oslo.config cannot read literally`, ErrInvalidSettings)
	}
	return strings.ReplaceAll(s, "$", "$$"), nil
}

// domainName returns why domain cannot name a domain-specific configuration file, or "".
func domainName(domain string) string {
	switch {
	case domain == "":
		return "is empty"
	case len(domain) > maxDomainName:
		return fmt.Sprintf("is longer than %d characters", maxDomainName)
	case strings.Contains(domain, ".."):
		return `contains ".."`
	}
	for i := 0; i < len(domain); i++ {
		c := domain[i]
		if !isAlnum(rune(c)) && c != '-' && c != '_' && c != '.' {
			return fmt.Sprintf("contains %q at byte %d: a domain file name allows only ASCII letters, digits, \"-\", \"_\" and \".\"", domain[i:i+1], i)
		}
	}
	return ""
}

func isAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}
