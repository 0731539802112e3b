package settings_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
	"github.com/c5c3/reconciler-sdk/testenv/golden"
)

// The golden files are rewritten from Render and DomainConfig with (package golden):
// go test ./examples/keystone/settings/ -run 'Golden' -update

// goldenCase is one row of the rendering matrix: the output is compared with
// testdata/<name>.conf, or, with sameAs set, must equal Render of that case.
type goldenCase struct {
	name   string
	in     settings.Settings
	sameAs string
}

func everything() settings.Settings {
	return settings.Settings{
		Debug:                   true,
		PublicEndpoint:          "https://keystone.example.org",
		MemcachedServers:        []string{"memcached-0.memcached:11211", "memcached-1.memcached:11211"},
		FernetKeyRepository:     "/var/lib/keystone/fernet-keys",
		CredentialKeyRepository: "/var/lib/keystone/credential-keys",
		MaxActiveKeys:           5,
		TokenExpiration:         7200,
		AllowExpiredWindow:      3600,
		IdentityDomains:         []string{"corp", "partners.example"},
		PolicyFile:              "/etc/keystone/policy.d/overrides.yaml",
		ExtraConfig: map[string]map[string]string{
			"security_compliance": {"lockout_failure_attempts": "5", "lockout_duration": "1800"},
			"token":               {"expiration": "86400"},
		},
	}
}

func goldenCases() []goldenCase {
	return []goldenCase{
		{name: "minimal", in: settings.Settings{}},
		{name: "explicit-defaults", in: settings.Settings{
			FernetKeyRepository:     settings.DefaultFernetKeyRepository,
			CredentialKeyRepository: settings.DefaultCredentialKeyRepository,
			MaxActiveKeys:           settings.DefaultMaxActiveKeys,
			TokenExpiration:         settings.DefaultTokenExpiration,
			AllowExpiredWindow:      settings.DefaultAllowExpiredWindow,
			ExtraConfig:             map[string]map[string]string{},
		}, sameAs: "minimal"},
		{name: "memcached", in: settings.Settings{MemcachedServers: []string{"b:11211", "a:11211", "10.0.0.5:11211"}}},
		{name: "identity-domains", in: settings.Settings{IdentityDomains: []string{"corp"}}},
		{name: "extraconfig-override", in: settings.Settings{ExtraConfig: map[string]map[string]string{
			"DEFAULT":       {"debug": "true", "max_param_size": "128"},
			"fernet_tokens": {"max_active_keys": "7"},
			"ldap":          {"url": "ldap://a\nldap://b", "password": "  padded  "},
			"empty":         {},
		}}},
		{name: "everything", in: everything()},
	}
}

// TestRenderGolden renders the matrix and compares each output with its golden file.
func TestRenderGolden(t *testing.T) {
	golden.Matrix(t, "testdata", ".conf", matrix())
}

// compareGolden compares got with testdata/name, or writes it there with -update.
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Compare(t, filepath.Join("testdata", name), []byte(got))
}

// matrix is goldenCases as golden cases of Render.
func matrix() (out []golden.Case[string]) {
	for _, tc := range goldenCases() {
		out = append(out, golden.Case[string]{Name: tc.name, SameAs: tc.sameAs, Render: func() (string, error) { return settings.Render(tc.in) }})
	}
	return out
}

// TestGoldenFilesHaveCases fails on a testdata file that no case writes, so a renamed
// case cannot leave a stale golden file behind.
func TestGoldenFilesHaveCases(t *testing.T) {
	want := golden.MatrixFiles("testdata", ".conf", matrix())
	for _, tc := range domainGoldenCases() {
		want = append(want, filepath.Join("testdata", settings.DomainConfigFileName(tc.domain)))
	}
	golden.Files(t, filepath.Join("testdata", "*.conf"), want)
}

// TestRenderDeterministic renders every case many times: map iteration order must not
// show in the output.
func TestRenderDeterministic(t *testing.T) {
	for _, tc := range goldenCases() {
		golden.Deterministic(t, tc.name, func() (string, error) { return settings.Render(tc.in) })
	}
}

