package policy_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/policy"
)

// dump writes e as an S-expression, which shows the tree's shape unambiguously.
func dump(e policy.Expr) string {
	switch n := e.(type) {
	case *policy.TrueCheck:
		return "@"
	case *policy.FalseCheck:
		return "!"
	case *policy.RuleCheck:
		return "rule(" + n.Name + ")"
	case *policy.RoleCheck:
		return "role(" + n.Name + ")"
	case *policy.GenericCheck:
		return "generic(" + n.Kind + ", " + n.Match + ")"
	case *policy.LiteralCheck:
		return "literal(" + n.Literal + ", " + n.Match + ")"
	case *policy.NotCheck:
		return "not(" + dump(n.X) + ")"
	case *policy.AndCheck:
		return "and(" + dumpAll(n.Checks) + ")"
	case *policy.OrCheck:
		return "or(" + dumpAll(n.Checks) + ")"
	}
	return fmt.Sprintf("?%T", e)
}

func dumpAll(es []policy.Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = dump(e)
	}
	return strings.Join(parts, ", ")
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		in   string
		want string
	}{
		"empty allows":           {"", "@"},
		"always":                 {"@", "@"},
		"never":                  {"!", "!"},
		"role":                   {"role:admin", "role(admin)"},
		"rule":                   {"rule:admin_required", "rule(admin_required)"},
		"role name with colon":   {"role:compute:admin", "role(compute:admin)"},
		"kind is case-sensitive": {"Role:admin", "generic(Role, admin)"},
		"identity reader": {
			"role:admin or (role:reader and system_scope:all)",
			"or(role(admin), and(role(reader), generic(system_scope, all)))",
		},
		"target substitution": {
			"rule:admin_required or project_id:%(target.project.id)s",
			"or(rule(admin_required), generic(project_id, %(target.project.id)s))",
		},
		"user id substitution": {"user_id:%(target.user.id)s", "generic(user_id, %(target.user.id)s)"},
		"parenthesised check":  {"(project_id:%(project_id)s)", "generic(project_id, %(project_id)s)"},
		"literal True":         {"True:%(enabled)s", "literal(True, %(enabled)s)"},
		"literal False":        {"False:%(target.user.enabled)s", "literal(False, %(target.user.enabled)s)"},
		"literal quoted":       {"'member':%(role.name)s", "literal('member', %(role.name)s)"},
		"literal double":       {`"member":%(role.name)s`, `literal("member", %(role.name)s)`},
		"literal None":         {"None:%(domain_id)s", "literal(None, %(domain_id)s)"},
		"literal integer":      {"0:%(count)s or 42:%(count)s", "or(literal(0, %(count)s), literal(42, %(count)s))"},
		"not an integer":       {"042:%(count)s", "generic(042, %(count)s)"},
		"generic True value":   {"is_admin:True", "generic(is_admin, True)"},
		"http check":           {"http://policy.example/check", "generic(http, //policy.example/check)"},
		"percent literal":      {"name:100%%", "generic(name, 100%%)"},
		"and binds tighter":    {"role:a or role:b and role:c", "or(role(a), and(role(b), role(c)))"},
		"and first":            {"role:a and role:b or role:c", "or(and(role(a), role(b)), role(c))"},
		"two ands in an or": {
			"role:a and role:b or role:c and role:d",
			"or(and(role(a), role(b)), and(role(c), role(d)))",
		},
		"not binds tightest": {"not role:a and role:b", "and(not(role(a)), role(b))"},
		"not in an or":       {"role:a or not role:b and role:c", "or(role(a), and(not(role(b)), role(c)))"},
		"not of a group":     {"not (role:a or role:b)", "not(or(role(a), role(b)))"},
		"double not":         {"not not role:a", "not(not(role(a)))"},
		"keywords any case":  {"role:a AND role:b Or NOT role:c", "or(and(role(a), role(b)), not(role(c)))"},
		"flat or":            {"role:a or role:b or role:c", "or(role(a), role(b), role(c))"},
		"flat and":           {"@ and ! and role:c", "and(@, !, role(c))"},
		"group kept":         {"role:a and (role:b and role:c)", "and(role(a), and(role(b), role(c)))"},
		"redundant parens":   {"((role:a))", "role(a)"},
		"parens glued":       {"(role:a)or(role:b)", "role(a)or(role:b)"},
		"parens on keywords": {"(NOT (role:a))", "not(role(a))"},
		"mixed whitespace":   {" role:a\tor\nrole:b\r\n", "or(role(a), role(b))"},
		"unicode whitespace": {"role:a\u00a0or\u2003role:b", "or(role(a), role(b))"},
		"python \\s extras":  {"role:a\x1for\x1crole:b", "or(role(a), role(b))"},
		"nested key":         {"k:%(a(b)c)s", "generic(k, %(a(b)c)s)"},
		"max depth":          {strings.Repeat("(", policy.MaxDepth) + "@" + strings.Repeat(")", policy.MaxDepth), "@"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := policy.Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if d := dump(got); d != tc.want {
				t.Errorf("Parse(%q) = %s, want %s", tc.in, d, tc.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct {
		in       string
		sentinel error
		offset   int
		detail   string
	}{
		"unclosed paren":           {"role:admin or (role:reader", policy.ErrUnbalancedParenthesis, 14, "'(' is never closed"},
		"unclosed inner paren":     {"((role:a)", policy.ErrUnbalancedParenthesis, 0, "'(' is never closed"},
		"lone paren":               {"(", policy.ErrUnbalancedParenthesis, 0, "'(' is never closed"},
		"stray close":              {"role:admin)", policy.ErrUnbalancedParenthesis, 10, "')' has no matching '('"},
		"leading close":            {") role:a", policy.ErrUnbalancedParenthesis, 0, "')' has no matching '('"},
		"close after group":        {"(role:a))", policy.ErrUnbalancedParenthesis, 8, "')' has no matching '('"},
		"trailing or":              {"role:admin or", policy.ErrDanglingOperator, 11, `"or" has no right operand`},
		"leading and":              {"and role:admin", policy.ErrDanglingOperator, 0, `"and" has no left operand`},
		"two operators":            {"role:a and or role:b", policy.ErrDanglingOperator, 7, `"and" has no right operand`},
		"lone not":                 {"not", policy.ErrDanglingOperator, 0, `"not" has no operand`},
		"trailing not":             {"role:a and NOT", policy.ErrDanglingOperator, 11, `"NOT" has no operand`},
		"operator after paren":     {"(and role:a)", policy.ErrDanglingOperator, 1, `"and" has no left operand`},
		"operator before paren":    {"(role:a or)", policy.ErrDanglingOperator, 8, `"or" has no right operand`},
		"not before close":         {"(not)", policy.ErrDanglingOperator, 1, `"not" has no operand`},
		"adjacent checks":          {"role:a role:b", policy.ErrMissingOperator, 7, `expected and or or before "role:b"`},
		"check after group":        {"(role:a) role:b", policy.ErrMissingOperator, 9, `expected and or or before "role:b"`},
		"adjacent in group":        {"(role:a role:b)", policy.ErrMissingOperator, 8, `expected and, or or ')' before "role:b"`},
		"group after check":        {"role:a (role:b)", policy.ErrMissingOperator, 7, `expected and or or before "("`},
		"empty parens":             {"role:a or ()", policy.ErrEmptyCheck, 10, "'()' holds no check"},
		"blank":                    {" \t ", policy.ErrEmptyCheck, 0, "the expression is blank"},
		"only parens close":        {"))", policy.ErrUnbalancedParenthesis, 0, "')' has no matching '('"},
		"empty match":              {"role:", policy.ErrEmptyCheck, 0, `"role:" has nothing after ':'`},
		"empty rule":               {"role:a or rule:", policy.ErrEmptyCheck, 10, `"rule:" has nothing after ':'`},
		"empty kind":               {":admin", policy.ErrEmptyCheck, 0, `":admin" has no KIND before ':'`},
		"no colon":                 {"admin", policy.ErrMalformedCheck, 0, `"admin" has no ':'`},
		"bare True":                {"True", policy.ErrMalformedCheck, 0, `"True" has no ':'`},
		"quoted True":              {"'True'", policy.ErrMalformedCheck, 0, "'True' is a quoted string, not a check"},
		"quoted in or":             {`role:a or "False"`, policy.ErrMalformedCheck, 10, `"False" is a quoted string, not a check`},
		"quoted before paren":      {"('a:b')", policy.ErrMalformedCheck, 1, "'a:b' is a quoted string, not a check"},
		"unterminated literal":     {"'member:%(role.name)s", policy.ErrMalformedCheck, 0, "kind 'member is not a well-formed quoted literal"},
		"literal with escape":      {`'a\'b':x`, policy.ErrMalformedCheck, 0, `kind 'a\'b' is not a well-formed quoted literal`},
		"unclosed substitution":    {"project_id:%(project_id", policy.ErrMalformedCheck, 11, "%( is never closed by ')'"},
		"positional substitution":  {"project_id:%s", policy.ErrMalformedCheck, 11, "%-conversion without a (key)"},
		"trailing percent":         {"name:100%", policy.ErrMalformedCheck, 8, "%-conversion without a (key)"},
		"no conversion":            {"role:a or project_id:%(project_id)5", policy.ErrMalformedCheck, 21, "%(project_id) has no conversion character"},
		"bad conversion":           {"project_id:%(project_id)z", policy.ErrMalformedCheck, 11, `%(project_id) is followed by 'z'`},
		"star width":               {"project_id:%(project_id)*s", policy.ErrMalformedCheck, 11, `is followed by '*'`},
		"role substitution":        {"role:%(name", policy.ErrMalformedCheck, 5, "%( is never closed"},
		"literal substitution":     {"True:%(enabled)l", policy.ErrMalformedCheck, 5, "%(enabled) has no conversion character"},
		"close eaten by tokenizer": {"role:a or project_id:%(project_id)", policy.ErrMalformedCheck, 21, "%( is never closed by ')'"},
		"keyword glued to paren":   {"(not(role:a))", policy.ErrUnbalancedParenthesis, 12, "')' has no matching '('"},
		"too deep parens":          {strings.Repeat("(", policy.MaxDepth+1) + "@" + strings.Repeat(")", policy.MaxDepth+1), policy.ErrMalformedCheck, policy.MaxDepth, "nest deeper than"},
		"too deep not":             {strings.Repeat("not ", policy.MaxDepth+1) + "@", policy.ErrMalformedCheck, 4 * policy.MaxDepth, "nest deeper than"},
		"offset counts bytes":      {"role:a\u00a0or rule:b or", policy.ErrDanglingOperator, 18, `"or" has no right operand`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := policy.Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want an error", tc.in, dump(got))
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("Parse(%q) error %q does not match %v", tc.in, err, tc.sentinel)
			}
			var se *policy.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T is not a *SyntaxError", tc.in, err)
			}
			if se.Offset != tc.offset {
				t.Errorf("Parse(%q) offset = %d, want %d (%v)", tc.in, se.Offset, tc.offset, err)
			}
			if !strings.Contains(se.Detail, tc.detail) {
				t.Errorf("Parse(%q) detail = %q, want it to contain %q", tc.in, se.Detail, tc.detail)
			}
			wantPrefix := fmt.Sprintf("at byte %d: %v: ", tc.offset, tc.sentinel)
			if !strings.HasPrefix(err.Error(), wantPrefix) {
				t.Errorf("Parse(%q) error = %q, want prefix %q", tc.in, err, wantPrefix)
			}
		})
	}
}

