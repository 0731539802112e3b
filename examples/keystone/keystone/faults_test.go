package keystone_test

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// Every API call a step makes can fail: a 500 injected into each call of each verb, in
// turn, comes back as the step's error (with no result beside it) and is never taken
// for a verdict.
func TestStepFaults(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, keystone.DefaultOptions())
	storeReady(t)
	mariaDBReady(t, ns)
	k := newKeystone(ns, "keystone")
	k.Spec.Policy = &v1alpha1.PolicySpec{ConfigMapRef: v1alpha1.ConfigMapKeyRef{Name: "overrides"}}
	k.Spec.Database.TLS = &v1alpha1.DatabaseTLSSpec{IssuerRef: v1alpha1.IssuerRef{Name: "ca"}}
	k.Spec.Autoscaling = &v1alpha1.AutoscalingSpec{MaxReplicas: 2}
	k.Spec.Gateway = gatewaySpec()
	k = createKeystone(t, k)
	if err := env.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "overrides", Namespace: ns},
		Data: map[string]string{"policy.yaml": `identity:get_user: "role:reader"`}}); err != nil {
		t.Fatal(err)
	}
	target := stepTarget(simulatedJobs{env.Client})
	// Bring every step to the state where it makes all of its calls.
	for _, step := range keystone.StepNames {
		_, _ = keystone.RunStep(ctx, rec, step, target, k, "")
		switch step {
		case "Secrets":
			syncAdminPassword(t, k, "fault-password")
		case "Config":
			_, _ = runConfig(t, rec, target, k, "")
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
	for _, step := range keystone.StepNames {
		if step == "HealthCheck" {
			continue // no API call
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
