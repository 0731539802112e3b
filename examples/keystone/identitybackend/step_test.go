package identitybackend_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
)

// TestStepProjectsTwoBackendsIntoOneSecret: two gated backends, one file each, in one
// content-addressed Secret the Keystone controls; the bind password is written as a
// literal; a backend that has not passed its gate is named, not projected.
func TestStepProjectsTwoBackendsIntoOneSecret(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)

	secret, err := op.runStep(t, k)
	if err != nil || secret != "" {
		t.Fatalf("step without backends: %q, %v", secret, err)
	}
	expectKeystoneReason(t, k, metav1.ConditionTrue, identitybackend.ReasonNoIdentityBackends)

	newSecret(t, ns, "corp-bind", "password", bindPassword)
	corp := newBackend(t, k, "corp-ldap", "corp", "corp-bind")
	partners := newBackend(t, k, "partners", "partners", "")
	waiting := newBackend(t, k, "waiting", "waiting", "missing-bind")
	other := newBackend(t, &v1alpha1.Keystone{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"}}, "other", "other", "")
	expectReason(t, corp, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	expectReason(t, partners, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	expectReason(t, waiting, condDomain, metav1.ConditionFalse, identitybackend.ReasonBindPasswordMissing)
	expectReason(t, other, condDomain, metav1.ConditionFalse, identitybackend.ReasonWaitingForKeystone)

	secret, err = op.runStep(t, k)
	if err != nil || !strings.HasPrefix(secret, "keystone-domains-") {
		t.Fatalf("step: %q, %v", secret, err)
	}
	expectKeystoneReason(t, k, metav1.ConditionTrue, identitybackend.ReasonIdentityBackendsProjected)
	msg := keystoneCondition(k).Message
	if !strings.Contains(msg, "domains corp, partners projected") || !strings.Contains(msg, "waiting for DomainReady: waiting") {
		t.Fatalf("message %q", msg)
	}
	data := secretData(t, ns, secret)
	if len(data) != 2 {
		t.Fatalf("domains Secret holds %s, want keystone.corp.conf and keystone.partners.conf", keys(data))
	}
	wantCorp := "# Rendered by the keystone operator for the domain corp; do not edit.\n" +
		"[identity]\ndriver = ldap\n\n[ldap]\npassword = B1nd-$$ecret\nsuffix = dc=corp\n" +
		"url = ldaps://ldap.corp.example\nuser = cn=keystone,dc=corp\n"
	if got := string(data["keystone.corp.conf"]); got != wantCorp {
		t.Fatalf("keystone.corp.conf =\n%s\nwant\n%s", got, wantCorp)
	}
	if got := string(data["keystone.partners.conf"]); strings.Contains(got, "password") || !strings.Contains(got, "driver = ldap") {
		t.Fatalf("keystone.partners.conf (anonymous bind) =\n%s", got)
	}
	var s corev1.Secret
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: secret}, &s); err != nil {
		t.Fatal(err)
	}
	if s.Immutable == nil || !*s.Immutable || !metav1.IsControlledBy(&s, k) {
		t.Fatalf("domains Secret: immutable %v, owners %v", s.Immutable, s.OwnerReferences)
	}

	// The same backends project into the same Secret: nothing new is written.
	again, err := op.runStep(t, k)
	if err != nil || again != secret {
		t.Fatalf("second step: %q (want %q), %v", again, secret, err)
	}
	if s := loggedSecret(adminPassword, bindPassword); s != "" {
		t.Fatalf("a password reached the logs: %s", dumpLogsWith(s))
	}
}

// TestStepConflict: a second backend naming a domain another already holds sets
// IdentityBackendConflict naming both; the older keeps the domain in the Secret, the
// newcomer reports DomainConflict on ConfigProjected instead of claiming the older's
// file.
func TestStepConflict(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	first := newBackend(t, k, "zz-first", "corp", "")
	expectReason(t, first, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	time.Sleep(1100 * time.Millisecond) // creation timestamps have a resolution of a second
	second := newBackend(t, k, "aa-second", "corp", "")
	expectReason(t, second, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainAdopted)

	secret, err := op.runStep(t, k)
	if err != nil || secret == "" {
		t.Fatalf("step: %q, %v", secret, err)
	}
	expectKeystoneReason(t, k, metav1.ConditionFalse, identitybackend.ReasonIdentityBackendConflict)
	msg := keystoneCondition(k).Message
	if !strings.Contains(msg, "KeystoneIdentityBackends zz-first, aa-second name the domain corp; zz-first, the oldest, keeps it") {
		t.Fatalf("message %q", msg)
	}
	if data := secretData(t, ns, secret); len(data) != 1 || data["keystone.corp.conf"] == nil {
		t.Fatalf("domains Secret holds %s", keys(data))
	}
	dep := newDeployment(t, k, secret)
	markAvailable(t, dep)
	expectReason(t, first, condProjected, metav1.ConditionTrue, identitybackend.ReasonProjected)
	c := expectReason(t, second, condProjected, metav1.ConditionFalse, identitybackend.ReasonDomainConflict)
	if !strings.Contains(c.Message, "zz-first") {
		t.Fatalf("message %q", c.Message)
	}

	// Deleting the holder hands the domain to the other backend.
	op.deleteSeen(t, first)
	secret2, err := op.runStep(t, k)
	if err != nil || secret2 != secret { // same domain, same content
		t.Fatalf("step after the delete: %q (want %q), %v", secret2, secret, err)
	}
	expectKeystoneReason(t, k, metav1.ConditionTrue, identitybackend.ReasonIdentityBackendsProjected)
	expectReason(t, second, condProjected, metav1.ConditionTrue, identitybackend.ReasonProjected)
}

// TestStepLeavesOutWhatCannotRender: a gated backend whose bind password Secret went
// away since its gate passed is left out and named; the others are projected.
func TestStepLeavesOutWhatCannotRender(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	bind := newSecret(t, ns, "corp-bind", "password", bindPassword)
	corp := newBackend(t, k, "corp-ldap", "corp", "corp-bind")
	partners := newBackend(t, k, "partners", "partners", "")
	expectReason(t, corp, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	expectReason(t, partners, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	op.deleteSeen(t, bind)
	secret, err := op.runStep(t, k)
	if err != nil {
		t.Fatal(err)
	}
	msg := keystoneCondition(k).Message
	if !strings.Contains(msg, "left out: corp-ldap (bind password Secret "+ns+"/corp-bind does not exist)") {
		t.Fatalf("message %q", msg)
	}
	if data := secretData(t, ns, secret); len(data) != 1 || data["keystone.partners.conf"] == nil {
		t.Fatalf("domains Secret holds %s", keys(data))
	}
}

// TestStepPrunesOlderSecrets: older domains Secrets beyond RetainDomainsSecrets go,
// unless a workload mounts them; a Secret the Keystone does not control stays.
func TestStepPrunesOlderSecrets(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	b := newBackend(t, k, "corp-ldap", "corp", "")
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)

	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone-domains-foreign",
		Labels: map[string]string{config.ConfigBaseLabel: names.DomainsBaseName(k), apply.ManagedByLabel: fieldManager}}}
	if err := env.Client.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	var made []string
	for i := range identitybackend.RetainDomainsSecrets + 3 {
		patchBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
			b.Spec.Config["ldap"]["url"] = "ldaps://ldap" + string(rune('a'+i)) + ".corp"
		})
		expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
		secret, err := op.runStep(t, k)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			newDeployment(t, k, secret) // the pods keep mounting the first one
		}
		made = append(made, secret)
		time.Sleep(1100 * time.Millisecond) // distinct creation timestamps
	}
	var list corev1.SecretList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns),
		client.MatchingLabels{config.ConfigBaseLabel: names.DomainsBaseName(k)}); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range list.Items {
		if s.DeletionTimestamp == nil {
			have[s.Name] = true
		}
	}
	last := len(made) - 1
	want := append([]string{"keystone-domains-foreign", made[0]}, made[last-identitybackend.RetainDomainsSecrets:]...)
	for _, n := range want {
		if !have[n] {
			t.Errorf("Secret %s was pruned", n)
		}
	}
	if len(have) != len(want) {
		t.Errorf("Secrets left %v, want %v", have, want)
	}
}

func keystoneCondition(k *v1alpha1.Keystone) metav1.Condition {
	for _, c := range k.Status.Conditions {
		if c.Type == identitybackend.ConditionIdentityBackendsReady {
			return c
		}
	}
	return metav1.Condition{}
}