// minimalOptions is what oslo.config reads from Render(Settings{}).
func minimalOptions() map[string]map[string]string {
	return map[string]map[string]string{
		"DEFAULT":         {"debug": "false"},
		"credential":      {"key_repository": "/etc/keystone/credential-keys"},
		"fernet_receipts": {"key_repository": "/etc/keystone/fernet-keys", "max_active_keys": "3"},
		"fernet_tokens":   {"key_repository": "/etc/keystone/fernet-keys", "max_active_keys": "3"},
		"token":           {"allow_expired_window": "172800", "expiration": "3600", "provider": "fernet"},
	}
}

// TestRenderOptions reads each rendered file back as oslo.config does and compares every
// option with what the fields say.
func TestRenderOptions(t *testing.T) {
	tests := map[string]struct {
		in   settings.Settings
		want func(map[string]map[string]string)
	}{
		"zero value renders Keystone's defaults": {
			in:   settings.Settings{},
			want: func(map[string]map[string]string) {},
		},
		"debug": {
			in:   settings.Settings{Debug: true},
			want: func(o map[string]map[string]string) { o["DEFAULT"]["debug"] = "true" },
		},
		"public endpoint": {
			in: settings.Settings{PublicEndpoint: "https://id.example.org:5000/identity"},
			want: func(o map[string]map[string]string) {
				o["DEFAULT"]["public_endpoint"] = "https://id.example.org:5000/identity"
			},
		},
		"memcached servers in order": {
			in: settings.Settings{MemcachedServers: []string{"m1:11211", "m0:11211"}},
			want: func(o map[string]map[string]string) {
				o["cache"] = map[string]string{"enabled": "true", "backend": "dogpile.cache.pymemcache", "memcache_servers": "m1:11211,m0:11211"}
			},
		},
		"key repositories and max active keys": {
			in: settings.Settings{FernetKeyRepository: "/keys/fernet/", CredentialKeyRepository: "/keys/credential", MaxActiveKeys: 4},
			want: func(o map[string]map[string]string) {
				o["fernet_tokens"] = map[string]string{"key_repository": "/keys/fernet/", "max_active_keys": "4"}
				o["fernet_receipts"] = map[string]string{"key_repository": "/keys/fernet/", "max_active_keys": "4"}
				o["credential"]["key_repository"] = "/keys/credential"
			},
		},
		"token lifetimes": {
			in: settings.Settings{TokenExpiration: 600, AllowExpiredWindow: 60},
			want: func(o map[string]map[string]string) {
				o["token"]["expiration"] = "600"
				o["token"]["allow_expired_window"] = "60"
			},
		},
		"identity domains": {
			in: settings.Settings{IdentityDomains: []string{"a", "b"}},
			want: func(o map[string]map[string]string) {
				o["identity"] = map[string]string{"domain_specific_drivers_enabled": "true", "domain_config_dir": "/etc/keystone/domains"}
			},
		},
		"relative policy file": {
			in: settings.Settings{PolicyFile: "policy.yaml"},
			want: func(o map[string]map[string]string) {
				o["oslo_policy"] = map[string]string{"policy_file": "policy.yaml"}
			},
		},
		"ExtraConfig replaces typed options and adds new ones, raw": {
			in: settings.Settings{
				Debug:           true,
				TokenExpiration: 600,
				ExtraConfig: map[string]map[string]string{
					"DEFAULT":  {"debug": "false"},
					"token":    {"expiration": "60"},
					"ldap":     {"password": "$$secret", "url": "ldap://x"},
					"database": {"max_pool_size": "5"},
				},
			},
			want: func(o map[string]map[string]string) {
				o["token"]["expiration"] = "60"
				o["ldap"] = map[string]string{"password": "$$secret", "url": "ldap://x"}
				o["database"] = map[string]string{"max_pool_size": "5"}
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := settings.Render(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out, "# Rendered by the keystone operator; do not edit.\n[DEFAULT]\n") {
				t.Errorf("output does not start with the comment and [DEFAULT]:\n%s", out)
			}
			parsed, err := parseOslo(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := minimalOptions()
			tt.want(want)
			if diff := cmp.Diff(want, single(t, parsed)); diff != "" {
				t.Errorf("options (-want +read back):\n%s", diff)
			}
			if _, ok := parsed["database"]["connection"]; ok {
				t.Errorf("[database] connection rendered:\n%s", out)
			}
		})
	}
}

// TestRenderDoesNotModifyInput checks that ExtraConfig, which Render merges, is left as
// it was.
func TestRenderDoesNotModifyInput(t *testing.T) {
	in := everything()
	want := everything()
	if _, err := settings.Render(in); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, in); diff != "" {
		t.Errorf("Render modified its input (-before +after):\n%s", diff)
	}
}