func TestParseOffsets(t *testing.T) {
	// "role:a" 0, "or" 7, "(" 10, "not" 11, "rule:b" 15, "and" 22, "True:%(x)s" 26.
	e, err := policy.Parse("role:a or (not rule:b and True:%(x)s)")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	policy.Inspect(e, func(n policy.Expr) bool {
		got = append(got, fmt.Sprintf("%s@%d", dump(n), n.Pos()))
		return true
	})
	want := []string{
		"or(role(a), and(not(rule(b)), literal(True, %(x)s)))@0",
		"role(a)@0",
		"and(not(rule(b)), literal(True, %(x)s))@11",
		"not(rule(b))@11",
		"rule(b)@15",
		"literal(True, %(x)s)@26",
	}
	if !slices.Equal(got, want) {
		t.Errorf("nodes = %q, want %q", got, want)
	}
}

func TestString(t *testing.T) {
	tests := map[string]struct {
		in   string
		want string
	}{
		"spacing and case":   {"role:a   AND\trole:b", "role:a and role:b"},
		"needed parens kept": {"(role:a or role:b) and role:c", "(role:a or role:b) and role:c"},
		"and in or bare":     {"role:a or (role:b and role:c)", "role:a or role:b and role:c"},
		"and group kept":     {"role:a and (role:b and role:c)", "role:a and (role:b and role:c)"},
		"or group kept":      {"(role:a or role:b) or role:c", "(role:a or role:b) or role:c"},
		"not of check":       {"not (role:a)", "not role:a"},
		"not of and":         {"NOT (role:a and role:b)", "not (role:a and role:b)"},
		"not of not":         {"not (not role:a)", "not not role:a"},
		"not in and":         {"(not role:a) and (not role:b)", "not role:a and not role:b"},
		"empty":              {"", "@"},
		"group of always":    {"((@))", "@"},
		"glued parens":       {"(role:a)or(role:b)", "role:a)or(role:b"},
		"substitutions":      {"(project_id:%(target.project.id)s)", "project_id:%(target.project.id)s"},
		"literal":            {"'member':%(role.name)s", "'member':%(role.name)s"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e, err := policy.Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.String(); got != tc.want {
				t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.want)
			}
			again, err := policy.Parse(e.String())
			if err != nil {
				t.Fatalf("canonical %q does not parse: %v", e.String(), err)
			}
			if !policy.Equal(e, again) {
				t.Errorf("canonical %q parses to %s, want %s", e.String(), dump(again), dump(e))
			}
		})
	}
}

