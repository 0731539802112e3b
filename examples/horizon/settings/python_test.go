package settings_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
)

// python runs script with python3, stdin as its standard input, and returns its standard
// output. Without python3 on PATH the test is skipped: it is the only reason any test of
// this package skips.
func python(t *testing.T, script string, stdin []byte) []byte {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: cannot check the rendered file with Python's own parser")
	}
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Env = append(cmd.Environ(), "PYTHONIOENCODING=utf-8", "PYTHONDONTWRITEBYTECODE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, stderr.String())
	}
	return out
}

// pyEvaluate reads a JSON list of files. For each, it parses the file (Python warnings,
// an invalid escape say, are errors), collects the statements other than "import os"
// and simple assignments, the names assigned in order, and the value of each
// assignment that ast.literal_eval evaluates (the last one per name), and prints the
// results as a JSON list. Tuples become lists, dict keys strings, bytes {"bytes": [...]}.
const pyEvaluate = `
import ast, json, sys, warnings
warnings.simplefilter("error")
def conv(v):
    if isinstance(v, (tuple, list)):
        return [conv(x) for x in v]
    if isinstance(v, dict):
        return {str(k): conv(x) for k, x in v.items()}
    if isinstance(v, bytes):
        return {"bytes": list(v)}
    if isinstance(v, complex):
        return {"complex": [v.real, v.imag]}
    return v
results = []
for src in json.load(sys.stdin):
    try:
        tree = ast.parse(src.encode("utf-8"))
    except Exception as e:
        results.append({"error": repr(e)})
        continue
    names, values, other = [], {}, []
    for node in tree.body:
        if isinstance(node, ast.Import) and [a.name for a in node.names] == ["os"] and node.names[0].asname is None:
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            names.append(name)
            try:
                values[name] = ast.literal_eval(node.value)
            except ValueError:
                values.pop(name, None)
            continue
        other.append(ast.dump(node))
    results.append({"names": names, "values": conv(values), "other": other})
print(json.dumps(results))
`

// evaluated is one result of pyEvaluate.
type evaluated struct {
	Error  string         `json:"error"`
	Names  []string       `json:"names"`
	Values map[string]any `json:"values"`
	Other  []string       `json:"other"`
}

