package settings_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
)

type domainCase struct {
	domain   string
	sections map[string]map[string]string
}

func domainGoldenCases() []domainCase {
	return []domainCase{
		{domain: "corp", sections: map[string]map[string]string{
			"identity": {"driver": "ldap"},
			"ldap": {
				"url":                  "ldaps://ldap.example.org",
				"user":                 "cn=keystone,ou=services,dc=example,dc=org",
				"password":             "s3cr3t $$ with spaces ",
				"suffix":               "dc=example,dc=org",
				"user_tree_dn":         "ou=people,dc=example,dc=org",
				"user_objectclass":     "inetOrgPerson",
				"group_tree_dn":        "ou=groups,dc=example,dc=org",
				"use_tls":              "false",
				"tls_cacertfile":       "/etc/keystone/ldap-ca/ca.crt",
				"user_enabled_default": "true",
			},
		}},
		{domain: "partners.example", sections: map[string]map[string]string{
			"identity": {"driver": "sql"},
		}},
	}
}

// TestDomainConfigGolden renders the domain files and compares them with their golden
// files, named as Keystone expects.
func TestDomainConfigGolden(t *testing.T) {
	for _, tc := range domainGoldenCases() {
		t.Run(tc.domain, func(t *testing.T) {
			name, content, err := settings.DomainConfig(tc.domain, tc.sections)
			if err != nil {
				t.Fatal(err)
			}
			if want := "keystone." + tc.domain + ".conf"; name != want {
				t.Errorf("file name %q, want %q", name, want)
			}
			compareGolden(t, name, content)
			if _, again, _ := settings.DomainConfig(tc.domain, tc.sections); again != content {
				t.Errorf("second call differs:\n%s", cmp.Diff(content, again))
			}
		})
	}
}

// TestDomainConfigReadsBack reads a domain file back as oslo.config does: every section
// and value arrives unchanged, the quoted password included.
func TestDomainConfigReadsBack(t *testing.T) {
	tc := domainGoldenCases()[0]
	_, content, err := settings.DomainConfig(tc.domain, tc.sections)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := parseOslo(content)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tc.sections, single(t, parsed)); diff != "" {
		t.Errorf("read back (-sections +parsed):\n%s", diff)
	}
}

// TestDomainConfigErrors checks the refused domains and sections: each problem is
// reported, named, without quoting a value, and nothing is returned.
func TestDomainConfigErrors(t *testing.T) {
	const secret = "hunter2-do-not-log"
	ldap := map[string]map[string]string{"identity": {"driver": "ldap"}}
	tests := map[string]struct {
		domain   string
		sections map[string]map[string]string
		want     []string
	}{
		"empty domain":              {"", ldap, []string{`domain "" is empty`}},
		"slash":                     {"a/b", ldap, []string{`domain "a/b" contains "/" at byte 1: a domain file name allows only ASCII letters, digits, "-", "_" and "."`}},
		"dot dot":                   {"..", ldap, []string{`domain ".." contains ".."`}},
		"dot dot inside":            {"a..b", ldap, []string{`domain "a..b" contains ".."`}},
		"traversal":                 {"../../etc/passwd", ldap, []string{`domain "../../etc/passwd" contains ".."`}},
		"control character":         {"a\nb", ldap, []string{`domain "a\nb" contains "\n" at byte 1: a domain file name allows only ASCII letters, digits, "-", "_" and "."`}},
		"DEL":                       {"a\x7f", ldap, []string{`domain "a\x7f" contains "\x7f" at byte 1: a domain file name allows only ASCII letters, digits, "-", "_" and "."`}},
		"space":                     {"Corp LDAP", ldap, []string{`domain "Corp LDAP" contains " " at byte 4: a domain file name allows only ASCII letters, digits, "-", "_" and "."`}},
		"non-ASCII":                 {"ü", ldap, []string{`domain "ü" contains "\xc3" at byte 0: a domain file name allows only ASCII letters, digits, "-", "_" and "."`}},
		"too long":                  {strings.Repeat("d", 65), ldap, []string{`domain "` + strings.Repeat("d", 65) + `" is longer than 64 characters`}},
		"no sections":               {"corp", nil, []string{`sections["identity"]["driver"] is not set: a domain-specific file exists to choose the domain's identity backend`}},
		"empty driver":              {"corp", map[string]map[string]string{"identity": {"driver": " "}}, []string{`sections["identity"]["driver"] is not set: a domain-specific file exists to choose the domain's identity backend`}},
		"section not in lower case": {"corp", map[string]map[string]string{"identity": {"driver": "ldap"}, "LDAP": {"url": "ldap://x"}}, []string{`sections["LDAP"]: oslo.config reads the section as "ldap"; write it in lower case`}},
		"empty section":             {"corp", map[string]map[string]string{"identity": {"driver": "ldap"}, "ldap": {}}, []string{`sections["ldap"] has no options`}},
		"value with a blank line":   {"corp", map[string]map[string]string{"identity": {"driver": "ldap"}, "ldap": {"password": secret + "\n\nx"}}, []string{`sections["ldap"]["password"]: section "ldap" option "password" value 0: value cannot be represented in oslo.config INI: line 2 is empty (oslo.config ends a value at a blank line)`}},
		"injected section name":     {"corp", map[string]map[string]string{"identity": {"driver": "ldap"}, "ldap]\n[x": {"a": "1"}}, []string{`sections["ldap]\n[x"]["a"]: section "ldap]\n[x": invalid INI name: contains "]"`}},
		"everything wrong at once":  {"a/b", map[string]map[string]string{"ldap": {"url": "\r"}}, []string{`domain "a/b" contains "/" at byte 1: a domain file name allows only ASCII letters, digits, "-", "_" and "."`, `sections["identity"]["driver"] is not set: a domain-specific file exists to choose the domain's identity backend`, `sections["ldap"]["url"]: section "ldap" option "url" value 0: value cannot be represented in oslo.config INI: carriage return (oslo.config reads it as a line break)`}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			file, content, err := settings.DomainConfig(tt.domain, tt.sections)
			if !errors.Is(err, settings.ErrInvalidSettings) {
				t.Fatalf("err = %v, want ErrInvalidSettings", err)
			}
			if file != "" || content != "" {
				t.Errorf("returned %q and content with the error", file)
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = "invalid Keystone settings: " + w
			}
			if diff := cmp.Diff(want, problems(err)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error quotes a value: %v", err)
			}
		})
	}
}

