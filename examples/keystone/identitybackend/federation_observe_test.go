package identitybackend_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// mountProjection points d's domains and federation volumes at domains and
// federation ("" leaves a volume out), as a new pod template of the Keystone's
// Deployment row.
func mountProjection(t *testing.T, d *appsv1.Deployment, domains, federation string) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	mountDomains(d, domains)
	if federation != "" {
		d.Spec.Template.Spec.Volumes = append(d.Spec.Template.Spec.Volumes, corev1.Volume{Name: identitybackend.FederationVolumeName,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: federation}}})
	}
	if err := env.Client.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// expectProjected waits until b's ConfigProjected has status and reason for its
// current generation with a message containing text, and returns the condition.
func expectProjected(t *testing.T, b *v1alpha1.KeystoneIdentityBackend, status metav1.ConditionStatus, reason, text string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true,
		func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
				return false, nil
			}
			c := meta.FindStatusCondition(b.Status.Conditions, condProjected)
			if c == nil || c.ObservedGeneration != b.Generation {
				return false, nil
			}
			got = *c
			return c.Status == status && c.Reason == reason && strings.Contains(c.Message, text), nil
		})
	if err != nil {
		t.Fatalf("%s: want ConfigProjected %s/%s with %q, have %+v", b.Name, status, reason, text, got)
	}
	noSecretIn(t, got.Message)
	noClientSecretIn(t, "ConfigProjected", got.Message)
	return got
}

// TestFederationProjectedAndReady: a federated backend's ConfigProjected waits for its
// identity providers as for its domain file: NotProjected while the Deployment mounts
// no federation Secret, WaitingForRollout once it does, Projected when the rollout
// finished; a new client secret is NotProjected naming the provider's older file until
// the Deployment mounts the Secret holding it, and a federation that no longer
// validates is never projected. No client secret reaches a condition, an event or a
// log.
func TestFederationProjectedAndReady(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	op := startOperator(t, ns)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	b := newFederatedBackend(t, k, "corp", "corp")
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)

	domains, err := op.runStep(t, k)
	if err != nil || domains == "" {
		t.Fatalf("step: %q, %v", domains, err)
	}
	federation := federationSecret(k)
	if federation == "" {
		t.Fatalf("no federation Secret: %s", keystoneCondition(k).Message)
	}
	// The domain file alone does not make the backend projected.
	d := newDeployment(t, k, domains)
	markAvailable(t, d)
	expectProjected(t, b, metav1.ConditionFalse, identitybackend.ReasonNotProjected, "mounts no federation Secret yet")

	mountProjection(t, d, domains, federation)
	expectProjected(t, b, metav1.ConditionFalse, identitybackend.ReasonWaitingForRollout, "its identity providers from Secret "+federation)
	markAvailable(t, d)
	expectProjected(t, b, metav1.ConditionTrue, identitybackend.ReasonProjected, federation)
	expectReason(t, b, reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady)

	// A new client secret: the mounted Secret holds the older web server fragment.
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "corp-client"}, s); err != nil {
		t.Fatal(err)
	}
	s.Data["secret"] = []byte(clientSecret + "-rotated")
	if err := env.Client.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	touch(t, b) // the client secret's change raises no event of the backend
	expectProjected(t, b, metav1.ConditionFalse, identitybackend.ReasonNotProjected, "holds an older httpd-openid-corp-oidc.conf of identity provider corp-oidc")
	if _, err := op.runStep(t, k); err != nil {
		t.Fatal(err)
	}
	rotated := federationSecret(k)
	if rotated == federation || rotated == "" {
		t.Fatalf("the new client secret named federation Secret %q (was %q)", rotated, federation)
	}
	mountProjection(t, d, domains, rotated)
	expectProjected(t, b, metav1.ConditionFalse, identitybackend.ReasonWaitingForRollout, "its identity providers from Secret "+rotated)
	markAvailable(t, d)
	expectProjected(t, b, metav1.ConditionTrue, identitybackend.ReasonProjected, "its identity providers from Secret "+rotated)

	// A federation that does not validate (written past the webhook: the CRD's schema
	// admits a remote id on two providers) is left out, so it is never projected.
	updateBackend(t, b, func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Spec.Federation.IdentityProviders[1].RemoteIDs = b.Spec.Federation.IdentityProviders[0].RemoteIDs
	})
	expectProjected(t, b, metav1.ConditionFalse, identitybackend.ReasonNotProjected, "spec.federation does not validate (spec.federation.identityProviders[1].remoteIDs[0])")

	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), b); err != nil {
		t.Fatal(err)
	}
	for _, c := range b.Status.Conditions {
		noClientSecretIn(t, b.Name+" "+c.Type, c.Message)
		noSecretIn(t, c.Message)
	}
	assertNoClientSecretInEvents(t, ns)
	if s := loggedSecret(clientSecret, adminPassword); s != "" {
		t.Fatalf("a secret reached the logs: %s", dumpLogsWith(s))
	}
}