// evaluateAll runs pyEvaluate once over srcs (valid UTF-8, as Render writes it).
func evaluateAll(t *testing.T, srcs ...[]byte) []evaluated {
	t.Helper()
	strs := make([]string, len(srcs))
	for i, src := range srcs {
		if !utf8.Valid(src) {
			t.Fatalf("rendered file %d is not valid UTF-8", i)
		}
		strs[i] = string(src)
	}
	in, err := json.Marshal(strs)
	if err != nil {
		t.Fatal(err)
	}
	out := python(t, pyEvaluate, in)
	var evs []evaluated
	if err := json.Unmarshal(out, &evs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(evs) != len(srcs) {
		t.Fatalf("python3 evaluated %d files, want %d", len(evs), len(srcs))
	}
	return evs
}

// TestRenderedFilesParse parses every matrix case with Python's parser: the file holds
// "import os" and assignments only, and SECRET_KEY is assigned but is not a literal.
func TestRenderedFilesParse(t *testing.T) {
	cases := goldenCases()
	srcs := make([][]byte, len(cases))
	for i, tc := range cases {
		srcs[i] = mustRender(t, tc.in)
	}
	evs := evaluateAll(t, srcs...)
	for i, tc := range cases {
		ev := evs[i]
		if ev.Error != "" {
			t.Errorf("%s: Python cannot parse the file: %s", tc.name, ev.Error)
			continue
		}
		if len(ev.Other) != 0 {
			t.Errorf("%s: statements other than import os and assignments: %v", tc.name, ev.Other)
		}
		if _, ok := ev.Values["SECRET_KEY"]; ok || !contains(ev.Names, "SECRET_KEY") {
			t.Errorf("%s: SECRET_KEY is not read from the environment: %v", tc.name, ev.Values["SECRET_KEY"])
		}
		if diff := cmp.Diff(assignedNames(srcs[i]), ev.Names); diff != "" {
			t.Errorf("%s: assigned names (-lines +python):\n%s", tc.name, diff)
		}
	}
}

// TestRenderedFilesEvaluate evaluates the everything and extraconfig-override cases in
// Python: values are what the input says, and ExtraConfig wins over the typed settings.
func TestRenderedFilesEvaluate(t *testing.T) {
	var everything, extra settings.Settings
	for _, tc := range goldenCases() {
		switch tc.name {
		case "everything":
			everything = tc.in
		case "extraconfig-override":
			extra = tc.in
		}
	}
	evs := evaluateAll(t, mustRender(t, everything), mustRender(t, extra))
	wants := []map[string]any{{
		"DEBUG":                   true,
		"TIME_ZONE":               "UTC",
		"SESSION_TIMEOUT":         float64(7200),
		"ALLOWED_HOSTS":           []any{"dashboard.example.org", ".example.org"},
		"SECURE_PROXY_SSL_HEADER": []any{"HTTP_X_FORWARDED_PROTO", "https"},
		"SESSION_ENGINE":          "django.contrib.sessions.backends.signed_cookies",
		"CACHES": map[string]any{"default": map[string]any{
			"BACKEND":    "django.core.cache.backends.memcached.PyMemcacheCache",
			"LOCATION":   []any{"memcached:11211"},
			"KEY_PREFIX": settings.KeyPrefix(image),
		}},
		"LOGGING": map[string]any{
			"version":                  float64(1),
			"disable_existing_loggers": false,
			"handlers":                 map[string]any{"console": map[string]any{"class": "logging.StreamHandler"}},
			"root":                     map[string]any{"handlers": []any{"console"}, "level": "DEBUG"},
		},
		"WEBSSO_CHOICES": []any{
			[]any{"credentials", "Keystone Credentials"},
			[]any{"oidc", "OpenID Connect"},
			[]any{"saml2", "Security Assertion Markup Language"},
		},
		"WEBSSO_IDP_MAPPING": map[string]any{
			"oidc": []any{"corp-oidc", "openid"}, "saml2": []any{"corp-saml", "saml2"},
		},
		"WEBSSO_USE_HTTP_REFERER":            false,
		"OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN": true,
		"OPENSTACK_KEYSTONE_DOMAIN_CHOICES":  []any{[]any{"Default", "Default"}, []any{"corp", "Corporate LDAP"}},
	}, {
		"DEBUG":                   true,
		"OPENSTACK_ENDPOINT_TYPE": "publicURL",
		"API_RESULT_LIMIT":        float64(1000),
		"DROPDOWN_MAX_ITEMS":      float64(-30),
		"SESSION_TIMEOUT":         float64(3600),
		"HORIZON_CONFIG_EXTRA": map[string]any{
			"password_autocomplete": "off", "modal_backdrop": []any{"static", float64(1)},
		},
		"IMAGE_CUSTOM_PROPERTY_TITLE": map[string]any{
			"architecture": `CPU \ arch`, "x": map[string]any{"bytes": []any{float64(0)}},
		},
	}}
	for i, want := range wants {
		if evs[i].Error != "" {
			t.Fatalf("file %d: %s", i, evs[i].Error)
		}
		for k, v := range want {
			if diff := cmp.Diff(v, evs[i].Values[k]); diff != "" {
				t.Errorf("file %d: %s (-want +python):\n%s", i, k, diff)
			}
		}
	}
}

// hostile are strings that try to end a string literal, start a statement or confuse a
// reader of the file.
var hostile = []string{
	`"`, `'`, `\`, `\\"`, `"""`, `'''`, `\"""`,
	"\n", "\r\n", "\r", "x\nimport os\nos.system('id')\n#",
	`"); import os; os.system("id"); ("`,
	"\"\"\"\nimport os\n\"\"\"",
	`\N{BULLET}`, `\x41`, `\u0041`, `{0}`, `%s`, "\t\v\f",
	"a\x00b", "\x1b[31mred", "\x7f", "\u0085", "\u00a0", "\u2028\u2029", "\ufeff",
	"\u202eevil\u202c", "日本語", "Grüße", "😀", "e\u0301", "\U0001F468\u200D\U0001F469",
	"\ufffd",
}

// TestHostileStringsRoundTrip puts each hostile string into every string field and
// checks with Python that the file holds only the expected statements and that the
// values read back are the input.
func TestHostileStringsRoundTrip(t *testing.T) {
	srcs := make([][]byte, len(hostile))
	for i, h := range hostile {
		srcs[i] = mustRender(t, settings.Settings{
			KeystoneURL:      h,
			Image:            h,
			MemcachedServers: []string{h, h + "2"},
			AllowedHosts:     []string{h},
			TimeZone:         h,
			Gateway:          true,
			WebSSO: &settings.WebSSO{
				Enabled:       true,
				Choices:       []settings.Choice{{ID: h, Label: h}, {ID: h + "2", Label: "x" + h}},
				InitialChoice: h + "2",
				IDPMapping:    map[string]settings.IDPMapping{h: {IDP: h, Protocol: h + h}},
				KeystoneURL:   h,
			},
			MultiDomain: &settings.MultiDomain{
				Enabled:       true,
				DefaultDomain: h,
				Dropdown:      true,
				Domains:       []settings.DomainChoice{{ID: h, Label: h}},
			},
			ExtraConfig: map[string]string{"SESSION_TIMEOUT": "60"},
		})
	}
	evs := evaluateAll(t, srcs...)
	wantNames := []string{
		"DEBUG", "ALLOWED_HOSTS", "TIME_ZONE", "SECRET_KEY", "SESSION_ENGINE", "CACHES",
		"OPENSTACK_KEYSTONE_URL", "OPENSTACK_ENDPOINT_TYPE", "LOGGING", "COMPRESS_OFFLINE",
		"COMPRESS_ENABLED", "SECURE_PROXY_SSL_HEADER", "WEBSSO_ENABLED", "WEBSSO_CHOICES",
		"WEBSSO_INITIAL_CHOICE", "WEBSSO_IDP_MAPPING", "WEBSSO_KEYSTONE_URL",
		"WEBSSO_USE_HTTP_REFERER", "OPENSTACK_KEYSTONE_MULTIDOMAIN_SUPPORT",
		"OPENSTACK_KEYSTONE_DEFAULT_DOMAIN", "OPENSTACK_KEYSTONE_DOMAIN_DROPDOWN",
		"OPENSTACK_KEYSTONE_DOMAIN_CHOICES", "SESSION_TIMEOUT",
	}
	for i, h := range hostile {
		t.Run(fmt.Sprintf("%d_%q", i, h), func(t *testing.T) {
			ev := evs[i]
			if ev.Error != "" {
				t.Fatalf("Python cannot parse the file: %s\n%s", ev.Error, srcs[i])
			}
			if len(ev.Other) != 0 {
				t.Errorf("injected statements: %v\n%s", ev.Other, srcs[i])
			}
			if diff := cmp.Diff(wantNames, ev.Names); diff != "" {
				t.Errorf("assigned names (-want +python):\n%s", diff)
			}
			want := map[string]any{
				"OPENSTACK_KEYSTONE_URL": h,
				"ALLOWED_HOSTS":          []any{h},
				"TIME_ZONE":              h,
				"CACHES": map[string]any{"default": map[string]any{
					"BACKEND":    "django.core.cache.backends.memcached.PyMemcacheCache",
					"LOCATION":   []any{h, h + "2"},
					"KEY_PREFIX": settings.KeyPrefix(h),
				}},
				"WEBSSO_CHOICES":                    []any{[]any{h, h}, []any{h + "2", "x" + h}},
				"WEBSSO_INITIAL_CHOICE":             h + "2",
				"WEBSSO_IDP_MAPPING":                map[string]any{h: []any{h, h + h}},
				"WEBSSO_KEYSTONE_URL":               h,
				"OPENSTACK_KEYSTONE_DEFAULT_DOMAIN": h,
				"OPENSTACK_KEYSTONE_DOMAIN_CHOICES": []any{[]any{h, h}},
			}
			for k, v := range want {
				if diff := cmp.Diff(v, ev.Values[k]); diff != "" {
					t.Errorf("%s (-want +python):\n%s", k, diff)
				}
			}
		})
	}
}

// TestEveryCodePointRoundTrips renders a string of every Unicode scalar value of the
// Basic Multilingual Plane (and a few beyond) and reads it back with Python.
func TestEveryCodePointRoundTrips(t *testing.T) {
	var b strings.Builder
	for r := rune(1); r <= 0xffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		b.WriteRune(r)
	}
	for _, r := range []rune{0x10000, 0x1f600, 0xe0001, 0xf0000, 0x10ffff} {
		b.WriteRune(r)
	}
	all := b.String()
	out, err := settings.Render(settings.Settings{KeystoneURL: keystone, TimeZone: all})
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out, []byte("\n")); n != bytes.Count(mustRender(t, minimal()), []byte("\n")) {
		t.Errorf("the string added line breaks: %d lines", n)
	}
	ev := evaluateAll(t, out)[0]
	if ev.Error != "" {
		t.Fatalf("Python cannot parse the file: %s", ev.Error)
	}
	if got, _ := ev.Values["TIME_ZONE"].(string); got != all {
		t.Errorf("TIME_ZONE does not round-trip (%d runes back, want %d)", len([]rune(got)), len([]rune(all)))
	}
}

func mustRender(t *testing.T, s settings.Settings) []byte {
	t.Helper()
	out, err := settings.Render(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pyLiterals reads a JSON list of candidate values and prints, for each, whether Python
// takes it as the value of one assignment that ast.literal_eval evaluates, with
// warnings counted as failures.
const pyLiterals = `
import ast, json, sys, warnings
warnings.simplefilter("error")
ok = []
for v in json.load(sys.stdin):
    try:
        tree = ast.parse("X = " + v + "\n")
        good = len(tree.body) == 1 and isinstance(tree.body[0], ast.Assign)
        if good:
            ast.literal_eval(tree.body[0].value)
    except Exception:
        good = False
    ok.append(good)
print(json.dumps(ok))
`

// literalCandidates are ExtraConfig values with the verdict the settings package
// gives them. Values refused here but accepted by Python are outside the documented
// subset; the others are refused by Python too.
var literalCandidates = []struct {
	src string
	ok  bool
}{
	{"True", true}, {"False", true}, {"None", true},
	{"0", true}, {"00", true}, {"0_0", true}, {"7", true}, {"1_000_000", true}, {"-1", true}, {"+ 1", true},
	{"0x1F", true}, {"0X_1f", true}, {"0o17", true}, {"0b1_0", true}, {"-0x1", true},
	{"1.5", true}, {"1.", true}, {".5", true}, {"1e5", true}, {"1E-5", true}, {"1.e+5", true}, {"1_0.0_1e1_0", true},
	{"2j", true}, {"1.5J", true}, {"01j", true}, {"01.5", true}, {"1+2j", true}, {"-1 - 2.5j", true}, {"-2j", true},
	{`"x"`, true}, {`'x'`, true}, {`""`, true}, {`''`, true}, {`"""x"y"""`, true}, {`'''a'''`, true}, {`""""""`, true},
	{`r"\d+"`, true}, {`R'\'`, false}, {`r'\''`, true}, {`b"\x00\xff"`, true}, {`rb"\x"`, true}, {`BR'x'`, true}, {`u"x"`, true},
	{`"\\ \' \" \a \b \f \n \r \t \v \0 \01 \012 \x4a \u00e9 \U0001F600"`, true},
	{`"日本"`, true}, {`"\ud800"`, false}, {`"\U00110000"`, false}, {`"\N{BULLET}"`, false}, {`"\d"`, false},
	{`b"\u00e9"`, false}, {`b"é"`, false}, {`"\x4"`, false}, {`"\`, false},
	{"()", true}, {"(1)", true}, {"(1,)", true}, {"(1, 2, )", true}, {"((1, 2), [3])", true},
	{"[]", true}, {"[1]", true}, {"[1, 'a', None,]", true}, {"[[[]]]", true},
	{"{}", true}, {"{'a': 1}", true}, {"{'a': 1,}", true}, {"{(1, 'x'): [1]}", true}, {"{1, 2}", true}, {"{1,}", true},
	{"{'a': {'b': {'c': ()}}}", true}, {"{'k': 1, 'k': 2}", true},
	{strings.Repeat("[", 64) + strings.Repeat("]", 64), true},
	{strings.Repeat("[", 66) + strings.Repeat("]", 66), false},
	{strings.Repeat("9", 4000), true}, {strings.Repeat("9", 4001), false}, {strings.Repeat("9", 5000), false},
	{"{[1]: 2}", false}, {"{[1]}", false}, {"{(1, [2]): 3}", false}, {"{{}: 1}", false}, {"{1: 2, 3}", false}, {"{1, 2: 3}", false},
	{"", false}, {" ", false}, {"x", false}, {"os", false}, {"true", false}, {"Truex", false}, {"True()", false},
	{"__import__('os')", false}, {"print(1)", false}, {"open('/etc/passwd').read()", false}, {"f'x'", false},
	{"1; import os", false}, {"1 # c", false}, {"1 \\", false}, {"'a' 'b'", false}, {"'a''b'", false},
	{"1 + 2", false}, {"1j + 2j", false}, {"1 + -2j", false}, {"--1", false}, {"-(1)", false}, {"-True", false},
	{"1 if True else 2", false}, {"[x for x in ()]", false}, {"lambda: 1", false}, {"...", false}, {"set()", false},
	{"01", false}, {"0_1", false}, {"1_", false}, {"1__0", false}, {"1e", false}, {"1e_1", false}, {"0x", false}, {"0x_", false},
	{"0xg", false}, {"0b2", false}, {"1.2.3", false}, {"1._5", false}, {"1a", false}, {".", false}, {"1jj", false},
	{"(", false}, {")", false}, {"(1", false}, {"[1,,]", false}, {"[,]", false}, {"{,}", false}, {"{1:}", false}, {"(,)", false},
	{`"x`, false}, {`'''x''`, false}, {`"""x""""`, false}, {"\"a\x00\"", false}, {"1\n", false}, {"1\r2", false},
	{"1\t", true}, {"[\t1 ,\t2 ]", true}, {"\f1", false}, {"１", false}, {"\"\xff\"", false},
}

