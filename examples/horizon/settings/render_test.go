package settings_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
	"github.com/c5c3/reconciler-sdk/testenv/golden"
)

// The golden files are rewritten from Render with (package golden):
// go test ./examples/horizon/settings/ -run TestRenderGolden -update

const (
	keystone = "http://keystone.openstack.svc:5000/v3"
	image    = "registry.example/openstack/horizon:2025.1"
)

// minimal is the smallest valid input.
func minimal() settings.Settings {
	return settings.Settings{KeystoneURL: keystone, Image: image}
}

func fullWebSSO() *settings.WebSSO {
	return &settings.WebSSO{
		Enabled: true,
		Choices: []settings.Choice{
			{ID: "credentials", Label: "Keystone Credentials"},
			{ID: "oidc", Label: "OpenID Connect"},
			{ID: "saml2", Label: "Security Assertion Markup Language"},
		},
		InitialChoice: "oidc",
		IDPMapping: map[string]settings.IDPMapping{
			"saml2": {IDP: "corp-saml", Protocol: "saml2"},
			"oidc":  {IDP: "corp-oidc", Protocol: "openid"},
		},
		KeystoneURL: "https://keystone.example.org/v3",
	}
}

func fullMultiDomain() *settings.MultiDomain {
	return &settings.MultiDomain{
		Enabled:       true,
		DefaultDomain: "Default",
		Dropdown:      true,
		Domains: []settings.DomainChoice{
			{ID: "Default", Label: "Default"},
			{ID: "corp", Label: "Corporate LDAP"},
		},
	}
}

// goldenCase is one row of the rendering matrix: the output is compared with
// testdata/<name>.py, or, with sameAs set, must be byte-identical to Render of that case.
type goldenCase struct {
	name   string
	in     settings.Settings
	sameAs string
}

func goldenCases() []goldenCase {
	with := func(mod func(*settings.Settings)) settings.Settings {
		s := minimal()
		mod(&s)
		return s
	}
	return []goldenCase{
		{name: "minimal", in: minimal()},
		{name: "memcached", in: with(func(s *settings.Settings) {
			s.MemcachedServers = []string{"memcached-0.memcached:11211", "memcached-1.memcached:11211"}
		})},
		{name: "gateway", in: with(func(s *settings.Settings) { s.Gateway = true })},
		{name: "websso-full", in: with(func(s *settings.Settings) { s.WebSSO = fullWebSSO() })},
		{name: "websso-minimal", in: with(func(s *settings.Settings) { s.WebSSO = &settings.WebSSO{Enabled: true} })},
		{name: "websso-nil", in: with(func(s *settings.Settings) { s.WebSSO = nil }), sameAs: "minimal"},
		{name: "websso-disabled", in: with(func(s *settings.Settings) {
			w := fullWebSSO()
			w.Enabled = false
			w.InitialChoice = "not-a-choice" // ignored, like everything else of a disabled block
			s.WebSSO = w
		}), sameAs: "minimal"},
		{name: "multidomain-full", in: with(func(s *settings.Settings) { s.MultiDomain = fullMultiDomain() })},
		{name: "multidomain-minimal", in: with(func(s *settings.Settings) { s.MultiDomain = &settings.MultiDomain{Enabled: true} })},
		{name: "multidomain-disabled", in: with(func(s *settings.Settings) {
			m := fullMultiDomain()
			m.Enabled = false
			m.Domains = append(m.Domains, settings.DomainChoice{}) // ignored too
			s.MultiDomain = m
		}), sameAs: "minimal"},
		{name: "extraconfig-override", in: with(func(s *settings.Settings) {
			s.ExtraConfig = map[string]string{
				"DEBUG":                       "True",
				"SESSION_TIMEOUT":             "  3600\t",
				"OPENSTACK_ENDPOINT_TYPE":     `"publicURL"`,
				"HORIZON_CONFIG_EXTRA":        `{"password_autocomplete": "off", "modal_backdrop": ("static", 1)}`,
				"OPENSTACK_NEUTRON_NETWORK":   `{'enable_router': False, 'enable_quotas': True}`,
				"API_RESULT_LIMIT":            "1_000",
				"DROPDOWN_MAX_ITEMS":          "-30",
				"IMAGE_CUSTOM_PROPERTY_TITLE": `{'architecture': r'CPU \ arch', 'x': b'\x00'}`,
			}
		})},
		{name: "everything", in: settings.Settings{
			KeystoneURL:      keystone,
			Image:            image,
			MemcachedServers: []string{"memcached:11211"},
			Debug:            true,
			AllowedHosts:     []string{"dashboard.example.org", ".example.org"},
			TimeZone:         "Europe/Berlin",
			Gateway:          true,
			WebSSO:           fullWebSSO(),
			MultiDomain:      fullMultiDomain(),
			ExtraConfig: map[string]string{
				"SESSION_TIMEOUT": "7200",
				"TIME_ZONE":       `"UTC"`,
			},
		}},
	}
}

