package keystone_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/google/go-cmp/cmp"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// everyStepWorld creates a Keystone with every optional part (policy overrides,
// database TLS, autoscaling, a gateway) and its dependencies, then runs each named step
// of rec's pipeline in table order on target, playing what the step waits for, so that
// each step reaches the state where it makes all of its calls. It returns the Keystone
// and the steps' names.
func everyStepWorld(ctx context.Context, t *testing.T, rec *keystone.Reconciler, target *multicluster.Target) (*v1alpha1.Keystone, []string) {
	t.Helper()
	ns := env.Namespace(t)
	storeReady(t)
	mariaDBReady(t, ns)
	k := newKeystone(ns, "keystone")
	k.Spec.Policy = &v1alpha1.PolicySpec{ConfigMapRef: v1alpha1.ConfigMapKeyRef{Name: "overrides"}}
	k.Spec.Database.TLS = &v1alpha1.DatabaseTLSSpec{IssuerRef: v1alpha1.IssuerRef{Name: "ca"}}
	k.Spec.Autoscaling = &commonv1.AutoscalingSpec{MaxReplicas: 2}
	k.Spec.Gateway = gatewaySpec()
	k = createKeystone(t, k)
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "overrides", Namespace: ns},
		Data: map[string]string{"policy.yaml": `identity:get_user: "role:reader"`}}); err != nil {
		t.Fatal(err)
	}
	steps := keystone.StepNames(rec)
	for _, step := range steps {
		_, _ = keystone.RunStep(ctx, rec, step, target, k, "")
		switch step {
		case "Secrets":
			syncAdminPassword(t, k, "fault-password")
		case "Config": // ESO finds no backup of the database password: a first install
			need(t)(simulate.MarkExternalSecretEmpty(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: keystone.PasswordRestoreName(k)}))
			_, _ = keystone.RunStep(ctx, rec, step, target, k, "")
		case "FernetKeys", "CredentialKeys":
			for _, ks := range []*keystone.KeyRepositoryStep{keystone.NewFernetKeysStep(keystone.KeyStepOptions{}),
				keystone.NewCredentialKeysStep(keystone.KeyStepOptions{})} {
				if ks.Condition() == step+"Ready" {
					need(t)(simulate.MarkExternalSecretEmpty(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: ks.RestoreName(k)}))
				}
			}
			_, _ = keystone.RunStep(ctx, rec, step, target, k, "")
		case "DatabaseTLS":
			need(t)(simulate.MarkCertificateReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: keystone.DatabaseCertificateName(k)}))
		case "Database":
			key := client.ObjectKey{Namespace: ns, Name: k.Name}
			for range 5 {
				_, _ = simulate.MarkDatabaseReady(ctx, env.Client, key)
				_, _ = simulate.MarkUserReady(ctx, env.Client, key)
				_, _ = simulate.MarkGrantReady(ctx, env.Client, key)
				_, _ = keystone.RunStep(ctx, rec, step, target, k, "")
			}
		}
	}
	return k, steps
}

// Every API call a step makes can fail: a 500 injected into each call of each verb, in
// turn, comes back as the step's error (with no result beside it) and is never taken
// for a verdict.
func TestStepFaults(t *testing.T) {
	ctx := context.Background()
	rec := newStepReconciler(t, defaultOptions())
	k, steps := everyStepWorld(ctx, t, rec, stepTarget(simulatedJobs{env.Client}))
	for _, step := range steps {
		switch step {
		case "HealthCheck":
			continue // no API call
		case "IdentityBackends":
			continue // reads through the management cluster's client (its faults: package identitybackend)
		}
		inj := faults.NewInjector()
		if _, err := keystone.RunStep(ctx, rec, step, stepTarget(simulatedJobs{inj.Client(env.Client)}), k.DeepCopy(), ""); err != nil {
			t.Fatalf("%s, no fault: %v", step, err)
		}
		fired := 0
		for _, verb := range faults.Verbs() {
			for nth := 1; nth <= inj.Calls(verb); nth++ {
				f := faults.NewInjector()
				f.Arm(verb, nth, faults.Internal)
				res, err := keystone.RunStep(ctx, rec, step, stepTarget(simulatedJobs{f.Client(env.Client)}), k.DeepCopy(), "")
				if !f.Fired() {
					continue // an earlier verdict ended the step before the call
				}
				fired++
				if !errors.Is(err, faults.ErrInjected) || !res.IsZero() {
					t.Errorf("%s, %s #%d failing: result %+v, err %v; want the injected error alone", step, verb, nth, res, err)
				}
			}
		}
		if fired == 0 {
			t.Errorf("%s: no call failed", step)
		}
		t.Logf("%s: %d calls failed in turn", step, fired)
	}
}

// The kinds the steps declare (Step.Owns, which the watches, the target-cluster sweep
// and Reconciler.Children derive from) are exactly the kinds they write: a step that
// writes a kind it does not declare would go unwatched and unswept.
func TestChildrenAreWhatTheStepsWrite(t *testing.T) {
	ctx, writes := apply.WithWrites(context.Background())
	rec := newStepReconciler(t, defaultOptions())
	everyStepWorld(ctx, t, rec, stepTarget(simulatedJobs{env.Client}))
	written := map[string]bool{}
	for _, w := range writes.All() {
		written[w.GVK.Kind] = true
	}
	declared := map[string]bool{}
	for _, l := range rec.Children() {
		gvk, err := apiutil.GVKForObject(l, env.Scheme)
		if err != nil {
			t.Fatal(err)
		}
		declared[strings.TrimSuffix(gvk.Kind, "List")] = true
	}
	if diff := cmp.Diff(declared, written); diff != "" {
		t.Errorf("kinds declared by the steps (-) and written by them (+):\n%s", diff)
	}
}
