package policy_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/c5c3/reconciler-sdk/policy"
)

// FuzzParse: Parse never panics; an error is always a *SyntaxError inside the text;
// whatever Parse accepts renders to canonical text that parses to an Equal tree and
// renders to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"@",
		"!",
		"role:admin",
		"role:admin or (role:reader and system_scope:all)",
		"rule:admin_required or project_id:%(target.project.id)s",
		"user_id:%(target.user.id)s",
		"(role:admin and system_scope:all) or (role:admin and token.domain.id:%(target.domain.id)s)",
		"(rule:system_reader) or (role:reader and domain_id:%(target.user.domain_id)s) or project_id:%(target.user.default_project_id)s",
		"not role:guest AND (rule:project_reader Or rule:system_reader)",
		"True:%(enabled)s and rule:admin_or_token_subject",
		"'member':%(role.name)s",
		"is_admin:True or 42:%(count)s",
		"http://policy.example/check",
		"(role:a)or(role:b)",
		"role:a and (role:b and role:c)",
		"not not (not role:a)",
		"role:admin or (role:reader",
		"role:admin)",
		"role:admin or",
		"'True'",
		"True",
		"role:",
		"()",
		" \t ",
		"project_id:%(project_id",
		"role:a\u00a0or\x1frole:b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := policy.Parse(s)
		if err != nil {
			var se *policy.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T is not a *SyntaxError", s, err)
			}
			if se.Offset < 0 || (se.Offset >= len(s) && se.Offset != 0) {
				t.Fatalf("Parse(%q) offset %d outside the text", s, se.Offset)
			}
			return
		}
		canon := e.String()
		again, err := policy.Parse(canon)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, canon, err)
		}
		if !policy.Equal(e, again) {
			t.Fatalf("Parse(%q) = %s; its canonical %q parses to %s", s, dump(e), canon, dump(again))
		}
		if again.String() != canon {
			t.Fatalf("canonical text is not stable: %q -> %q", canon, again.String())
		}
	})
}

// FuzzRender: whatever Render accepts parses back, as YAML, to the same rules.
func FuzzRender(f *testing.F) {
	f.Add("identity:get_user", "role:admin or user_id:%(target.user.id)s", "admin_required", "")
	f.Add("a\"b", "x\ny\u2028\u0085\ufeff", "'", "#")
	f.Add("? key", ": value", "- item", "{}")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		rules := map[string]string{k1: v1, k2: v2}
		doc, err := policy.Render(rules)
		if err != nil {
			if !errors.Is(err, policy.ErrInvalidRule) {
				t.Fatalf("Render error %v does not match ErrInvalidRule", err)
			}
			return
		}
		if back := reload(t, doc); !maps.Equal(back, rules) {
			t.Fatalf("Render(%q) = %q parses back to %q", rules, doc, back)
		}
	})
}

// maxFuzzErrorBytes bounds the text of one Validate error (see Validate): field
// "rules[<name>]", value and detail, each quoting at most MaxExcerpt bytes per text.
const maxFuzzErrorBytes = 2 << 10

// fuzzRules reads a rule set from lines "name=expr" ("=" optional: the line is a name
// with the empty expression).
func fuzzRules(spec string) map[string]string {
	rules := map[string]string{}
	for _, line := range strings.Split(spec, "\n") {
		name, expr, _ := strings.Cut(line, "=")
		rules[name] = expr
	}
	return rules
}