// TestRenderGolden renders the matrix and compares each output with its golden file;
// the disabled-block cases must render exactly what minimal renders.
func TestRenderGolden(t *testing.T) {
	golden.Matrix(t, "testdata", ".py", matrix())
}

// matrix is goldenCases as golden cases of Render.
func matrix() (out []golden.Case[[]byte]) {
	for _, tc := range goldenCases() {
		out = append(out, golden.Case[[]byte]{Name: tc.name, SameAs: tc.sameAs, Render: func() ([]byte, error) { return settings.Render(tc.in) }})
	}
	return out
}

// TestGoldenFilesHaveCases fails on a testdata/*.py that no matrix case writes, so a
// renamed case cannot leave a stale golden file behind.
func TestGoldenFilesHaveCases(t *testing.T) {
	golden.Files(t, filepath.Join("testdata", "*.py"), golden.MatrixFiles("testdata", ".py", matrix()))
}

// TestRenderDeterministic renders inputs with several map entries many times: map
// iteration order must not show in the output.
func TestRenderDeterministic(t *testing.T) {
	for _, tc := range goldenCases() {
		golden.Deterministic(t, tc.name, func() ([]byte, error) { return settings.Render(tc.in) })
	}
}

// TestRenderDefaultsAndOptions checks single settings of the rendered file, line by line.
func TestRenderDefaultsAndOptions(t *testing.T) {
	sum := sha256.Sum256([]byte(image))
	prefix := "horizon-" + hex.EncodeToString(sum[:])[:12]
	tests := []struct {
		name      string
		mod       func(*settings.Settings)
		want      []string
		wantLines []string // lines that must not appear
	}{{
		name: "defaults",
		mod:  func(*settings.Settings) {},
		want: []string{
			`DEBUG = False`,
			`ALLOWED_HOSTS = ["*"]`,
			`TIME_ZONE = "UTC"`,
			`SECRET_KEY = os.environ["HORIZON_SECRET_KEY"]`,
			`SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"`,
			`        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",`,
			`        "KEY_PREFIX": "` + prefix + `",`,
			`OPENSTACK_KEYSTONE_URL = "` + keystone + `"`,
			`OPENSTACK_ENDPOINT_TYPE = "internalURL"`,
			`        "level": "INFO",`,
			`COMPRESS_OFFLINE = True`,
			`COMPRESS_ENABLED = True`,
		},
		wantLines: []string{`        "LOCATION": `, `SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")`},
	}, {
		name: "debug",
		mod:  func(s *settings.Settings) { s.Debug = true },
		want: []string{`DEBUG = True`, `        "level": "DEBUG",`},
	}, {
		name: "memcached keeps the order and the key prefix",
		mod:  func(s *settings.Settings) { s.MemcachedServers = []string{"b:11211", "a:11211"} },
		want: []string{
			`        "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",`,
			`        "LOCATION": ["b:11211", "a:11211"],`,
			`        "KEY_PREFIX": "` + prefix + `",`,
		},
	}, {
		name: "allowed hosts and time zone",
		mod: func(s *settings.Settings) {
			s.AllowedHosts = []string{"a.example", "b.example"}
			s.TimeZone = "Asia/Tokyo"
		},
		want: []string{`ALLOWED_HOSTS = ["a.example", "b.example"]`, `TIME_ZONE = "Asia/Tokyo"`},
	}, {
		name: "gateway",
		mod:  func(s *settings.Settings) { s.Gateway = true },
		want: []string{`SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")`},
	}, {
		name: "websso with one choice is still a tuple of pairs",
		mod: func(s *settings.Settings) {
			s.WebSSO = &settings.WebSSO{Enabled: true, Choices: []settings.Choice{{ID: "credentials", Label: "Keystone"}}}
		},
		want: []string{"WEBSSO_ENABLED = True", "WEBSSO_CHOICES = (", `    ("credentials", "Keystone"),`, "WEBSSO_USE_HTTP_REFERER = False"},
		wantLines: []string{
			"WEBSSO_INITIAL_CHOICE = ", "WEBSSO_IDP_MAPPING = ", "WEBSSO_KEYSTONE_URL = ",
		},
	}, {
		name: "multidomain without dropdown omits it",
		mod: func(s *settings.Settings) {
			s.MultiDomain = &settings.MultiDomain{Enabled: true, DefaultDomain: "corp"}
		},
		want: []string{"OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT = True", `OPENSTACK_KEYSTONE_DEFAULT_DOMAIN = "corp"`},
		wantLines: []string{
			"OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN = ", "OPENSTACK_KEYSTONE_DOMAIN_CHOICES = ",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := minimal()
			tt.mod(&s)
			out, err := settings.Render(s)
			if err != nil {
				t.Fatal(err)
			}
			lines := map[string]bool{}
			for _, l := range strings.Split(string(out), "\n") {
				lines[l] = true
			}
			for _, w := range tt.want {
				if !lines[w] {
					t.Errorf("no line %q in:\n%s", w, out)
				}
			}
			for _, w := range tt.wantLines {
				if strings.Contains(string(out), w) {
					t.Errorf("unexpected %q in:\n%s", w, out)
				}
			}
		})
	}
}

