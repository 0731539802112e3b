package job_test

import (
	"context"
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// TestRunJobOnATargetCluster: through an Applier for a target cluster RunJob claims the
// Job with labels, sets no owner reference, sees the run through to completion, and
// refuses a Job claimed by another management cluster or claimed by nobody, adoption
// annotation or not, without a write.
func TestRunJobOnATargetCluster(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "identity")
	a := testenv.TargetApplier(env.Client, "identity-operator", "mgmt-a")

	first := desiredJob(ns, "registry.example/identity:1")
	if done, err := job.RunJob(ctx, a, env.Scheme, owner, first); err != nil || done {
		t.Fatalf("create: done=%v err=%v, want (false, nil)", done, err)
	}
	stored := getJob(t, client.ObjectKeyFromObject(first))
	if len(stored.OwnerReferences) != 0 {
		t.Errorf("Job on a target cluster has owner references %v, want none", stored.OwnerReferences)
	}
	claim, ok := apply.ClaimOf(stored)
	if !ok || claim.ManagementCluster != "mgmt-a" || claim.Name != "identity" || claim.Namespace != ns || claim.GroupKind.Kind != "ConfigMap" {
		t.Fatalf("ClaimOf(Job) = %+v, %v; want the owner's claim for mgmt-a", claim, ok)
	}
	eventually(t, "the claimed Job to complete", func(ctx context.Context) (bool, string, error) {
		j := desiredJob(ns, "registry.example/identity:1")
		done, err := job.RunJob(ctx, a, env.Scheme, owner, j)
		return done, fmt.Sprintf("status %+v", j.Status), err
	})
	if now := getJob(t, client.ObjectKeyFromObject(first)); now.UID != stored.UID {
		t.Fatalf("the Job was re-created: UID %s -> %s", stored.UID, now.UID)
	}

	t.Run("another management cluster", func(t *testing.T) {
		before := getJob(t, client.ObjectKeyFromObject(first))
		err := callCounting(t, jobHelper{call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
			_, err := job.RunJob(ctx, testenv.TargetApplier(c, "identity-operator", "mgmt-b"), env.Scheme, owner, desiredJob(ns, "registry.example/identity:2"))
			return err
		}}, owner, ns)
		wantNotControlled(t, err, `claimed by ConfigMap/`+ns+`/identity of management cluster "mgmt-a"`)
		wantUntouched(t, before)
		if now := getJob(t, client.ObjectKeyFromObject(first)); now.ResourceVersion != before.ResourceVersion {
			t.Errorf("the other management cluster's Job was written: rv %s -> %s", before.ResourceVersion, now.ResourceVersion)
		}
	})

	t.Run("unclaimed, with the adopt annotation", func(t *testing.T) {
		ns := env.Namespace(t)
		owner := newOwner(t, ns, "identity")
		theirs := simulated(desiredJob(ns, "registry.example/identity:0"))
		theirs.Annotations = map[string]string{apply.AdoptAnnotation: "true"}
		before := createExisting(t, theirs, nil)
		err := callCounting(t, jobHelper{call: func(ctx context.Context, c client.Client, owner client.Object, ns string) error {
			_, err := job.RunJob(ctx, testenv.TargetApplier(c, "identity-operator", "mgmt-a"), env.Scheme, owner, simulated(desiredJob(ns, "registry.example/identity:1")))
			return err
		}}, owner, ns)
		wantNotControlled(t, err, "the Job exists and is not claimed by any owner", "cannot be adopted")
		wantUntouched(t, before)
		if _, ok := apply.ClaimOf(getJob(t, client.ObjectKeyFromObject(before))); ok {
			t.Error("a Job was claimed although RunJob adopts none")
		}
	})
}
