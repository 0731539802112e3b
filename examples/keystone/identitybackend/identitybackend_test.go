package identitybackend_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

const (
	condDomain    = identitybackend.ConditionDomainReady
	condProjected = identitybackend.ConditionConfigProjected
)

// TestDomainCreatedProjectedAndReady walks one backend through the handshake: the
// domain is created, the row projects the file, the Deployment mounts it
// (WaitingForRollout until the rollout finishes), and Ready follows.
func TestDomainCreatedProjectedAndReady(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone."+ns+".svc:5000")
	newAdminSecret(t, k, adminPassword)
	newSecret(t, ns, "corp-bind", "password", bindPassword)
	b := newBackend(t, k, "corp-ldap", "corp", "corp-bind")

	c := expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	d, ok := op.keystone.Domain("corp")
	if !ok || b.Status.DomainID != d.ID || d.Description != "users of corp" || !d.Enabled {
		t.Fatalf("stand-in domain %+v, status.domainID %q", d, b.Status.DomainID)
	}
	if !strings.Contains(c.Message, d.ID) {
		t.Fatalf("DomainReady message %q does not name the ID", c.Message)
	}
	expectReason(t, b, condProjected, metav1.ConditionFalse, identitybackend.ReasonNotProjected)
	expectReason(t, b, reconcile.ConditionReady, metav1.ConditionFalse, identitybackend.ReasonNotProjected)

	secret, err := op.runStep(t, k)
	if err != nil || secret == "" {
		t.Fatalf("step: %q, %v", secret, err)
	}
	dep := newDeployment(t, k, secret)
	expectReason(t, b, condProjected, metav1.ConditionFalse, identitybackend.ReasonWaitingForRollout)
	markAvailable(t, dep)
	expectReason(t, b, condProjected, metav1.ConditionTrue, identitybackend.ReasonProjected)
	expectReason(t, b, reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady)

	// A later pass finds the domain again: still DomainCreated, no second create.
	creates := op.keystone.Calls("POST /v3/domains")
	touch(t, b)
	waitCalls(t, op, "GET /v3/domains", op.keystone.Calls("GET /v3/domains")+1)
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	if n := op.keystone.Calls("POST /v3/domains"); n != creates {
		t.Fatalf("domain created %d times, want %d", n, creates)
	}

	// A new configuration is not projected until the Secret the pods mount holds it.
	patchBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) { b.Spec.Config["ldap"]["url"] = "ldaps://ldap2.corp" })
	c = expectReason(t, b, condProjected, metav1.ConditionFalse, identitybackend.ReasonNotProjected)
	if !strings.Contains(c.Message, "holds an older keystone.corp.conf") {
		t.Fatalf("ConfigProjected message %q", c.Message)
	}
	secret2, err := op.runStep(t, k)
	if err != nil || secret2 == secret {
		t.Fatalf("step after the change: %q (was %q), %v", secret2, secret, err)
	}
	remount(t, dep, secret2)
	expectReason(t, b, condProjected, metav1.ConditionFalse, identitybackend.ReasonWaitingForRollout)
	markAvailable(t, dep)
	expectReason(t, b, reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady)

	if s := loggedSecret(adminPassword, bindPassword); s != "" {
		t.Fatalf("a password reached the logs: %s", dumpLogsWith(s))
	}
}

// TestDomainAdopted: a domain of that name exists; it is used as it is.
func TestDomainAdopted(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	existing := op.keystone.AddDomain("partners", "made by hand", false)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	b := newBackend(t, k, "partners", "partners", "")

	c := expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainAdopted)
	if b.Status.DomainID != existing.ID || !strings.Contains(c.Message, "disabled") {
		t.Fatalf("status.domainID %q (want %q), message %q", b.Status.DomainID, existing.ID, c.Message)
	}
	if n := op.keystone.Calls("POST /v3/domains"); n != 0 {
		t.Fatalf("%d creates for an existing domain", n)
	}
	if d, _ := op.keystone.Domain("partners"); d != existing {
		t.Fatalf("the adopted domain changed: %+v", d)
	}
}