// TestKeyPrefix checks that the prefix is image-scoped: equal images share it, another
// image gets another one.
func TestKeyPrefix(t *testing.T) {
	sum := sha256.Sum256([]byte("img:1"))
	if got, want := settings.KeyPrefix("img:1"), "horizon-"+hex.EncodeToString(sum[:6]); got != want {
		t.Errorf("KeyPrefix = %q, want %q", got, want)
	}
	if settings.KeyPrefix("img:1") == settings.KeyPrefix("img:2") {
		t.Error("two images share a KEY_PREFIX")
	}
	a, _ := settings.Render(settings.Settings{KeystoneURL: keystone, Image: "img:1"})
	b, _ := settings.Render(settings.Settings{KeystoneURL: keystone, Image: "img:2"})
	if bytes.Equal(a, b) {
		t.Error("a new image renders the same file")
	}
}

// TestDeclaredSettings checks the mapping for full and disabled blocks, and that it
// holds exactly the WebSSO and multi-domain names Render writes for every matrix case.
func TestDeclaredSettings(t *testing.T) {
	s := minimal()
	s.WebSSO = fullWebSSO()
	s.MultiDomain = fullMultiDomain()
	want := map[string]string{
		"WEBSSO_ENABLED":                         "websso.enabled",
		"WEBSSO_CHOICES":                         "websso.choices",
		"WEBSSO_INITIAL_CHOICE":                  "websso.initialChoice",
		"WEBSSO_IDP_MAPPING":                     "websso.idpMapping",
		"WEBSSO_KEYSTONE_URL":                    "websso.keystoneURL",
		"WEBSSO_USE_HTTP_REFERER":                "websso.enabled",
		"OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT": "multiDomain.enabled",
		"OPENSTACK_KEYSTONE_DEFAULT_DOMAIN":      "multiDomain.defaultDomain",
		"OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN":     "multiDomain.dropdown",
		"OPENSTACK_KEYSTONE_DOMAIN_CHOICES":      "multiDomain.domains",
	}
	if diff := cmp.Diff(want, settings.DeclaredSettings(s)); diff != "" {
		t.Errorf("DeclaredSettings (-want +got):\n%s", diff)
	}
	if got := settings.DeclaredSettings(minimal()); got == nil || len(got) != 0 {
		t.Errorf("DeclaredSettings(minimal) = %#v, want an empty, non-nil map", got)
	}

	for _, tc := range goldenCases() {
		out, err := settings.Render(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		rendered := map[string]bool{}
		for _, name := range assignedNames(out) {
			if strings.HasPrefix(name, "WEBSSO_") || strings.HasPrefix(name, "OPENSTACK_KEYSTONE_") && name != "OPENSTACK_KEYSTONE_URL" {
				rendered[name] = true
			}
		}
		declared := map[string]bool{}
		for name := range settings.DeclaredSettings(tc.in) {
			declared[name] = true
		}
		if diff := cmp.Diff(rendered, declared); diff != "" {
			t.Errorf("%s: rendered typed names (-rendered +declared):\n%s", tc.name, diff)
		}
	}
}

// assignedNames lists the names assigned at the start of a line, in order.
func assignedNames(out []byte) []string {
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if name, _, ok := strings.Cut(line, " = "); ok && name != "" && !strings.ContainsAny(name, " \t\"'#") {
			names = append(names, name)
		}
	}
	return names
}