func TestStringBuiltInCode(t *testing.T) {
	a, b := &policy.RoleCheck{Name: "a"}, &policy.RoleCheck{Name: "b"}
	c, d := &policy.RoleCheck{Name: "c"}, &policy.RoleCheck{Name: "d"}
	tests := map[string]struct {
		in   policy.Expr
		want string
	}{
		"empty and allows":  {&policy.AndCheck{}, "@"},
		"empty or denies":   {&policy.OrCheck{}, "!"},
		"single operand":    {&policy.AndCheck{Checks: []policy.Expr{&policy.OrCheck{Checks: []policy.Expr{a}}}}, "role:a"},
		"nil operand":       {&policy.NotCheck{X: nil}, "not !"},
		"or of and and or":  {&policy.OrCheck{Checks: []policy.Expr{&policy.AndCheck{Checks: []policy.Expr{a, b}}, &policy.OrCheck{Checks: []policy.Expr{c, d}}}}, "role:a and role:b or (role:c or role:d)"},
		"and of or":         {&policy.AndCheck{Checks: []policy.Expr{&policy.OrCheck{Checks: []policy.Expr{a, b}}, c}}, "(role:a or role:b) and role:c"},
		"not of single and": {&policy.NotCheck{X: &policy.AndCheck{Checks: []policy.Expr{a}}}, "not role:a"},
		"generic":           {&policy.GenericCheck{Kind: "project_id", Match: "%(project_id)s"}, "project_id:%(project_id)s"},
		"literal":           {&policy.LiteralCheck{Literal: "True", Match: "%(enabled)s"}, "True:%(enabled)s"},
		"rule":              {&policy.RuleCheck{Name: "admin_required"}, "rule:admin_required"},
		"always and never":  {&policy.OrCheck{Checks: []policy.Expr{&policy.TrueCheck{}, &policy.FalseCheck{}}}, "@ or !"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.in.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	parse := func(s string) policy.Expr {
		t.Helper()
		e, err := policy.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	tests := map[string]struct {
		a, b policy.Expr
		want bool
	}{
		"offsets ignored":    {parse("role:a or role:b"), parse("  role:a   OR role:b"), true},
		"empty is always":    {parse(""), parse("@"), true},
		"role vs rule":       {parse("role:a"), parse("rule:a"), false},
		"name differs":       {parse("role:a"), parse("role:b"), false},
		"kind differs":       {parse("x:a"), parse("y:a"), false},
		"match differs":      {parse("x:a"), parse("x:b"), false},
		"literal differs":    {parse("True:%(a)s"), parse("False:%(a)s"), false},
		"and vs or":          {parse("role:a and role:b"), parse("role:a or role:b"), false},
		"operand count":      {parse("role:a or role:b"), parse("role:a or role:b or role:c"), false},
		"grouping differs":   {parse("role:a and (role:b and role:c)"), parse("role:a and role:b and role:c"), false},
		"not differs":        {parse("not role:a"), parse("not role:b"), false},
		"not vs check":       {parse("not role:a"), parse("role:a"), false},
		"always vs never":    {parse("@"), parse("!"), false},
		"single-operand or":  {&policy.OrCheck{Checks: []policy.Expr{&policy.RoleCheck{Name: "a"}}}, parse("role:a"), true},
		"nil is never":       {nil, parse("!"), true},
		"generic vs literal": {&policy.GenericCheck{Kind: "True", Match: "x"}, &policy.LiteralCheck{Literal: "True", Match: "x"}, false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := policy.Equal(tc.a, tc.b); got != tc.want {
				t.Errorf("Equal(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
			if got := policy.Equal(tc.b, tc.a); got != tc.want {
				t.Errorf("Equal(%v, %v) = %v, want %v", tc.b, tc.a, got, tc.want)
			}
		})
	}
}

func TestInspectSkipsChildren(t *testing.T) {
	e, err := policy.Parse("rule:a or not (rule:b and rule:c) or rule:d")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	policy.Inspect(e, func(n policy.Expr) bool {
		if _, ok := n.(*policy.NotCheck); ok {
			return false
		}
		if r, ok := n.(*policy.RuleCheck); ok {
			seen = append(seen, r.Name)
		}
		return true
	})
	if want := []string{"a", "d"}; !slices.Equal(seen, want) {
		t.Errorf("visited rules %q, want %q", seen, want)
	}
	var refs []string
	for _, r := range policy.RuleRefs(e) {
		refs = append(refs, fmt.Sprintf("%s@%d", r.Name, r.Offset))
	}
	if want := []string{"a@0", "b@15", "c@26", "d@37"}; !slices.Equal(refs, want) {
		t.Errorf("RuleRefs = %q, want %q", refs, want)
	}
}

func TestSubstitutions(t *testing.T) {
	tests := map[string]struct {
		in   string
		want []string
	}{
		"generic":       {"project_id:%(target.project.id)s", []string{"target.project.id"}},
		"several":       {"k:%(a)s-%(b)d", []string{"a", "b"}},
		"literal":       {"True:%(enabled)s", []string{"enabled"}},
		"role":          {"role:%(role.name)s", []string{"role.name"}},
		"percent only":  {"name:100%%", nil},
		"flags":         {"k:%(a)-08.3f", []string{"a"}},
		"percent key":   {"k:%(a)%", []string{"a"}},
		"nested parens": {"k:%(a(b)c)s", []string{"a(b)c"}},
		"none":          {"system_scope:all", nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e, err := policy.Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			switch n := e.(type) {
			case *policy.GenericCheck:
				got = n.Substitutions()
			case *policy.LiteralCheck:
				got = n.Substitutions()
			case *policy.RoleCheck:
				got = n.Substitutions()
			default:
				t.Fatalf("Parse(%q) = %T", tc.in, e)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Substitutions(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
