package katalog

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Operator compares a condition's field with its value.
type Operator string

// The operators of when, anyOf and validation conditions. Each is written either as a key
// of its own (equals: "200") or as operator: equals with value: "200".
const (
	// OpEquals: the field's text equals the value.
	OpEquals Operator = "equals"
	// OpNotEquals: the field's text differs from the value (a missing field is "").
	OpNotEquals Operator = "notEquals"
	// OpContains: the field's text contains the value.
	OpContains Operator = "contains"
	// OpPrefix: the field's text starts with the value.
	OpPrefix Operator = "prefix"
	// OpSuffix: the field's text ends with the value.
	OpSuffix Operator = "suffix"
	// OpExists: the field is present and not empty. Takes no value (exists: true).
	OpExists Operator = "exists"
	// OpNotExists: the field is absent or empty. Takes no value (notExists: true).
	OpNotExists Operator = "notExists"
	// OpGreaterThan: the field and the value are numbers and the field is greater.
	OpGreaterThan Operator = "greaterThan"
	// OpLessThan: the field and the value are numbers and the field is less.
	OpLessThan Operator = "lessThan"
)

// Operators lists every operator, in the order they are documented. A condition with any
// other operator is refused at load time with ErrUnknownOperator.
var Operators = []Operator{OpEquals, OpNotEquals, OpContains, OpPrefix, OpSuffix, OpExists, OpNotExists, OpGreaterThan, OpLessThan}

// Known reports whether o is one of Operators.
func (o Operator) Known() bool { return slices.Contains(Operators, o) }

// takesValue reports whether the operator compares against a value.
func (o Operator) takesValue() bool { return o != OpExists && o != OpNotExists }

// Condition is one test of a when, anyOf or validation list.
//
//   - field: external.registry-check.status   # a dot path into the reconcile's data
//     equals: "200"
//   - field: "{{ phase .cross.db }}"           # or a template, whose output is tested
//     equals: Ready
//   - field: spec.image
//     operator: exists
type Condition struct {
	// Field is a dot path into the data of the reconcile (spec.x, metadata.labels.y,
	// external.<name>.status, children.deployment.status.readyReplicas, cross.<as>.status.phase)
	// or, when it holds {{ }}, a template whose output is tested; required.
	Field Template `yaml:"field"`
	// Operator is one of Operators; required, written either as operator: or as a key.
	Operator Operator `yaml:"operator"`
	// Value is compared with the field, a template; empty for exists and notExists.
	Value Template `yaml:"value"`
}

// Match applies the operator to the field's text (present is false when the field is
// missing) and the rendered value. An unknown operator, or a number comparison with a
// non-number, is an error.
func (c Condition) Match(actual string, present bool, value string) (bool, error) {
	switch c.Operator {
	case OpEquals:
		return present && actual == value, nil
	case OpNotEquals:
		return actual != value, nil
	case OpContains:
		return present && strings.Contains(actual, value), nil
	case OpPrefix:
		return present && strings.HasPrefix(actual, value), nil
	case OpSuffix:
		return present && strings.HasSuffix(actual, value), nil
	case OpExists:
		return present && actual != "", nil
	case OpNotExists:
		return !present || actual == "", nil
	case OpGreaterThan, OpLessThan:
		if !present || actual == "" {
			return false, nil
		}
		a, err := strconv.ParseFloat(strings.TrimSpace(actual), 64)
		if err != nil {
			return false, fmt.Errorf("%s: field %s is %q, not a number", c.Operator, c.Field.Text, actual)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return false, fmt.Errorf("%s: value %q is not a number", c.Operator, value)
		}
		if c.Operator == OpGreaterThan {
			return a > v, nil
		}
		return a < v, nil
	}
	return false, fmt.Errorf("%w %q", ErrUnknownOperator, c.Operator)
}

// exclusive reports whether two condition lists can never hold together, judged only from
// literal conditions on the same literal field: equals with two different values, or
// equals/exists against notEquals of the same value/notExists.
func exclusive(a, b []Condition) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Field.Text != y.Field.Text || !x.Field.IsLiteral() || !x.Value.IsLiteral() || !y.Value.IsLiteral() {
				continue
			}
			if excludes(x, y) || excludes(y, x) {
				return true
			}
		}
	}
	return false
}

func excludes(x, y Condition) bool {
	switch {
	case x.Operator == OpEquals && y.Operator == OpEquals:
		return x.Value.Text != y.Value.Text
	case x.Operator == OpEquals && y.Operator == OpNotEquals:
		return x.Value.Text == y.Value.Text
	case x.Operator == OpExists && y.Operator == OpNotExists:
		return true
	case x.Operator == OpEquals && y.Operator == OpNotExists:
		return x.Value.Text != ""
	}
	return false
}