// TestKeystoneUnreachable: no answer is KeystoneUnreachable until Keystone answers;
// once the domain is ready, an outage leaves DomainReady True.
func TestKeystoneUnreachable(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	op.keystone.SetUnavailable(true)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	b := newBackend(t, k, "corp-ldap", "corp", "")

	c := expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonKeystoneUnreachable)
	if !strings.Contains(c.Message, "503") {
		t.Fatalf("message %q does not say what Keystone answered", c.Message)
	}
	op.keystone.SetUnavailable(false)
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)

	op.keystone.SetUnavailable(true)
	waitCalls(t, op, "POST /v3/auth/tokens", op.keystone.Calls("POST /v3/auth/tokens")+2) // two passes met the outage
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	// The pass writes its line after Keystone's answer, which may be after the call was
	// counted: wait for it.
	var logged string
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 20*time.Second, true,
		func(context.Context) (bool, error) {
			logged = dumpLogsWith("the domain stays ready")
			return strings.Contains(logged, "503"), nil
		}); err != nil {
		t.Fatalf("the outage was not logged with Keystone's answer: %q", logged)
	}
	if s := loggedSecret(adminPassword); s != "" {
		t.Fatalf("a password reached the logs: %s", dumpLogsWith(s))
	}
}

// TestWaitingForKeystone: no Keystone, then a Keystone without endpoint.
func TestWaitingForKeystone(t *testing.T) {
	ns := env.Namespace(t)
	startOperator(t, ns)
	k := &v1alpha1.Keystone{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "keystone"}}
	b := newBackend(t, k, "corp-ldap", "corp", "")
	c := expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonWaitingForKeystone)
	if !strings.Contains(c.Message, "does not exist") {
		t.Fatalf("message %q", c.Message)
	}
	k = newKeystone(t, ns, "keystone", "")
	newAdminSecret(t, k, adminPassword)
	waitMessage(t, b, condDomain, "has no endpoint yet")
	expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonWaitingForKeystone)
	setEndpoint(t, k, "http://keystone:5000") // the Keystone watch wakes the backend
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
}

// TestAdminPasswordMissingThenRejected: no admin password Secret, then a password
// Keystone refuses, then the right one.
func TestAdminPasswordMissingThenRejected(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	b := newBackend(t, k, "corp-ldap", "corp", "")
	expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonAdminPasswordMissing)

	s := newAdminSecret(t, k, "not-the-"+adminPassword)
	c := expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonAdminCredentialsRejected)
	if strings.Contains(c.Message, "not-the-") {
		t.Fatalf("message %q quotes the refused password", c.Message)
	}
	s.Data["password"] = []byte(adminPassword)
	if err := env.Client.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	if _, ok := op.keystone.Domain("corp"); !ok {
		t.Fatal("domain not created")
	}
}

// TestDomainCreateFailed: Keystone refuses the create.
func TestDomainCreateFailed(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	op.keystone.SetCreateStatus(http.StatusForbidden)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	b := newBackend(t, k, "corp-ldap", "corp", "")
	c := expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonDomainCreateFailed)
	if !strings.Contains(c.Message, "403") {
		t.Fatalf("message %q", c.Message)
	}
	op.keystone.SetCreateStatus(0)
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
}

// TestBindPasswordAndConfigRefusals: the gate also needs the bind password and a
// configuration that renders.
func TestBindPasswordAndConfigRefusals(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)

	b := newBackend(t, k, "corp-ldap", "corp", "corp-bind")
	c := expectReason(t, b, condDomain, metav1.ConditionFalse, identitybackend.ReasonBindPasswordMissing)
	if !strings.Contains(c.Message, "corp-bind") {
		t.Fatalf("message %q does not name the Secret", c.Message)
	}
	newSecret(t, ns, "corp-bind", "password", bindPassword)
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)

	inline := &v1alpha1.KeystoneIdentityBackend{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "inline"},
		Spec: v1alpha1.KeystoneIdentityBackendSpec{KeystoneRef: v1alpha1.LocalObjectReference{Name: k.Name}, Domain: "inline",
			Config: map[string]map[string]string{"ldap": {"url": "ldap://x", "password": bindPassword}}}}
	if err := env.Client.Create(context.Background(), inline); err != nil {
		t.Fatal(err)
	}
	c = expectReason(t, inline, condDomain, metav1.ConditionFalse, identitybackend.ReasonInvalidConfig)
	if !strings.Contains(c.Message, "passwordSecretRef") {
		t.Fatalf("message %q", c.Message)
	}
	if _, ok := op.keystone.Domain("inline"); ok {
		t.Fatal("a domain was created for a backend whose configuration does not render")
	}
}

