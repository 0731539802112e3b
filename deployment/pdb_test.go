package deployment_test

import (
	"context"
	"errors"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/deployment"
)

func desiredPDB(ns string, minAvailable int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: new(intstr.FromInt32(minAvailable)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
}

func TestEnsurePodDisruptionBudget(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")

	first := desiredPDB(ns, 1)
	if err := deployment.EnsurePodDisruptionBudget(ctx, env.Client, env.Scheme, owner, first); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(first); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	if err := deployment.EnsurePodDisruptionBudget(ctx, c, env.Scheme, owner, desiredPDB(ns, 1)); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	again := desiredPDB(ns, 1)
	if err := deployment.EnsurePodDisruptionBudget(ctx, c, env.Scheme, owner, again); err != nil {
		t.Fatal(err)
	}
	// The disruption controller does not run on envtest, so nothing else writes it.
	// One GET (apply.EnsureObject's control check) and one no-op apply.
	if again.ResourceVersion != first.ResourceVersion || counter.Total() != 2 || counter.Method("GET") != 1 || counter.Writes() != 1 {
		t.Errorf("converged: rv %s -> %s, %d requests (GET %d, writes %d); want unchanged rv, one GET and one apply",
			first.ResourceVersion, again.ResourceVersion, counter.Total(), counter.Method("GET"), counter.Writes())
	}

	changed := desiredPDB(ns, 2)
	if err := deployment.EnsurePodDisruptionBudget(ctx, env.Client, env.Scheme, owner, changed); err != nil {
		t.Fatal(err)
	}
	stored := &policyv1.PodDisruptionBudget{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(changed), stored); err != nil {
		t.Fatal(err)
	}
	if stored.Spec.MinAvailable.IntVal != 2 || stored.Generation == first.Generation {
		t.Errorf("stored minAvailable = %v at generation %d (was %d), want 2 at a new generation",
			stored.Spec.MinAvailable, stored.Generation, first.Generation)
	}

	if err := deployment.EnsurePodDisruptionBudget(ctx, env.Client, env.Scheme, owner, nil); !errors.Is(err, apply.ErrNilObject) {
		t.Errorf("nil PDB: err = %v, want ErrNilObject", err)
	}
}
