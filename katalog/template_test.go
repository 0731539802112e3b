package katalog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/reconciler-sdk/katalog"
)

func TestStaticName(t *testing.T) {
	type want struct {
		name string
		ok   bool
	}
	cases := map[string]struct {
		reason string
		text   string
		want   want
	}{
		"Literal":        {"A literal name is itself.", "shared", want{"shared", true}},
		"MetadataName":   {"{{ .metadata.name }} is the custom resource's name.", "{{ .metadata.name }}-db", want{"my-app-db", true}},
		"Twice":          {"Every occurrence is replaced.", "{{.metadata.name}}-{{ .metadata.name }}", want{"my-app-my-app", true}},
		"Spec":           {"Any other field depends on the custom resource's data.", "{{ .spec.name }}", want{"", false}},
		"Function":       {"Functions are not evaluated statically.", "{{ lower .metadata.name }}", want{"", false}},
		"Conditional":    {"Control structures are not evaluated statically.", "{{ if .x }}a{{ end }}", want{"", false}},
		"NamespaceField": {"Only metadata.name counts.", "{{ .metadata.namespace }}", want{"", false}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tmpl := katalog.MustTemplate(tc.text)
			got, ok := tmpl.StaticName("my-app")
			if diff := cmp.Diff(tc.want, want{got, ok}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nStaticName (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
	if name, ok := (katalog.Template{Text: "built-in-go"}).StaticName("x"); !ok || name != "built-in-go" {
		t.Errorf("a literal Template built in Go: StaticName = %q, %v", name, ok)
	}
}

func TestTemplate(t *testing.T) {
	if _, err := katalog.NewTemplate("{{ .a"); !errors.Is(err, katalog.ErrTemplate) {
		t.Errorf("NewTemplate of a broken template: %v, want ErrTemplate", err)
	}
	// A Template built in Go (not loaded) is parsed on first use.
	out, err := katalog.Template{Text: "{{ .metadata.name }}-x"}.Execute(map[string]any{"metadata": map[string]any{"name": "a"}})
	if err != nil || out != "a-x" {
		t.Errorf("Execute of a Go-built Template = %q, %v", out, err)
	}
	if _, err := (katalog.Template{Text: "{{ nope }}"}).Execute(nil); !errors.Is(err, katalog.ErrTemplate) {
		t.Errorf("Execute of a broken Go-built Template: %v, want ErrTemplate", err)
	}
	if out, err := (katalog.Template{}).Execute(nil); out != "" || err != nil {
		t.Errorf("the zero Template renders %q, %v", out, err)
	}
	_, err = katalog.MustTemplate("{{ index .a 5 }}").Execute(map[string]any{"a": []any{1}})
	if err == nil || !strings.Contains(err.Error(), `rendering "{{ index .a 5 }}"`) {
		t.Errorf("an execution error names the template: %v", err)
	}
	// Assignments print nothing; nested lists print through orEmpty too.
	out, err = katalog.MustTemplate("{{ $x := .a }}{{ range .l }}[{{ .missing }}]{{ end }}{{ with .m }}{{ .k }}{{ else }}none{{ end }}{{ if .a }}{{ $x }}{{ end }}").
		Execute(map[string]any{"a": "A", "l": []any{map[string]any{}}, "m": nil})
	if err != nil || out != "[]noneA" {
		t.Errorf("nested actions rendered %q, %v", out, err)
	}
	lit := katalog.MustTemplate("plain")
	if !lit.IsLiteral() || lit.IsZero() || lit.String() != "plain" || katalog.MustTemplate("{{ 1 }}").IsLiteral() {
		t.Error("IsLiteral, IsZero or String wrong")
	}
	defer func() {
		if recover() == nil {
			t.Error("MustTemplate of a broken template did not panic")
		}
	}()
	katalog.MustTemplate("{{")
}