// TestLiteralsAgreeWithPython checks the verdict on each candidate ExtraConfig value
// and that Python evaluates every accepted one.
func TestLiteralsAgreeWithPython(t *testing.T) {
	srcs := make([]string, len(literalCandidates))
	for i, c := range literalCandidates {
		srcs[i] = c.src
		_, err := settings.Render(settings.Settings{KeystoneURL: keystone, ExtraConfig: map[string]string{"X": c.src}})
		if got := err == nil; got != c.ok {
			t.Errorf("value %q: accepted = %v, want %v (err: %v)", c.src, got, c.ok, err)
		}
	}
	// JSON cannot carry invalid UTF-8; Python can only be asked about valid values.
	var valid []int
	var asked []string
	for i, s := range srcs {
		if utf8.ValidString(s) {
			valid = append(valid, i)
			asked = append(asked, s)
		}
	}
	in, err := json.Marshal(asked)
	if err != nil {
		t.Fatal(err)
	}
	var pyOK []bool
	if err := json.Unmarshal(python(t, pyLiterals, in), &pyOK); err != nil {
		t.Fatal(err)
	}
	for j, i := range valid {
		if literalCandidates[i].ok && !pyOK[j] {
			t.Errorf("value %q is accepted, but Python does not evaluate it as a literal", srcs[i])
		}
	}
}

