package identitybackend

import (
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
)

// testBackend returns a backend of the Keystone keystone in namespace ns.
func testBackend(name, domain string, created time.Time) *v1alpha1.KeystoneIdentityBackend {
	return &v1alpha1.KeystoneIdentityBackend{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", CreationTimestamp: metav1.NewTime(created)},
		Spec:       v1alpha1.KeystoneIdentityBackendSpec{KeystoneRef: v1alpha1.LocalObjectReference{Name: "keystone"}, Domain: domain},
	}
}

func TestRenderDomainFile(t *testing.T) {
	b := testBackend("corp-ldap", "corp", time.Now())
	b.Spec.Config = map[string]map[string]string{"ldap": {"url": "ldaps://ldap.corp", "suffix": "dc=corp"}}
	b.Spec.PasswordSecretRef = &v1alpha1.SecretKeyRef{Name: "bind", Key: "password"}

	name, content, err := renderDomainFile(b, "pa$$word")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Rendered by the keystone operator for the domain corp; do not edit.\n" +
		"[identity]\ndriver = ldap\n\n[ldap]\npassword = pa$$$$word\nsuffix = dc=corp\nurl = ldaps://ldap.corp\n"
	if name != "keystone.corp.conf" || content != want {
		t.Fatalf("renderDomainFile = %q,\n%q\nwant keystone.corp.conf,\n%q", name, content, want)
	}
	if _, ok := b.Spec.Config["ldap"]["password"]; ok {
		t.Fatal("rendering wrote the password into the backend's config")
	}

	b.Spec.Driver = "sql"
	b.Spec.PasswordSecretRef = nil
	b.Spec.Config = nil
	_, content, err = renderDomainFile(b, "")
	if err != nil || !strings.Contains(content, "[identity]\ndriver = sql\n") || strings.Contains(content, "[ldap]") {
		t.Fatalf("sql driver without a password: %q, %v", content, err)
	}
}

func TestRenderDomainFileRefusesWithoutQuoting(t *testing.T) {
	for _, tc := range []struct {
		name     string
		config   map[string]map[string]string
		password string
		want     error
	}{
		{"password in config", map[string]map[string]string{"ldap": {"password": "inline-secret"}}, "", ErrBindPasswordInConfig},
		{"unreadable password", nil, `ab\$inline-secret`, settings.ErrInvalidSettings},
		{"upper-case section", map[string]map[string]string{"LDAP": {"url": "inline-secret"}}, "", settings.ErrInvalidSettings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := testBackend("corp-ldap", "corp", time.Now())
			b.Spec.Config = tc.config
			b.Spec.PasswordSecretRef = &v1alpha1.SecretKeyRef{Name: "bind", Key: "password"}
			_, _, err := renderDomainFile(b, tc.password)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), "KeystoneIdentityBackend ns/corp-ldap") {
				t.Fatalf("renderDomainFile: %v, want %v naming the backend", err, tc.want)
			}
			if strings.Contains(err.Error(), "inline-secret") {
				t.Fatalf("error %q quotes a value", err)
			}
		})
	}
}

func TestDomainHoldersOldestWins(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	newer := testBackend("a-newer", "corp", t0.Add(time.Hour))
	older := testBackend("z-older", "corp", t0)
	twinB := testBackend("twin-b", "partners", t0)
	twinA := testBackend("twin-a", "partners", t0)
	alone := testBackend("alone", "solo", t0.Add(2*time.Hour))

	holders, conflicts := domainHolders([]*v1alpha1.KeystoneIdentityBackend{newer, older, twinB, twinA, alone})
	if holders["corp"] != older || holders["partners"] != twinA || holders["solo"] != alone {
		t.Fatalf("holders = corp:%s partners:%s solo:%s", holders["corp"].Name, holders["partners"].Name, holders["solo"].Name)
	}
	if len(conflicts) != 2 || conflicts["solo"] != nil {
		t.Fatalf("conflicts = %v, want corp and partners", conflicts)
	}
	want := "KeystoneIdentityBackends z-older, a-newer name the domain corp; z-older, the oldest, keeps it; " +
		"KeystoneIdentityBackends twin-a, twin-b name the domain partners; twin-a, the oldest, keeps it"
	if got := conflictMessage(conflicts); got != want {
		t.Fatalf("conflictMessage = %q\nwant %q", got, want)
	}
	if _, c := domainHolders([]*v1alpha1.KeystoneIdentityBackend{alone}); c != nil {
		t.Fatalf("one backend: conflicts %v", c)
	}
}

func TestDomainReadyGate(t *testing.T) {
	b := testBackend("corp-ldap", "corp", time.Now())
	b.Generation = 2
	if domainReady(b) {
		t.Fatal("no condition passes the gate")
	}
	b.Status.Conditions = []metav1.Condition{{Type: ConditionDomainReady, Status: metav1.ConditionTrue, ObservedGeneration: 1}}
	if domainReady(b) {
		t.Fatal("a condition of an older generation passes the gate")
	}
	b.Status.Conditions[0].ObservedGeneration = 2
	if !domainReady(b) {
		t.Fatal("DomainReady True for this generation does not pass the gate")
	}
	b.Status.Conditions[0].Status = metav1.ConditionFalse
	if domainReady(b) {
		t.Fatal("DomainReady False passes the gate")
	}
}

func TestRolloutPending(t *testing.T) {
	done := appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2}
	for _, tc := range []struct {
		name   string
		mutate func(*appsv1.DeploymentStatus)
		want   string
	}{
		{"finished", func(*appsv1.DeploymentStatus) {}, ""},
		{"generation behind", func(s *appsv1.DeploymentStatus) { s.ObservedGeneration = 2 }, "has not observed generation 3 yet"},
		{"updating", func(s *appsv1.DeploymentStatus) { s.UpdatedReplicas = 1 }, "has updated 1 of 2 replicas"},
		{"not available", func(s *appsv1.DeploymentStatus) { s.AvailableReplicas = 1 }, "has 1 of 2 replicas available"},
		{"old pods remain", func(s *appsv1.DeploymentStatus) { s.Replicas = 3 }, "still runs 1 replicas of an older template"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: 3}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}}
			d.Status = done
			tc.mutate(&d.Status)
			if got := rolloutPending(d); got != tc.want {
				t.Fatalf("rolloutPending = %q, want %q", got, tc.want)
			}
		})
	}
	d := &appsv1.Deployment{} // replicas nil: one desired
	if got := rolloutPending(d); got != "has updated 0 of 1 replicas" {
		t.Fatalf("nil replicas: %q", got)
	}
}

func TestMapToKeystone(t *testing.T) {
	b := testBackend("corp-ldap", "corp", time.Now())
	reqs := MapToKeystone(t.Context(), b)
	if len(reqs) != 1 || reqs[0].Namespace != "ns" || reqs[0].Name != "keystone" {
		t.Fatalf("requests = %v", reqs)
	}
	if reqs := MapToKeystone(t.Context(), &v1alpha1.Keystone{}); reqs != nil {
		t.Fatalf("another kind mapped to %v", reqs)
	}
}