// TestDeletionLeavesTheDomain: a backend carries no finalizer; deleting it leaves its
// domain in Keystone (its projects, users' role assignments and IDs stay, and a
// recreated backend adopts it), and the row drops its file.
func TestDeletionLeavesTheDomain(t *testing.T) {
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	b := newBackend(t, k, "corp-ldap", "corp", "")
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	if secret, err := op.runStep(t, k); err != nil || secret == "" {
		t.Fatalf("step: %q, %v", secret, err)
	}
	if len(b.Finalizers) != 0 {
		t.Fatalf("finalizers %v", b.Finalizers)
	}
	op.deleteSeen(t, b)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), b); !apierrors.IsNotFound(err) {
		t.Fatalf("backend still there after delete: %v", err)
	}
	if _, ok := op.keystone.Domain("corp"); !ok {
		t.Fatal("the domain was deleted from Keystone")
	}
	secret, err := op.runStep(t, k)
	if err != nil || secret != "" {
		t.Fatalf("step after the delete: %q, %v", secret, err)
	}
	expectKeystoneReason(t, k, metav1.ConditionTrue, identitybackend.ReasonNoIdentityBackends)

	again := newBackend(t, k, "corp-ldap-2", "corp", "")
	expectReason(t, again, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainAdopted)
}

// touch changes an annotation of b, which wakes its controller.
func touch(t *testing.T, b *v1alpha1.KeystoneIdentityBackend) {
	t.Helper()
	patch := client.MergeFrom(b.DeepCopy())
	b.Annotations = map[string]string{"test/touched": time.Now().Format(time.RFC3339Nano)}
	if err := env.Client.Patch(context.Background(), b, patch); err != nil {
		t.Fatal(err)
	}
}

// patchBackend applies change to the stored backend b.
func patchBackend(t *testing.T, b *v1alpha1.KeystoneIdentityBackend, change func(*v1alpha1.KeystoneIdentityBackend)) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), b); err != nil {
		t.Fatal(err)
	}
	change(b)
	if err := env.Client.Update(context.Background(), b); err != nil {
		t.Fatal(err)
	}
}

// waitCalls waits until the stand-in has served call at least n times.
func waitCalls(t *testing.T, op *operator, call string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for op.keystone.Calls(call) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s served %d times, want %d", call, op.keystone.Calls(call), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// expectKeystoneReason checks the IdentityBackendsReady the last runStep left on k.
func expectKeystoneReason(t *testing.T, k *v1alpha1.Keystone, status metav1.ConditionStatus, reason string) {
	t.Helper()
	for _, c := range k.Status.Conditions {
		if c.Type == identitybackend.ConditionIdentityBackendsReady {
			if c.Status != status || c.Reason != reason {
				t.Fatalf("IdentityBackendsReady = %s/%s (%s), want %s/%s", c.Status, c.Reason, c.Message, status, reason)
			}
			return
		}
	}
	t.Fatal("no IdentityBackendsReady")
}

// waitMessage waits until b's condType message contains want.
func waitMessage(t *testing.T, b *v1alpha1.KeystoneIdentityBackend, condType, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(b), b); err == nil {
			for _, c := range b.Status.Conditions {
				if c.Type == condType && strings.Contains(c.Message, want) {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never said %q: %s", condType, want, testenv.DescribeConditions(b.Generation, b.Status.Conditions))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