// FuzzValidate: Validate never panics, is deterministic, leaves its input alone, keeps
// its bounds (at most MaxErrors errors plus a summary, every error at most 2 KiB, values
// cut to MaxExcerpt bytes at UTF-8 boundaries), lists errors in rule order, and counts
// exactly the problems a naive checker finds: one per empty name, per rule Parse
// refuses, per reference to an undefined rule, and per group of rules that reference
// each other in a cycle.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		"identity:get_user=role:admin or (role:reader",
		"admin_required=role:admin\nidentity:get_user=rule:admin_requirex or rule:admin_required or rule:owner",
		"z=rule:missing\na=role:a and\nm=@",
		"a=role:x or rule:a",
		"a=rule:b\nb=role:x and rule:c\nc=rule:a or role:y\nd=rule:a",
		"a=rule:b or rule:c\nb=rule:a\nc=rule:a",
		"a=rule:b\nb=rule:a\nc=rule:d\nd=rule:c or rule:a",
		"r0=rule:r1\nr1=rule:r2\nr2=rule:r3\nr3=rule:r4\nr4=rule:r5\nr5=rule:r6\nr6=rule:r7\nr7=rule:r8\nr8=rule:r0",
		"a=rule:b or rule:c\nb=rule:d\nc=rule:d\nd=@",
		"=@",
		"a=rule:a or rule:nope",
		"a=" + strings.Repeat("(", 150) + "role:a",
		"a=role:a" + strings.Repeat(")", 150),
		"a=" + strings.Repeat("ä", 120),
		strings.Repeat("n", 150) + "=rule:" + strings.Repeat("m", 150),
		"a=" + strings.Repeat("rule:x or ", 60) + "rule:y",
		"a=project_id:%(" + strings.Repeat("k", 150),
		"a=rule:b\xff\nb\xff=rule:a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		rules := fuzzRules(spec)
		before := maps.Clone(rules)
		errs := policy.Validate(rules, nil)
		if again := policy.Validate(rules, nil); fmt.Sprint(again) != fmt.Sprint(errs) {
			t.Fatalf("Validate is not deterministic:\n%v\n%v", errs, again)
		}
		if !maps.Equal(rules, before) {
			t.Fatal("Validate mutated its input")
		}

		want := naiveProblems(rules)
		listed := errs
		switch {
		case len(errs) > policy.MaxErrors+1:
			t.Fatalf("%d errors, want at most %d", len(errs), policy.MaxErrors+1)
		case want > policy.MaxErrors:
			summary := errs[len(errs)-1]
			if len(errs) != policy.MaxErrors+1 || summary.Type != field.ErrorTypeTooMany || summary.BadValue != want {
				t.Fatalf("%d problems: %d errors ending in %v, want %d and a summary counting %d",
					want, len(errs), summary, policy.MaxErrors, want)
			}
			listed = errs[:policy.MaxErrors]
		case len(errs) != want:
			t.Fatalf("%d errors, want %d (the problems a naive checker finds): %v", len(errs), want, errs)
		}

		longNames := false
		for name := range rules {
			longNames = longNames || len(name) > policy.MaxExcerpt
		}
		var prev string
		for i, e := range listed {
			if n := len(e.Error()); n > maxFuzzErrorBytes {
				t.Fatalf("error %d is %d bytes: %.300s...", i, n, e.Error())
			}
			v, ok := e.BadValue.(string)
			if e.Type != field.ErrorTypeInvalid || !ok {
				t.Fatalf("error %d = %#v, want Invalid with a string value", i, e)
			}
			if len(v) > policy.MaxExcerpt+2*len("…") {
				t.Fatalf("error %d quotes %d bytes", i, len(v))
			}
			name := strings.TrimSuffix(strings.TrimPrefix(e.Field, "rules["), "]")
			expr, defined := rules[name]
			if !longNames {
				if !defined {
					t.Fatalf("error %d is on %q, not a rule", i, e.Field)
				}
				if name < prev {
					t.Fatalf("error %d on %q after one on %q", i, name, prev)
				}
				prev = name
				if utf8.ValidString(expr) && !utf8.ValidString(v) {
					t.Fatalf("error %d value %q is cut inside a rune", i, v)
				}
				if !strings.Contains(expr, strings.TrimSuffix(strings.TrimPrefix(v, "…"), "…")) {
					t.Fatalf("error %d value %q is not taken from %q", i, v, expr)
				}
			}
		}
	})
}

