package database

import (
	"errors"
	"fmt"
	"testing"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/job"
)

func TestFailure(t *testing.T) {
	tests := map[string]struct {
		err  error
		want string
	}{
		"RunJob's text": {
			err:  fmt.Errorf("run Job ns/db-sync: %w: BackoffLimitExceeded: Job has reached the specified backoff limit", job.ErrJobFailed),
			want: "BackoffLimitExceeded: Job has reached the specified backoff limit",
		},
		"other text": {err: errors.New("boom"), want: "boom"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := failure(tc.err); got != tc.want {
				t.Errorf("failure() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestReadiness is the readiness rule of every mariadb-operator kind the package reads:
// the documented rows (no Ready condition, Ready False, Ready True) and the freshness
// rows (a Ready condition observed for an older generation, one without
// observedGeneration, a Grant whose recorded privileges are not the specified ones).
func TestReadiness(t *testing.T) {
	ready := func(status metav1.ConditionStatus, observed int64) []metav1.Condition {
		return []metav1.Condition{{Type: mariadbv1alpha1.ConditionTypeReady, Status: status,
			Reason: mariadbv1alpha1.ConditionReasonCreated, ObservedGeneration: observed}}
	}
	tests := map[string]struct {
		conds      []metav1.Condition
		generation int64
		want       bool
		detail     string
	}{
		"no Ready condition":         {generation: 1, want: false, detail: "no Ready condition yet"},
		"Ready False":                {conds: ready(metav1.ConditionFalse, 1), generation: 1, want: false, detail: "Ready=False (Created)"},
		"Ready Unknown":              {conds: ready(metav1.ConditionUnknown, 1), generation: 1, want: false, detail: "Ready=Unknown (Created)"},
		"Ready True, current":        {conds: ready(metav1.ConditionTrue, 2), generation: 2, want: true},
		"Ready True, newer observed": {conds: ready(metav1.ConditionTrue, 3), generation: 2, want: true},
		"Ready True, no observedGeneration (mariadb-operator v25)": {
			conds: ready(metav1.ConditionTrue, 0), generation: 5, want: true},
		"Ready True, older generation": {conds: ready(metav1.ConditionTrue, 1), generation: 2, want: false,
			detail: "Ready=True (Created) was observed at generation 1, the spec is at generation 2"},
		"Ready False, older generation": {conds: ready(metav1.ConditionFalse, 1), generation: 2, want: false,
			detail: "Ready=False (Created) was observed at generation 1, the spec is at generation 2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			om := metav1.ObjectMeta{Generation: tc.generation}
			got := map[string]bool{
				"MariaDB":  isMariaDBReady(&mariadbv1alpha1.MariaDB{ObjectMeta: om, Status: mariadbv1alpha1.MariaDBStatus{Conditions: tc.conds}}),
				"Database": isDatabaseReady(&mariadbv1alpha1.Database{ObjectMeta: om, Status: mariadbv1alpha1.DatabaseStatus{Conditions: tc.conds}}),
				"User":     isUserReady(&mariadbv1alpha1.User{ObjectMeta: om, Status: mariadbv1alpha1.UserStatus{Conditions: tc.conds}}),
				"Grant":    isGrantReady(&mariadbv1alpha1.Grant{ObjectMeta: om, Status: mariadbv1alpha1.GrantStatus{Conditions: tc.conds}}),
			}
			for kind, ready := range got {
				if ready != tc.want {
					t.Errorf("%s ready = %v, want %v", kind, ready, tc.want)
				}
			}
			if !tc.want {
				if d := readyDetail(tc.conds, tc.generation); d != tc.detail {
					t.Errorf("readyDetail = %q, want %q", d, tc.detail)
				}
			}
		})
	}
}

func TestGrantReadinessPrivileges(t *testing.T) {
	readyTrue := []metav1.Condition{{Type: mariadbv1alpha1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Created"}}
	tests := map[string]struct {
		spec, current []string
		want          bool
	}{
		"not recorded":      {spec: []string{"SELECT"}, current: nil, want: true},
		"granted":           {spec: []string{"SELECT", "INSERT"}, current: []string{"SELECT", "INSERT"}, want: true},
		"privilege added":   {spec: []string{"SELECT", "INSERT"}, current: []string{"SELECT"}, want: false},
		"privilege removed": {spec: []string{"SELECT"}, current: []string{"SELECT", "INSERT"}, want: false},
		"none recorded yet": {spec: []string{"SELECT"}, current: []string{}, want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := &mariadbv1alpha1.Grant{
				ObjectMeta: metav1.ObjectMeta{Generation: 1},
				Spec:       mariadbv1alpha1.GrantSpec{Privileges: tc.spec},
				Status:     mariadbv1alpha1.GrantStatus{Conditions: readyTrue, CurrentPrivileges: tc.current},
			}
			if got := isGrantReady(g); got != tc.want {
				t.Errorf("isGrantReady = %v, want %v", got, tc.want)
			}
			if !tc.want {
				want := fmt.Sprintf("Ready=True, but the privileges granted are %v and spec.privileges asks for %v", tc.current, tc.spec)
				if d := grantDetail(g); d != want {
					t.Errorf("grantDetail = %q, want %q", d, want)
				}
			}
		})
	}
}
