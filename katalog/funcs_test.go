package katalog_test

import (
	"encoding/base64"
	"regexp"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// render parses and executes one template against data.
func render(t *testing.T, text string, data any) (string, error) {
	t.Helper()
	tmpl, err := katalog.NewTemplate(text)
	if err != nil {
		t.Fatalf("NewTemplate(%q): %v", text, err)
	}
	return tmpl.Execute(data)
}

func TestFuncs(t *testing.T) {
	type args struct {
		text string
		data any
	}
	type want struct {
		out     string
		pattern string // when set, out must match it instead of equalling out
		err     string
	}
	cross := map[string]any{"db": map[string]any{"found": "true", "status": map[string]any{"phase": "Ready", "replicas": 3}}, "gone": map[string]any{"found": "false"}}
	data := map[string]any{"cross": cross, "spec": map[string]any{"name": "  Web App ", "tags": []any{"a", "b"}, "zero": 0, "empty": ""}}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"RandomAlphanumeric": {"N characters of [a-zA-Z0-9].", args{"{{ randomAlphanumeric 32 }}", nil}, want{pattern: `^[a-zA-Z0-9]{32}$`}},
		"RandomAlphanumericZero": {"A length below 1 is an error, not an empty password.", args{"{{ randomAlphanumeric 0 }}", nil},
			want{err: "length must be between 1 and 4096"}},
		"RandomAlphanumericHuge": {"A huge length is an error, not an allocation.", args{"{{ randomAlphanumeric 100000000 }}", nil}, want{err: "length must be between"}},
		"RandomHex":              {"N bytes as 2N hex characters.", args{"{{ randomHex 16 }}", nil}, want{pattern: `^[0-9a-f]{32}$`}},
		"RandomBase64":           {"N bytes as URL-safe base64 without padding.", args{"{{ randomBase64 32 }}", nil}, want{pattern: `^[A-Za-z0-9_-]{43}$`}},
		"UUIDv4":                 {"A version 4, RFC 4122 variant UUID.", args{"{{ uuidv4 }}", nil}, want{pattern: `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`}},
		"Phase":                  {"status.phase of a cross reference.", args{"{{ phase .cross.db }}", data}, want{out: "Ready"}},
		"PhaseMissing":           {"A cross reference without status has no phase.", args{"{{ phase .cross.gone }}|{{ phase .cross.nothing }}", data}, want{out: "|"}},
		"Found":                  {"found reads the found flag.", args{"{{ found .cross.db }} {{ found .cross.gone }} {{ found .cross.nothing }}", data}, want{out: "true false false"}},
		"Default":                {"default replaces empty values only.", args{`{{ default "x" .spec.empty }} {{ default "x" .spec.zero }} {{ default "x" .spec.missing }} {{ .spec.tags | default "x" }}`, data}, want{out: "x x x [a b]"}},
		"Or":                     {"The built-in or falls back over missing keys.", args{"{{ or .value.replicas .spec.zero 7 }}", map[string]any{"spec": data["spec"]}}, want{out: "7"}},
		"MissingKey":             {"A missing key prints as nothing, not <no value>.", args{"[{{ .spec.nothing }}][{{ .nothing.at.all }}]", data}, want{out: "[][]"}},
		"Strings": {"String helpers take the piped value last.",
			args{`{{ .spec.name | trim | lower }}/{{ upper "a" }}/{{ trimPrefix "x-" "x-y" }}/{{ trimSuffix ".d" "c.d" }}/{{ replace " " "-" "a b c" }}`, data},
			want{out: "web app/A/y/c/a-b-c"}},
		"Predicates":  {"contains, hasPrefix and hasSuffix.", args{`{{ contains "b" "abc" }} {{ hasPrefix "a" "abc" }} {{ hasSuffix "a" "abc" }}`, nil}, want{out: "true true false"}},
		"Join":        {"join renders each element.", args{`{{ join "," .spec.tags }}|{{ join "," .spec.missing }}`, data}, want{out: "a,b|"}},
		"JoinNotList": {"join of a non-list is an error.", args{`{{ join "," .spec.zero }}`, data}, want{err: "join: int is not a list"}},
		"Quote":       {"quote renders a Go string literal.", args{`{{ quote "a\"b" }}`, nil}, want{out: `"a\"b"`}},
		"Base64":      {"b64enc and b64dec round-trip.", args{`{{ b64enc "secret" }} {{ b64enc "secret" | b64dec }}`, nil}, want{out: base64.StdEncoding.EncodeToString([]byte("secret")) + " secret"}},
		"Base64Bad":   {"b64dec of bad input is an error that does not echo the input.", args{`{{ b64dec .s }}`, map[string]any{"s": "hunter2!"}}, want{err: "b64dec: input is not standard base64"}},
		"SHA256":      {"sha256sum is the hex digest.", args{`{{ sha256sum "abc" }}`, nil}, want{out: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}},
		"ToJSON":      {"toJson renders compact JSON.", args{`{{ toJson .cross.db.status }}`, data}, want{out: `{"phase":"Ready","replicas":3}`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := render(t, tc.args.text, tc.args.data)
			switch {
			case tc.want.err != "":
				if err == nil || !strings.Contains(err.Error(), tc.want.err) {
					t.Fatalf("%s\nerror = %v, want one containing %q", tc.reason, err, tc.want.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("%s\nerror %q echoes the input", tc.reason, err)
				}
			case err != nil:
				t.Fatalf("%s\nunexpected error: %v", tc.reason, err)
			case tc.want.pattern != "":
				if !regexp.MustCompile(tc.want.pattern).MatchString(got) {
					t.Errorf("%s\n%q does not match %s", tc.reason, got, tc.want.pattern)
				}
			case got != tc.want.out:
				t.Errorf("%s\ngot %q, want %q", tc.reason, got, tc.want.out)
			}
		})
	}
}

// The random functions draw a new value on every call (which is why secrets that use them
// are declared with once: true) and cover the whole alphabet.
func TestRandomValuesDiffer(t *testing.T) {
	for _, text := range []string{"{{ randomAlphanumeric 24 }}", "{{ randomHex 16 }}", "{{ randomBase64 16 }}", "{{ uuidv4 }}"} {
		a, _ := render(t, text, nil)
		b, _ := render(t, text, nil)
		if a == b {
			t.Errorf("%s rendered %q twice", text, a)
		}
	}
	seen := map[rune]bool{}
	for range 20 {
		s, err := render(t, "{{ randomAlphanumeric 256 }}", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range s {
			seen[r] = true
		}
	}
	if len(seen) != 62 {
		t.Errorf("randomAlphanumeric used %d distinct characters in 5120 draws, want all 62", len(seen))
	}
}

func TestFuncMapIsACopy(t *testing.T) {
	m := katalog.FuncMap()
	delete(m, "phase")
	if _, ok := katalog.FuncMap()["phase"]; !ok {
		t.Error("deleting from one FuncMap changed the next")
	}
}