// TestRenderErrors checks that each invalid input is refused with ErrInvalidSettings,
// names its field, never quotes an ExtraConfig value and returns no output.
func TestRenderErrors(t *testing.T) {
	const secretish = "hunter2-do-not-log"
	tests := []struct {
		name string
		mod  func(*settings.Settings)
		want []string // substrings of the error
	}{
		{"empty keystone URL", func(s *settings.Settings) { s.KeystoneURL = "" },
			[]string{`Settings.KeystoneURL "" is empty`}},
		{"keystone URL not UTF-8", func(s *settings.Settings) { s.KeystoneURL = "http://k\xff" },
			[]string{`Settings.KeystoneURL "http://k\xff" is not valid UTF-8`}},
		{"empty memcached server", func(s *settings.Settings) { s.MemcachedServers = []string{"a:1", ""} },
			[]string{`Settings.MemcachedServers[1] "" is empty`}},
		{"allowed host not UTF-8", func(s *settings.Settings) { s.AllowedHosts = []string{"\xc3"} },
			[]string{`Settings.AllowedHosts[0] "\xc3" is not valid UTF-8`}},
		{"time zone not UTF-8", func(s *settings.Settings) { s.TimeZone = "\xc3" },
			[]string{`Settings.TimeZone "\xc3" is not valid UTF-8`}},
		{"image not UTF-8", func(s *settings.Settings) { s.Image = "\xc3" },
			[]string{`Settings.Image "\xc3" is not valid UTF-8`}},
		{"empty websso choice ID", func(s *settings.Settings) {
			s.WebSSO = &settings.WebSSO{Enabled: true, Choices: []settings.Choice{{ID: "a"}, {ID: "", Label: "x"}}}
		}, []string{`Settings.WebSSO.Choices[1].ID "" is empty`}},
		{"repeated websso choice ID", func(s *settings.Settings) {
			s.WebSSO = &settings.WebSSO{Enabled: true, Choices: []settings.Choice{{ID: "a"}, {ID: "a"}}}
		}, []string{`Settings.WebSSO.Choices[1].ID "a" repeats`}},
		{"websso label not UTF-8", func(s *settings.Settings) {
			s.WebSSO = &settings.WebSSO{Enabled: true, Choices: []settings.Choice{{ID: "a", Label: "\xff"}}}
		}, []string{`Settings.WebSSO.Choices[0].Label "\xff" is not valid UTF-8`}},
		{"initial choice not among choices", func(s *settings.Settings) {
			s.WebSSO = &settings.WebSSO{Enabled: true, Choices: []settings.Choice{{ID: "a"}}, InitialChoice: "b"}
		}, []string{`Settings.WebSSO.InitialChoice "b" is not the ID of any of Settings.WebSSO.Choices`}},
		{"initial choice without choices", func(s *settings.Settings) {
			s.WebSSO = &settings.WebSSO{Enabled: true, InitialChoice: "credentials"}
		}, []string{`Settings.WebSSO.InitialChoice "credentials" is not the ID`}},
		{"idp mapping incomplete", func(s *settings.Settings) {
			s.WebSSO = &settings.WebSSO{Enabled: true, IDPMapping: map[string]settings.IDPMapping{
				"oidc": {IDP: "x"}, "": {IDP: "y", Protocol: "openid"}, "saml2": {Protocol: "saml2"},
			}}
		}, []string{
			`Settings.WebSSO.IDPMapping[""]: the choice ID is empty`,
			`Settings.WebSSO.IDPMapping["oidc"].Protocol "" is empty`,
			`Settings.WebSSO.IDPMapping["saml2"].IDP "" is empty`,
		}},
		{"websso keystone URL not UTF-8", func(s *settings.Settings) {
			s.WebSSO = &settings.WebSSO{Enabled: true, KeystoneURL: "\xff"}
		}, []string{`Settings.WebSSO.KeystoneURL "\xff" is not valid UTF-8`}},
		{"empty domain ID", func(s *settings.Settings) {
			s.MultiDomain = &settings.MultiDomain{Enabled: true, Domains: []settings.DomainChoice{{ID: "", Label: "x"}}}
		}, []string{`Settings.MultiDomain.Domains[0].ID "" is empty`}},
		{"default domain not UTF-8", func(s *settings.Settings) {
			s.MultiDomain = &settings.MultiDomain{Enabled: true, DefaultDomain: "\xff"}
		}, []string{`Settings.MultiDomain.DefaultDomain "\xff" is not valid UTF-8`}},
		{"extra key not an identifier", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"1X": "1"} },
			[]string{`Settings.ExtraConfig["1X"]: the setting name is not a Python identifier`}},
		{"extra key injects", func(s *settings.Settings) {
			s.ExtraConfig = map[string]string{"X = 1\nimport os; os.system('id')\nY": "1"}
		},
			[]string{`Settings.ExtraConfig["X = 1\nimport os; os.system('id')\nY"]: the setting name is not a Python identifier`}},
		{"extra key empty", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"": "1"} },
			[]string{`Settings.ExtraConfig[""]: the setting name is not a Python identifier`}},
		{"extra key keyword", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"import": "1"} },
			[]string{`Settings.ExtraConfig["import"]: the setting name is a Python keyword`}},
		{"extra key __debug__", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"__debug__": "1"} },
			[]string{`Settings.ExtraConfig["__debug__"]: the setting name is a Python keyword or __debug__`}},
		{"extra key SECRET_KEY", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"SECRET_KEY": `"` + secretish + `"`} },
			[]string{`Settings.ExtraConfig["SECRET_KEY"]: SECRET_KEY is read from the environment variable HORIZON_SECRET_KEY`}},
		{"extra value empty", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"A": " \t"} },
			[]string{`Settings.ExtraConfig["A"]: the value is not a single-line Python literal: not a literal: the value is empty`}},
		{"extra value with a newline", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"A": "'" + secretish + "'\nimport os"} },
			[]string{`Settings.ExtraConfig["A"]: the value is not a single-line Python literal: not a literal: line break at byte 20`}},
		{"extra value with a carriage return", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"A": "1\rimport os"} },
			[]string{`Settings.ExtraConfig["A"]: the value is not a single-line Python literal: not a literal: line break at byte 1`}},
		{"extra value is a call", func(s *settings.Settings) {
			s.ExtraConfig = map[string]string{"A": `__import__("os").system("` + secretish + `")`}
		}, []string{`Settings.ExtraConfig["A"]: the value is not a single-line Python literal: not a literal: a name (only True, False and None are literals) at byte 0`}},
		{"extra value adds a statement", func(s *settings.Settings) {
			s.ExtraConfig = map[string]string{"A": `'` + secretish + `'; import os`}
		}, []string{`Settings.ExtraConfig["A"]: the value is not a single-line Python literal: not a literal: unexpected text after the literal at byte 20`}},
		{"extra value opens a triple-quoted string", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"A": `"""`} },
			[]string{`Settings.ExtraConfig["A"]: the value is not a single-line Python literal: not a literal: unterminated string at byte 3`}},
		{"extra value continues the line", func(s *settings.Settings) { s.ExtraConfig = map[string]string{"A": `1 + \`} },
			[]string{`Settings.ExtraConfig["A"]: the value is not a single-line Python literal: not a literal: expected an imaginary number at byte 4`}},
		{"all problems at once", func(s *settings.Settings) {
			s.KeystoneURL = ""
			s.WebSSO = &settings.WebSSO{Enabled: true, InitialChoice: "x"}
			s.ExtraConfig = map[string]string{"B": "f'x'", "A-1": "1"}
		}, []string{
			`Settings.KeystoneURL "" is empty`,
			`Settings.WebSSO.InitialChoice "x"`,
			`Settings.ExtraConfig["A-1"]`,
			`Settings.ExtraConfig["B"]: the value is not a single-line Python literal: not a literal: unsupported string prefix at byte 0`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := minimal()
			tt.mod(&s)
			out, err := settings.Render(s)
			if !errors.Is(err, settings.ErrInvalidSettings) {
				t.Fatalf("err = %v, want ErrInvalidSettings", err)
			}
			if out != nil {
				t.Errorf("output returned with the error:\n%s", out)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if got := strings.Count(msg, "invalid Horizon settings: "); got != len(tt.want) {
				t.Errorf("error reports %d problems, want %d: %s", got, len(tt.want), msg)
			}
			if strings.Contains(msg, secretish) {
				t.Errorf("error quotes an ExtraConfig value: %s", msg)
			}
		})
	}
}

// TestDisabledBlocksAreNotValidated checks that a disabled block's invalid content is
// neither rendered nor refused.
func TestDisabledBlocksAreNotValidated(t *testing.T) {
	s := minimal()
	s.WebSSO = &settings.WebSSO{Choices: []settings.Choice{{}}, InitialChoice: "x", KeystoneURL: "\xff"}
	s.MultiDomain = &settings.MultiDomain{Domains: []settings.DomainChoice{{}}}
	got, err := settings.Render(s)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := settings.Render(minimal())
	if !bytes.Equal(got, want) {
		t.Errorf("disabled blocks changed the output:\n%s", cmp.Diff(string(want), string(got)))
	}
}
