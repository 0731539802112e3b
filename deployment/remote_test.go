package deployment_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// TestEnsureDeploymentOnATargetCluster: through an Applier for a target cluster the
// Deployment is claimed, not owner-referenced, becomes ready, and is re-created for a
// selector change because it is the owner's claim; another management cluster's calls
// for an owner of the same name, with the same or another selector, are refused and
// neither write nor delete it.
func TestEnsureDeploymentOnATargetCluster(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	a := testenv.TargetApplier(env.Client, "dashboard-operator", "mgmt-a")

	first := desiredDeployment(ns, "web", new(int32(1)))
	if _, err := deployment.EnsureDeployment(ctx, a, env.Scheme, owner, first); err != nil {
		t.Fatal(err)
	}
	if len(first.OwnerReferences) != 0 {
		t.Errorf("Deployment on a target cluster has owner references %v, want none", first.OwnerReferences)
	}
	claim, ok := apply.ClaimOf(first)
	if !ok || claim.ManagementCluster != "mgmt-a" || claim.Name != "dashboard" || claim.Namespace != ns {
		t.Fatalf("ClaimOf(Deployment) = %+v, %v; want the owner's claim for mgmt-a", claim, ok)
	}
	eventually(t, "the claimed Deployment to become ready", func(ctx context.Context) (bool, string, error) {
		d := desiredDeployment(ns, "web", new(int32(1)))
		ready, err := deployment.EnsureDeployment(ctx, a, env.Scheme, owner, d)
		return ready, fmt.Sprintf("status %+v", d.Status), err
	})

	for name, app := range map[string]string{"same selector": "web", "selector change": "web-b"} {
		t.Run("another management cluster, "+name, func(t *testing.T) {
			before := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(first), before); err != nil {
				t.Fatal(err)
			}
			_, err := deployment.EnsureDeployment(ctx, testenv.TargetApplier(env.Client, "dashboard-operator", "mgmt-b"), env.Scheme, owner,
				desiredDeployment(ns, app, new(int32(1))))
			wantRefused(t, err, apply.ErrNotControlled, `claimed by ConfigMap/`+ns+`/dashboard of management cluster "mgmt-a"`)
			now := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(first), now); err != nil {
				t.Fatalf("mgmt-a's Deployment: %v", err)
			}
			if now.UID != before.UID || now.Generation != before.Generation || now.DeletionTimestamp != nil {
				t.Errorf("mgmt-a's Deployment was touched: UID %s -> %s, generation %d -> %d, deletion %v",
					before.UID, now.UID, before.Generation, now.Generation, now.DeletionTimestamp)
			}
		})
	}

	t.Run("selector change of the owner's own", func(t *testing.T) {
		eventually(t, "the Deployment to be re-created with the new selector", func(ctx context.Context) (bool, string, error) {
			d := desiredDeployment(ns, "web-v2", new(int32(1)))
			if _, err := deployment.EnsureDeployment(ctx, a, env.Scheme, owner, d); err != nil {
				return false, "", err
			}
			return d.UID != "" && d.UID != first.UID && d.Spec.Selector.MatchLabels["app"] == "web-v2",
				fmt.Sprintf("uid %s selector %v", d.UID, d.Spec.Selector), nil
		})
		now := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(first), now); err != nil {
			t.Fatal(err)
		}
		if !apply.IsControlled(a, owner, now) || len(now.OwnerReferences) != 0 {
			t.Errorf("re-created Deployment: claim %v, owner references %v", now.Labels, now.OwnerReferences)
		}
	})
}

// TestVPAFlowOnATargetCluster: the VPA flow through an Applier for a target
// cluster claims the wanted VPAs and prunes only VPAs claimed for the owner on this
// management cluster.
func TestVPAFlowOnATargetCluster(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	ours, theirs := testenv.TargetApplier(env.Client, "dashboard-operator", "mgmt-a"), testenv.TargetApplier(env.Client, "dashboard-operator", "mgmt-b")

	if _, err := vpaFlow(ctx, ours, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web"), desiredVPA(ns, "worker")}); err != nil {
		t.Fatal(err)
	}
	if _, err := vpaFlow(ctx, theirs, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "mgmt-b")}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, desiredVPA(ns, "unclaimed")); err != nil {
		t.Fatal(err)
	}
	web := &vpav1.VerticalPodAutoscaler{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	if !apply.IsControlled(ours, owner, web) || len(web.OwnerReferences) != 0 {
		t.Errorf("VPA web: claim labels %v, owner references %v; want the claim only", web.Labels, web.OwnerReferences)
	}

	cond, err := vpaFlow(ctx, ours, env.Scheme, owner, []*vpav1.VerticalPodAutoscaler{desiredVPA(ns, "web")})
	if err != nil {
		t.Fatal(err)
	}
	wantCondition(t, cond, deployment.ConditionVPAReady, metav1.ConditionTrue, deployment.ReasonVPAReady)
	got := vpaNamesIn(t, ns)
	slices.Sort(got)
	if diff := cmp.Diff([]string{"mgmt-b", "unclaimed", "web"}, got); diff != "" {
		t.Errorf("VPAs left (-want +got):\n%s", diff)
	}
	if !strings.Contains(cond.Message, ns+"/web") {
		t.Errorf("condition message %q does not name the applied VPA", cond.Message)
	}
}