// TestRenderErrors checks that each invalid input is refused with ErrInvalidSettings,
// reports exactly the expected problems, each naming its field, returns no output and
// never quotes an ExtraConfig value.
func TestRenderErrors(t *testing.T) {
	const secret = "hunter2-do-not-log"
	prefix := "invalid Keystone settings: "
	tests := map[string]struct {
		in   settings.Settings
		want []string
	}{
		"public endpoint not a URL": {
			in:   settings.Settings{PublicEndpoint: "keystone.example.org"},
			want: []string{`Settings.PublicEndpoint "keystone.example.org" is not an http or https URL`},
		},
		"public endpoint with a query": {
			in:   settings.Settings{PublicEndpoint: "https://k.example/?a=b"},
			want: []string{`Settings.PublicEndpoint "https://k.example/?a=b" has a query or a fragment`},
		},
		"public endpoint without host": {
			in:   settings.Settings{PublicEndpoint: "https:///v3"},
			want: []string{`Settings.PublicEndpoint "https:///v3" has no host`},
		},
		"public endpoint with user information": {
			in:   settings.Settings{PublicEndpoint: "https://u@k.example"},
			want: []string{`Settings.PublicEndpoint "https://u@k.example" carries user information`},
		},
		"public endpoint with a substitution": {
			in:   settings.Settings{PublicEndpoint: "https://$host"},
			want: []string{`Settings.PublicEndpoint "https://$host" contains "$", which oslo.config reads as a substitution`},
		},
		"public endpoint with a line break": {
			in:   settings.Settings{PublicEndpoint: "https://k\n[database]\nconnection = x"},
			want: []string{`Settings.PublicEndpoint "https://k\n[database]\nconnection = x" contains a control character`},
		},
		"memcached servers": {
			in: settings.Settings{MemcachedServers: []string{"", "a:1,b:2", "a :1", "a:\xff", "m:1"}},
			want: []string{
				`Settings.MemcachedServers[0] "" is empty: want host:port`,
				`Settings.MemcachedServers[1] "a:1,b:2" contains ",", which separates the servers of memcache_servers`,
				`Settings.MemcachedServers[2] "a :1" contains white space: want host:port`,
				`Settings.MemcachedServers[3] "a:\xff" is not valid UTF-8`,
			},
		},
		"key repositories": {
			in: settings.Settings{FernetKeyRepository: "keys", CredentialKeyRepository: "/a/../b"},
			want: []string{
				`Settings.FernetKeyRepository "keys" is not an absolute path`,
				`Settings.CredentialKeyRepository "/a/../b" is not a clean path ("/b")`,
			},
		},
		"key repository padded": {
			in:   settings.Settings{FernetKeyRepository: " /keys"},
			want: []string{`Settings.FernetKeyRepository " /keys" starts or ends with white space`},
		},
		"credential keys in the Fernet key repository": {
			in:   settings.Settings{CredentialKeyRepository: "/etc/keystone/fernet-keys/"},
			want: []string{`Settings.CredentialKeyRepository "/etc/keystone/fernet-keys/" is the Fernet key repository: credential and token keys must be kept apart`},
		},
		"negative numbers": {
			in: settings.Settings{MaxActiveKeys: -1, TokenExpiration: -2, AllowExpiredWindow: -3},
			want: []string{
				`Settings.MaxActiveKeys -1 is negative`,
				`Settings.TokenExpiration -2 is negative`,
				`Settings.AllowExpiredWindow -3 is negative`,
			},
		},
		"identity domains": {
			in: settings.Settings{IdentityDomains: []string{"corp", "", "a/b", "..", "corp", "x\x00"}},
			want: []string{
				`Settings.IdentityDomains[1] "" is empty`,
				`Settings.IdentityDomains[2] "a/b" contains "/" at byte 1: a domain file name allows only ASCII letters, digits, "-", "_" and "."`,
				`Settings.IdentityDomains[3] ".." contains ".."`,
				`Settings.IdentityDomains[4] "corp" repeats an earlier domain`,
				`Settings.IdentityDomains[5] "x\x00" contains "\x00" at byte 1: a domain file name allows only ASCII letters, digits, "-", "_" and "."`,
			},
		},
		"policy file": {
			in:   settings.Settings{PolicyFile: "p\tolicy.yaml"},
			want: []string{`Settings.PolicyFile "p\tolicy.yaml" contains a control character`},
		},
		"ExtraConfig database connection": {
			in: settings.Settings{ExtraConfig: map[string]map[string]string{
				"database": {"connection": "mysql+pymysql://k:" + secret + "@db/keystone", "Connection": secret},
			}},
			want: []string{
				`Settings.ExtraConfig["database"]["Connection"]: the connection is read from the environment variable OS_DATABASE__CONNECTION, which overrides the file`,
				`Settings.ExtraConfig["database"]["connection"]: the connection is read from the environment variable OS_DATABASE__CONNECTION, which overrides the file`,
			},
		},
		"ExtraConfig section not in lower case": {
			in: settings.Settings{ExtraConfig: map[string]map[string]string{
				"Token":   {"expiration": secret},
				"Default": {},
				"DEFAULT": {"debug": "true"},
			}},
			want: []string{
				`Settings.ExtraConfig["Default"]: oslo.config reads the section as "default"; write it in lower case`,
				`Settings.ExtraConfig["Token"]: oslo.config reads the section as "token"; write it in lower case`,
			},
		},
		"ExtraConfig names and values": {
			in: settings.Settings{ExtraConfig: map[string]map[string]string{
				"a]b":   {},
				"token": {"x\n[database]\nconnection": "1", "ok": secret + "\r\n", "y": "a\n\n" + secret},
			}},
			want: []string{
				`Settings.ExtraConfig["a]b"]: section "a]b": invalid INI name: contains "]"`,
				`Settings.ExtraConfig["token"]["ok"]: section "token" option "ok" value 0: value cannot be represented in oslo.config INI: carriage return (oslo.config reads it as a line break)`,
				`Settings.ExtraConfig["token"]["x\n[database]\nconnection"]: section "token" option "x\n[database]\nconnection": invalid INI name: contains "\n"`,
				`Settings.ExtraConfig["token"]["y"]: section "token" option "y" value 0: value cannot be represented in oslo.config INI: line 2 is empty (oslo.config ends a value at a blank line)`,
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := settings.Render(tt.in)
			if !errors.Is(err, settings.ErrInvalidSettings) {
				t.Fatalf("err = %v, want ErrInvalidSettings", err)
			}
			if out != "" {
				t.Errorf("output returned with the error:\n%s", out)
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = prefix + w
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

// TestRenderErrorsWrapConfigSentinels checks that a refused ExtraConfig entry keeps the
// sentinel of package config.
func TestRenderErrorsWrapConfigSentinels(t *testing.T) {
	_, err := settings.Render(settings.Settings{ExtraConfig: map[string]map[string]string{"s": {"k": "a\rb"}}})
	if !errors.Is(err, config.ErrUnrepresentableValue) || !errors.Is(err, settings.ErrInvalidSettings) {
		t.Errorf("err = %v, want ErrInvalidSettings and config.ErrUnrepresentableValue", err)
	}
	_, err = settings.Render(settings.Settings{ExtraConfig: map[string]map[string]string{"s": {"#k": "1"}}})
	if !errors.Is(err, config.ErrInvalidName) {
		t.Errorf("err = %v, want config.ErrInvalidName", err)
	}
}

// problems splits an error of errors.Join into the texts of its parts.
func problems(err error) []string {
	var out []string
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}
