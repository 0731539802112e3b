package katalog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/katalog"
)

func TestConditionMatch(t *testing.T) {
	type args struct {
		op      katalog.Operator
		actual  string
		present bool
		value   string
	}
	type want struct {
		match bool
		err   string
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"Equals":                {"Text equality.", args{katalog.OpEquals, "200", true, "200"}, want{match: true}},
		"EqualsMissing":         {"A missing field equals nothing, not even \"\".", args{katalog.OpEquals, "", false, ""}, want{}},
		"NotEqualsMissing":      {"A missing field differs from every value.", args{katalog.OpNotEquals, "", false, "x"}, want{match: true}},
		"NotEquals":             {"Equal text does not differ.", args{katalog.OpNotEquals, "x", true, "x"}, want{}},
		"Contains":              {"Substring.", args{katalog.OpContains, "production-eu", true, "prod"}, want{match: true}},
		"Prefix":                {"Prefix.", args{katalog.OpPrefix, "production", true, "prod"}, want{match: true}},
		"Suffix":                {"Suffix.", args{katalog.OpSuffix, "production", true, "prod"}, want{}},
		"Exists":                {"Present and not empty.", args{katalog.OpExists, "nginx", true, ""}, want{match: true}},
		"ExistsEmpty":           {"Empty counts as absent.", args{katalog.OpExists, "", true, ""}, want{}},
		"NotExists":             {"Absent.", args{katalog.OpNotExists, "", false, ""}, want{match: true}},
		"GreaterThan":           {"Numeric comparison, not text: 10 > 9.", args{katalog.OpGreaterThan, "10", true, "9"}, want{match: true}},
		"GreaterThanEqual":      {"Strict.", args{katalog.OpGreaterThan, "1", true, "1"}, want{}},
		"GreaterThanMissing":    {"A missing field is not greater than anything (readyReplicas before the Deployment exists).", args{katalog.OpGreaterThan, "", false, "0"}, want{}},
		"LessThan":              {"Decimals compare numerically.", args{katalog.OpLessThan, "0.5", true, "1"}, want{match: true}},
		"GreaterThanNotANumber": {"A field that is not a number is an error naming it.", args{katalog.OpGreaterThan, "many", true, "0"}, want{err: `field spec.x is "many", not a number`}},
		"LessThanBadValue":      {"A value that is not a number is an error.", args{katalog.OpLessThan, "1", true, "x"}, want{err: `value "x" is not a number`}},
		"Unknown":               {"An operator outside the list is an error.", args{katalog.Operator("matches"), "a", true, "a"}, want{err: `unknown operator "matches"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := katalog.Condition{Field: katalog.MustTemplate("spec.x"), Operator: tc.args.op}
			got, err := c.Match(tc.args.actual, tc.args.present, tc.args.value)
			if tc.want.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want.err) {
					t.Fatalf("%s\nerror = %v, want one containing %q", tc.reason, err, tc.want.err)
				}
				return
			}
			if err != nil || got != tc.want.match {
				t.Errorf("%s\nMatch = %v, %v; want %v", tc.reason, got, err, tc.want.match)
			}
		})
	}
	if _, err := (katalog.Condition{Operator: "x"}).Match("", false, ""); !errors.Is(err, katalog.ErrUnknownOperator) {
		t.Errorf("unknown operator error %v does not wrap ErrUnknownOperator", err)
	}
	for _, op := range katalog.Operators {
		if !op.Known() {
			t.Errorf("%s is listed but not Known", op)
		}
	}
}

// Both ways of writing an operator decode to the same condition.
func TestConditionForms(t *testing.T) {
	k, err := katalog.Parse("t.yaml", []byte(doc("      validation:\n        rules:\n"+
		"          - {field: spec.replicas, greaterThan: 0, action: warn, message: scale up}\n"+
		"          - {field: spec.replicas, operator: greaterThan, value: \"0\"}\n"+
		"          - {field: spec.image, exists: true}\n")))
	if err != nil {
		t.Fatal(err)
	}
	rules := k.Spec.CRDs["app"].Validation.Rules
	for i, r := range rules[:2] {
		if r.Field.Text != "spec.replicas" || r.Operator != katalog.OpGreaterThan || r.Value.Text != "0" {
			t.Errorf("rule %d = %+v", i, r.Condition)
		}
	}
	if rules[0].Action != katalog.ActionWarn || rules[0].Message != "scale up" || rules[1].Action != "" {
		t.Errorf("actions %q %q, message %q", rules[0].Action, rules[1].Action, rules[0].Message)
	}
	if rules[2].Operator != katalog.OpExists || !rules[2].Value.IsZero() {
		t.Errorf("exists shorthand = %+v", rules[2].Condition)
	}
}
