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

// TestConnectionParams: the connection of the provisioned objects, the Service of the
// primary with HA, explicit fields kept.
func TestConnectionParams(t *testing.T) {
	db := &mariadbv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"},
		Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariadbv1alpha1.MariaDBRef{
			ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb", Namespace: "db"}}}}
	user := &mariadbv1alpha1.User{ObjectMeta: metav1.ObjectMeta{Name: "app-user", Namespace: "ns"},
		Spec: mariadbv1alpha1.UserSpec{Name: "svc"}}
	server := func(port int32, galera, replication bool) *mariadbv1alpha1.MariaDB {
		m := &mariadbv1alpha1.MariaDB{ObjectMeta: metav1.ObjectMeta{Name: "mariadb", Namespace: "db"}}
		m.Spec.Port = port
		if galera {
			m.Spec.Galera = &mariadbv1alpha1.Galera{Enabled: true}
		}
		if replication {
			m.Spec.Replication = &mariadbv1alpha1.Replication{Enabled: true}
		}
		return m
	}
	cases := map[string]struct {
		reason string
		server *mariadbv1alpha1.MariaDB
		given  Connection
		want   Connection
	}{
		"Standalone": {reason: "The server's Service and port.", server: server(3307, false, false),
			want: Connection{Host: "mariadb.db.svc", Port: 3307, Name: "app", User: "svc"}},
		"Galera": {reason: "With HA only the primary takes writes.", server: server(0, true, false),
			want: Connection{Host: "mariadb-primary.db.svc", Name: "app", User: "svc"}},
		"Replication": {reason: "Replication is HA too.", server: server(0, false, true),
			want: Connection{Host: "mariadb-primary.db.svc", Name: "app", User: "svc"}},
		"NotReadYet": {reason: "Before the server is read (validation), the plain Service.",
			want: Connection{Host: "mariadb.db.svc", Name: "app", User: "svc"}},
		"Explicit": {reason: "Fields the caller sets win.", server: server(3307, true, false),
			given: Connection{Host: "proxy", Port: 6033, Name: "other", User: "u", CAFile: "/ca"},
			want:  Connection{Host: "proxy", Port: 6033, Name: "other", User: "u", CAFile: "/ca"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &ProvisionParams{Connection: &ConnectionSecretParams{Name: "c", Connection: tc.given}}
			got := p.connectionParams(tc.server, db, user)
			if got.Connection != tc.want || got.Name != "c" {
				t.Errorf("%s\nconnectionParams = %+v, want %+v", tc.reason, got.Connection, tc.want)
			}
			if p.Connection.Connection != tc.given {
				t.Errorf("%s\nthe caller's params were changed: %+v", tc.reason, p.Connection.Connection)
			}
		})
	}
}

// TestRedactedError: an error that echoes the URL or the password is redacted, and
// errors.Is still sees the cause.
func TestRedactedError(t *testing.T) {
	cause := errors.New("boom")
	u := "mysql+pymysql://u:p%40ss@h:3306/d"
	err := redact(fmt.Errorf("apply Secret ns/c with %s and p@ss: %w", u, cause), "p@ss", u)
	if got, want := err.Error(), "apply Secret ns/c with xxxxx and xxxxx: boom"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, cause) {
		t.Errorf("errors.Is(err, cause) = false")
	}
}