// TestFederationObserveFaults fails, one at a time, each read of a federated backend's
// pass once its identity providers are projected, the reads of the providers'
// documents that ConfigProjected compares among them: every fault ends the pass with
// the error (or a requeue), no client secret in it, and the next pass is Projected
// again.
func TestFederationObserveFaults(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	op := startManager(t, ns, false)
	k := newKeystone(t, ns, "keystone", "http://keystone:5000")
	newAdminSecret(t, k, adminPassword)
	b := newFederatedBackend(t, k, "corp", "corp")

	inj := faults.NewInjector()
	opts := op.opts
	opts.Client = apply.NewApplier(inj.Client(env.Client), apply.ApplierOptions{FieldManager: fieldManager})
	rec, err := identitybackend.NewReconciler(op.resolver, opts)
	if err != nil {
		t.Fatal(err)
	}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(b)}
	pass := func() (ctrl.Result, error) { return rec.Reconcile(ctx, req) }
	projected := func() *metav1.Condition {
		if err := env.Client.Get(ctx, req.NamespacedName, b); err != nil {
			t.Fatal(err)
		}
		return meta.FindStatusCondition(b.Status.Conditions, condProjected)
	}
	if _, err := pass(); err != nil {
		t.Fatal(err)
	}
	expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
	domains, err := op.runStep(t, k)
	if err != nil {
		t.Fatal(err)
	}
	d := newDeployment(t, k, domains)
	mountProjection(t, d, domains, federationSecret(k))
	markAvailable(t, d)
	// The pass reads the Deployment from the operator's cache: pass until it sees it.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		if _, err := pass(); err != nil {
			return false, err
		}
		c := projected()
		return c != nil && c.Reason == identitybackend.ReasonProjected, nil
	})
	if err != nil {
		t.Fatalf("never Projected: %v (%+v)", err, projected())
	}

	inj.Disarm()
	if _, err := pass(); err != nil {
		t.Fatal(err)
	}
	gets := inj.Calls(faults.VerbGet)
	t.Logf("a projected pass makes %d Gets through the backend's client", gets)
	read := map[string]bool{}
	for n := 1; n <= gets; n++ {
		inj.Arm(faults.VerbGet, n, faults.Internal)
		res, err := pass()
		if !inj.Fired() {
			t.Fatalf("Get %d of %d never made", n, gets)
		}
		if !errors.Is(err, faults.ErrInjected) && (res.IsZero() || res.RequeueAfter >= identitybackend.DefaultResyncInterval) {
			t.Fatalf("Get %d: the pass returned %+v, %v: the fault neither surfaced nor requeued", n, res, err)
		}
		if err != nil {
			noClientSecretIn(t, "the error", err.Error())
			noSecretIn(t, err.Error())
			for _, what := range []string{"client secret", "IdP metadata", "service provider key pair"} {
				if strings.Contains(err.Error(), "reading the "+what+" of identity provider") {
					read[what] = true
				}
			}
		}
		if c := projected(); c != nil {
			noClientSecretIn(t, "ConfigProjected", c.Message)
		}
		inj.Disarm()
		if _, err := pass(); err != nil {
			t.Fatalf("after Get %d: the pass does not recover: %v", n, err)
		}
		if c := projected(); c == nil || c.Reason != identitybackend.ReasonProjected {
			t.Fatalf("after Get %d: ConfigProjected %+v", n, c)
		}
	}
	if len(read) != 3 {
		t.Fatalf("the faults met the reads of %v, want the client secret, the IdP metadata and the key pair", read)
	}
}
