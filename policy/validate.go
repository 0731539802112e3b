package policy

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Validate checks every rule of rules and returns one error per problem, sorted by
// rule name and then by position. Each error is a field.Invalid on
// fldPath.Key(<rule name>) (for example rules[identity:get_user]) whose value is the
// rule's expression and whose detail reads "at byte <offset>: <problem>: <what>",
// the offset counting bytes into the expression. A nil fldPath means
// field.NewPath("rules").
//
// The problems are: an empty rule name; every [SyntaxError] of [Parse] (one per rule,
// the first); a rule:NAME whose NAME rules does not define ([ErrUnknownRule]); and rules
// that reference each other in a cycle ([ErrRuleCycle], reported once per cycle, at the
// reference that closes it). Validate a merged set ([Merge]) so that references to
// base rules resolve.
func Validate(rules map[string]string, fldPath *field.Path) field.ErrorList {
	if fldPath == nil {
		fldPath = field.NewPath("rules")
	}
	names := make([]string, 0, len(rules))
	for name := range rules {
		names = append(names, name)
	}
	slices.Sort(names)

	var errs []ruleError
	refs := make(map[string][]*RuleCheck, len(rules))
	for _, name := range names {
		expr := rules[name]
		p := fldPath.Key(name)
		if name == "" {
			errs = append(errs, ruleError{name, -1, field.Invalid(p, expr, "rule name must not be empty")})
		}
		e, err := Parse(expr)
		if err != nil {
			var se *SyntaxError
			errors.As(err, &se)
			errs = append(errs, ruleError{name, se.Offset, field.Invalid(p, expr, err.Error())})
			continue
		}
		for _, ref := range RuleRefs(e) {
			if _, ok := rules[ref.Name]; !ok {
				errs = append(errs, ruleError{name, ref.Offset, field.Invalid(p, expr,
					syntaxErr(ref.Offset, ErrUnknownRule, "rule %q is not defined", ref.Name).Error())})
				continue
			}
			refs[name] = append(refs[name], ref)
		}
	}
	errs = append(errs, findCycles(names, rules, refs, fldPath)...)
	slices.SortStableFunc(errs, func(a, b ruleError) int {
		return cmp.Or(strings.Compare(a.name, b.name), cmp.Compare(a.offset, b.offset))
	})
	list := make(field.ErrorList, len(errs))
	for i, e := range errs {
		list[i] = e.err
	}
	return list
}

// ruleError is a field error with the rule and offset it is sorted by.
type ruleError struct {
	name   string
	offset int
	err    *field.Error
}

// findCycles walks the rule:NAME graph depth-first, rules and references in a fixed
// order, and reports each back edge.
func findCycles(names []string, rules map[string]string, refs map[string][]*RuleCheck, fldPath *field.Path) []ruleError {
	const (
		unvisited = iota
		onStack
		done
	)
	var (
		errs  []ruleError
		state = make(map[string]int, len(names))
		stack []string
	)
	var visit func(name string)
	visit = func(name string) {
		state[name] = onStack
		stack = append(stack, name)
		for _, ref := range refs[name] {
			switch state[ref.Name] {
			case unvisited:
				visit(ref.Name)
			case onStack:
				from := slices.Index(stack, ref.Name)
				path := strings.Join(append(slices.Clone(stack[from:]), ref.Name), " -> ")
				errs = append(errs, ruleError{name, ref.Offset, field.Invalid(fldPath.Key(name), rules[name],
					syntaxErr(ref.Offset, ErrRuleCycle, "%s", path).Error())})
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = done
	}
	for _, name := range names {
		if state[name] == unvisited {
			visit(name)
		}
	}
	return errs
}