// TestDomainFileNamesAreSecretKeys checks that every accepted domain gives a file name
// that Kubernetes accepts as a Secret key, that Keystone maps back to the domain, and
// that stays in its directory.
func TestDomainFileNamesAreSecretKeys(t *testing.T) {
	for _, domain := range []string{"a", "Default", "corp-ldap", "corp_ldap", "partners.example.org", ".", "a.", strings.Repeat("x", 64)} {
		name, _, err := settings.DomainConfig(domain, map[string]map[string]string{"identity": {"driver": "ldap"}})
		if err != nil {
			t.Errorf("%q refused: %v", domain, err)
			continue
		}
		if errs := validation.IsConfigMapKey(name); len(errs) > 0 {
			t.Errorf("%q: file name %q is no Secret key: %v", domain, name, errs)
		}
		// Keystone: fname[len("keystone."):-len(".conf")].
		if got := strings.TrimSuffix(strings.TrimPrefix(name, "keystone."), ".conf"); got != domain {
			t.Errorf("%q: Keystone reads the domain %q from %q", domain, got, name)
		}
		if strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, "..") {
			t.Errorf("%q: file name %q leaves its directory", domain, name)
		}
	}
}

// TestEscapeValue checks that escaped values survive oslo.config's substitution, and
// that a value with no raw form is refused without being quoted.
func TestEscapeValue(t *testing.T) {
	tests := map[string]string{
		"":           "",
		"plain":      "plain",
		"$":          "$$",
		"a$b$$c":     "a$$b$$$$c",
		"${x}":       "$${x}",
		`back\slash`: `back\slash`,
		`$\`:         `$$\`,
	}
	for in, want := range tests {
		got, err := settings.EscapeValue(in)
		if err != nil {
			t.Errorf("EscapeValue(%q): %v", in, err)
			continue
		}
		if got != want {
			t.Errorf("EscapeValue(%q) = %q, want %q", in, got, want)
		}
		if back := substitute(got); back != in {
			t.Errorf("oslo.config reads %q back as %q, want %q", got, back, in)
		}
	}
	const secret = `pa\$$word`
	if _, err := settings.EscapeValue(secret); !errors.Is(err, settings.ErrInvalidSettings) || strings.Contains(err.Error(), secret) {
		t.Errorf("EscapeValue(%q) err = %v, want ErrInvalidSettings without the value", secret, err)
	}
}

// substitute is oslo.config's reading of a value without any other option defined:
// `\$` becomes "$$", then string.Template turns "$$" into "$"; a "$" that starts a
// name would be a substitution, which the escaped values here never contain.
func substitute(v string) string {
	v = strings.ReplaceAll(v, `\$`, "$$")
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '$' && i+1 < len(v) && v[i+1] == '$' {
			b.WriteByte('$')
			i++
			continue
		}
		if v[i] == '$' {
			return "<substitution>"
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