// TestAcceptedLiteralsAreLiterals generates every sequence of up to three tokens of an
// alphabet of literal pieces and checks that Python evaluates each value accepted for
// ExtraConfig as a literal assignment.
func TestAcceptedLiteralsAreLiterals(t *testing.T) {
	tokens := []string{
		"1", "0", "-", "+", "j", "2j", ".", "e5", "_", "0x", "'a'", `"`, "'", `"""`, "(", ")", "[", "]",
		"{", "}", ",", ":", " ", "True", "None", "b'x'", `r'\'`, `\`, "#", ";", "1.5", "r", "f", `"\x`, `"\u`,
	}
	var accepted []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		if prefix != "" {
			_, err := settings.Render(settings.Settings{KeystoneURL: keystone, ExtraConfig: map[string]string{"X": prefix}})
			if err == nil {
				accepted = append(accepted, strings.Trim(prefix, " \t"))
			}
		}
		if n == 0 {
			return
		}
		for _, tok := range tokens {
			gen(prefix+tok, n-1)
		}
	}
	gen("", 3)
	if len(accepted) < 300 {
		t.Fatalf("only %d values accepted: the generator is broken", len(accepted))
	}
	in, err := json.Marshal(accepted)
	if err != nil {
		t.Fatal(err)
	}
	var pyOK []bool
	if err := json.Unmarshal(python(t, pyLiterals, in), &pyOK); err != nil {
		t.Fatal(err)
	}
	for i, ok := range pyOK {
		if !ok {
			t.Errorf("value %q is accepted, but Python does not evaluate it as a literal", accepted[i])
		}
	}
}