// naiveProblems counts the problems of rules the simple way: empty names, rules Parse
// refuses, references to undefined rules, and groups of rules that reach each other
// (or a rule that reaches itself) through references.
func naiveProblems(rules map[string]string) int {
	problems := 0
	refs := map[string][]string{}
	for name, expr := range rules {
		if name == "" {
			problems++
		}
		e, err := policy.Parse(expr)
		if err != nil {
			problems++
			continue
		}
		for _, ref := range policy.RuleRefs(e) {
			if _, ok := rules[ref.Name]; ok {
				refs[name] = append(refs[name], ref.Name)
			} else {
				problems++
			}
		}
	}
	reach := map[string]map[string]bool{}
	for name := range rules {
		seen := map[string]bool{}
		queue := slices.Clone(refs[name])
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			if !seen[n] {
				seen[n] = true
				queue = append(queue, refs[n]...)
			}
		}
		reach[name] = seen
	}
	grouped := map[string]bool{}
	for name := range rules {
		if grouped[name] || !reach[name][name] {
			continue
		}
		problems++
		for other := range reach[name] {
			if reach[other][name] {
				grouped[other] = true
			}
		}
	}
	return problems
}

// FuzzLoadPolicyFromConfigMap: loading any policy.yaml never panics; an error matches
// ErrInvalidPolicyYAML, starts with the documented prefix and stays within its bound;
// loaded rules render back (when Render accepts them) to a document that loads to the
// same rules, and validate within Validate's bounds. The ConfigMap is served by a fake
// client: this target checks parsing, and fuzz workers start no API server.
func FuzzLoadPolicyFromConfigMap(f *testing.F) {
	for _, s := range []string{
		"\"identity:get_user\": \"role:admin\"\nadmin_required: role:admin or is_admin:1\nowner: 'user_id:%(user_id)s'\n",
		"",
		"# no overrides\n",
		"~\n",
		"identity:get_user:\n",
		`{"a": "role:a", "b": ""}`,
		"a: [role:a\n",
		"a: role:a\n  b: role:b\n",
		"- role:a\n",
		"a: role:a\na: role:b\n",
		"a: 1\n",
		"a: true\n",
		"a:\n  b: c\n",
		"? " + strings.Repeat("n", 1100) + "\n: 1\n",
		"a: &x role:a\nb: *x\n",
		"a: !!binary cm9sZTph\n",
		"\"a\\u2028b\": \"x\\ty\"\n",
		"a: \"\\xff\"\n",
		"<<: {a: role:a}\n",
	} {
		f.Add(s)
	}
	key := client.ObjectKey{Namespace: "openstack", Name: "identity-policy"}
	load := func(doc string) (map[string]string, error) {
		c := fake.NewClientBuilder().WithObjects(&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Data:       map[string]string{policy.PolicyKey: doc},
		}).Build()
		return policy.LoadPolicyFromConfigMap(context.Background(), c, key)
	}
	prefix := "parsing policy.yaml from ConfigMap openstack/identity-policy: "
	f.Fuzz(func(t *testing.T, doc string) {
		rules, err := load(doc)
		if err != nil {
			if !errors.Is(err, policy.ErrInvalidPolicyYAML) || !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("error %.300q does not match ErrInvalidPolicyYAML with prefix %q", err, prefix)
			}
			if max := len(prefix) + policy.MaxParserMessage + len("…"); len(err.Error()) > max {
				t.Fatalf("error is %d bytes, want at most %d", len(err.Error()), max)
			}
			if rules != nil {
				t.Fatalf("rules %v returned with an error", rules)
			}
			return
		}
		if rules == nil {
			t.Fatal("nil rules without an error")
		}
		if errs := policy.Validate(rules, nil); len(errs) > policy.MaxErrors+1 {
			t.Fatalf("Validate returned %d errors", len(errs))
		}
		rendered, err := policy.Render(rules)
		if err != nil {
			return
		}
		back, err := load(rendered)
		if err != nil {
			t.Fatalf("rendered rules do not load: %v\n%s", err, rendered)
		}
		if !maps.Equal(back, rules) {
			t.Fatalf("rules %q render to %q, which loads as %q", rules, rendered, back)
		}
	})
}
