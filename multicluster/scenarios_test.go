package multicluster_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// get reads obj's current state from cluster; NotFound is reported as false.
func get(ctx context.Context, cluster *testenv.Env, obj client.Object) (bool, error) {
	err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// conditionOf reads the Gadget and returns its ChildrenReady condition.
func conditionOf(ctx context.Context, cluster *testenv.Env, g *Gadget) (*metav1.Condition, error) {
	if err := cluster.Client.Get(ctx, client.ObjectKeyFromObject(g), g); err != nil {
		return nil, err
	}
	return meta.FindStatusCondition(g.Status.Conditions, childrenReady), nil
}

// expectReason waits for the Gadget's ChildrenReady condition to carry reason with a
// message containing each of the fragments.
func expectReason(t *testing.T, cluster *testenv.Env, g *Gadget, reason string, timeout time.Duration, fragments ...string) {
	t.Helper()
	eventually(t, timeout, "ChildrenReady reason "+reason, func(ctx context.Context) (bool, error) {
		c, err := conditionOf(ctx, cluster, g)
		if err != nil || c == nil {
			return false, err
		}
		if c.Reason != reason || c.ObservedGeneration != g.Generation {
			return false, errors.New(c.Reason + ": " + c.Message)
		}
		for _, f := range fragments {
			if !strings.Contains(c.Message, f) {
				return false, errors.New("message " + c.Message + " lacks " + f)
			}
		}
		return true, nil
	})
}

// onEdge starts the operator for a fresh namespace (existing on the target too) with
// the shared target registered as "edge".
func onEdge(t *testing.T, o operatorOptions) (*operator, string) {
	t.Helper()
	ns := env.Namespace(t)
	namespaceOn(t, target, ns)
	if o.identity == "" {
		o.identity = "mgmt-a"
	}
	op := startOperator(t, ns, o)
	op.register(t, target, "edge")
	return op, ns
}

// readyOnEdge is onEdge with a Gadget "g" on "edge" that reached Ready.
func readyOnEdge(t *testing.T, o operatorOptions) (*operator, *Gadget) {
	t.Helper()
	op, ns := onEdge(t, o)
	g := op.newGadget(t, ns, "g", "edge", "v1")
	testenv.ExpectCondition(t, env.Client, g, "Ready", metav1.ConditionTrue)
	return op, g
}

func TestChildrenLandOnTheTargetCluster(t *testing.T) {
	op, ns := onEdge(t, operatorOptions{})

	remote := op.newGadget(t, ns, "remote", "edge", "hello edge")
	local := op.newGadget(t, ns, "local", "", "hello home")
	testenv.ExpectCondition(t, env.Client, remote, "Ready", metav1.ConditionTrue)
	testenv.ExpectCondition(t, env.Client, local, "Ready", metav1.ConditionTrue)

	// The remote Gadget's child is on the target, claimed by labels, without an owner
	// reference, and not on the management cluster.
	cm := childOf(remote)
	if ok, err := get(context.Background(), target, cm); !ok {
		t.Fatalf("child of the remote Gadget not on the target cluster: %v", err)
	}
	if cm.Data["message"] != "hello edge" || len(cm.OwnerReferences) != 0 {
		t.Fatalf("child on target: data %v ownerReferences %v", cm.Data, cm.OwnerReferences)
	}
	claim, ok := apply.ClaimOf(cm)
	if !ok || claim.ManagementCluster != "mgmt-a" || claim.Name != "remote" || claim.Namespace != ns || claim.GroupKind.Kind != "Gadget" {
		t.Fatalf("claim of the child on target = %+v, %v", claim, ok)
	}
	if ok, _ := get(context.Background(), env, childOf(remote)); ok {
		t.Fatal("child of the remote Gadget was also written to the management cluster")
	}
	if !slices.Contains(remote.Finalizers, multicluster.FinalizerFor("edge")) {
		t.Fatalf("remote Gadget finalizers = %v, want %s", remote.Finalizers, multicluster.FinalizerFor("edge"))
	}

	// The local Gadget's child is on the management cluster with an owner reference,
	// and the Gadget carries no finalizer: the garbage collector reclaims it.
	lcm := childOf(local)
	if ok, err := get(context.Background(), env, lcm); !ok {
		t.Fatalf("child of the local Gadget not on the management cluster: %v", err)
	}
	if ref := metav1.GetControllerOf(lcm); ref == nil || ref.UID != local.UID {
		t.Fatalf("local child controller = %v, want the Gadget", ref)
	}
	if len(local.Finalizers) != 0 {
		t.Fatalf("local Gadget finalizers = %v, want none", local.Finalizers)
	}
	if ok, _ := get(context.Background(), target, childOf(local)); ok {
		t.Fatal("child of the local Gadget was written to the target cluster")
	}
}

func TestUnregisteredTargetClusterWritesNothing(t *testing.T) {
	op, ns := onEdge(t, operatorOptions{})

	g := op.newGadget(t, ns, "lost", "nowhere", "m")
	expectReason(t, env, g, multicluster.TargetClusterUnavailable, 30*time.Second, `target cluster "nowhere"`, "not registered")
	testenv.ExpectCondition(t, env.Client, g, "Ready", metav1.ConditionFalse)
	for _, c := range []*testenv.Env{env, target} {
		if ok, _ := get(context.Background(), c, childOf(g)); ok {
			t.Fatal("a child was written although the target cluster does not resolve")
		}
	}
	if len(g.Finalizers) != 0 {
		t.Fatalf("finalizers = %v, want none for a cluster that never resolved", g.Finalizers)
	}
}

func TestKubeconfigSecretRemoved(t *testing.T) {
	op, g := readyOnEdge(t, operatorOptions{})
	if got := op.resolver.CachedTargets(); !slices.Equal(got, []string{"edge"}) {
		t.Fatalf("resolver's cached targets while edge is used: %v, want [edge]", got)
	}

	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: op.clustersNS, Name: "edge"}}
	if err := env.Client.Delete(context.Background(), secret); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "cluster unregistered", func(ctx context.Context) (bool, error) {
		_, err := op.resolver.Resolve(multicluster.WithNamespace(ctx, g.Namespace), g.Spec.TargetClusterRef)
		return errors.Is(err, multicluster.ErrTargetClusterUnavailable), nil
	})
	// The disengaged cluster's target (its Applier, clients, transports) is dropped.
	eventually(t, 30*time.Second, "the resolver keeps nothing of the disengaged cluster", func(context.Context) (bool, error) {
		return len(op.resolver.CachedTargets()) == 0, nil
	})
	// The next pass (the periodic recheck, or this spec change) finds the cluster gone
	// and writes nothing: the child keeps the old message.
	patch := client.MergeFrom(g.DeepCopyObject().(*Gadget)) // the spec alone: the operator may have written the status since
	g.Spec.Message = "v2"
	if err := env.Client.Patch(context.Background(), g, patch); err != nil {
		t.Fatal(err)
	}
	expectReason(t, env, g, multicluster.TargetClusterUnavailable, 30*time.Second, `target cluster "edge"`, "not registered")
	cm := childOf(g)
	if ok, err := get(context.Background(), target, cm); !ok || cm.Data["message"] != "v1" {
		t.Fatalf("child on target after the cluster was unregistered: found %v (%v), data %v; want v1 untouched", ok, err, cm.Data)
	}
	if ok, _ := get(context.Background(), env, childOf(g)); ok {
		t.Fatal("a child fell back to the management cluster")
	}
}

func TestTargetAPIServerStoppedAndRestarted(t *testing.T) {
	// A target of its own: stopping the shared one would break the other tests.
	edge, err := testenv.Start(testenv.Options{Scheme: newScheme(), CRDSources: []testenv.CRDSource{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := edge.Stop(); err != nil {
			t.Errorf("stop target: %v", err)
		}
	})
	ns := env.Namespace(t)
	namespaceOn(t, edge, ns)
	op := startOperator(t, ns, operatorOptions{})
	op.register(t, edge, "edge")
	g := op.newGadget(t, ns, "g", "edge", "v1")
	testenv.ExpectCondition(t, env.Client, g, "Ready", metav1.ConditionTrue)

	if err := edge.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	// No event announces an API server that stops: the periodic recheck notices it.
	expectReason(t, env, g, multicluster.TargetClusterUnavailable, 45*time.Second, `target cluster "edge"`, "does not answer")
	testenv.ExpectCondition(t, env.Client, g, "Ready", metav1.ConditionFalse)

	if err := edge.RestartAPIServer(); err != nil {
		t.Fatal(err)
	}
	expectReason(t, env, g, "ChildrenApplied", 45*time.Second, "target cluster edge")
	testenv.ExpectCondition(t, env.Client, g, "Ready", metav1.ConditionTrue)
}

func TestDeletionSweepsTheTargetCluster(t *testing.T) {
	_, g := readyOnEdge(t, operatorOptions{})
	// Someone else's ConfigMap next to it, with the same labels but another
	// management cluster's identity, is not swept.
	foreign := childOf(g)
	foreign.Name = "foreign"
	foreign.Labels = apply.ClaimLabels(apply.RemoteOwnership{ManagementCluster: "mgmt-b"}, gadgetGV.WithKind("Gadget"), g)
	if err := target.Client.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}

	if err := env.Client.Delete(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Gadget gone", func(ctx context.Context) (bool, error) {
		ok, err := get(ctx, env, &Gadget{ObjectMeta: g.ObjectMeta})
		return !ok && err == nil, err
	})
	if ok, _ := get(context.Background(), target, childOf(g)); ok {
		t.Fatal("the child on the target cluster survived the Gadget's deletion")
	}
	if ok, err := get(context.Background(), target, foreign); !ok {
		t.Fatalf("the sweep deleted another management cluster's object: %v", err)
	}
	eventually(t, 10*time.Second, "TargetClusterSwept event", func(context.Context) (bool, error) {
		for _, e := range events(t, env, g) {
			if strings.HasPrefix(e, "Normal "+multicluster.ReasonTargetClusterSwept) {
				return true, nil
			}
		}
		return false, nil
	})
}

func TestDeletionGivesUpOnAnUnavailableTargetCluster(t *testing.T) {
	op, g := readyOnEdge(t, operatorOptions{giveUpAfter: 3 * time.Second})

	if err := env.Client.Delete(context.Background(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: op.clustersNS, Name: "edge"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "cluster unregistered", func(ctx context.Context) (bool, error) {
		_, err := op.resolver.Resolve(multicluster.WithNamespace(ctx, g.Namespace), g.Spec.TargetClusterRef)
		return errors.Is(err, multicluster.ErrTargetClusterUnavailable), nil
	})
	if err := env.Client.Delete(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Gadget let go", func(ctx context.Context) (bool, error) {
		ok, err := get(ctx, env, &Gadget{ObjectMeta: g.ObjectMeta})
		return !ok && err == nil, err
	})
	var warned bool
	for _, e := range events(t, env, g) {
		warned = warned || (strings.HasPrefix(e, "Warning "+multicluster.ReasonTargetClusterSweepAbandoned) &&
			strings.Contains(e, `"edge"`))
	}
	if !warned {
		t.Fatalf("no %s event naming the cluster; events: %v", multicluster.ReasonTargetClusterSweepAbandoned, events(t, env, g))
	}
	if ok, _ := get(context.Background(), target, childOf(g)); !ok {
		t.Fatal("the child on the unreachable target should remain (nothing could delete it)")
	}
}

func TestEditOnTheTargetIsRepairedThroughTheRemoteWatch(t *testing.T) {
	_, g := readyOnEdge(t, operatorOptions{})

	cm := childOf(g)
	if _, err := get(context.Background(), target, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["message"] = "edited on the target"
	if err := target.Client.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	// Well within the 15 s recheck: only the watch on the target can bring the pass.
	eventually(t, 5*time.Second, "child repaired", func(ctx context.Context) (bool, error) {
		got := childOf(g)
		ok, err := get(ctx, target, got)
		return ok && got.Data["message"] == "v1", err
	})
}

func TestInputWatchHasALocalAndARemoteLeg(t *testing.T) {
	op, ns := onEdge(t, operatorOptions{noRecheck: true})
	remote := op.newGadget(t, ns, "remote", "edge", "m")
	local := op.newGadget(t, ns, "local", "", "m")
	testenv.ExpectCondition(t, env.Client, remote, "Ready", metav1.ConditionTrue)
	testenv.ExpectCondition(t, env.Client, local, "Ready", metav1.ConditionTrue)

	trigger := func(t *testing.T, cluster *testenv.Env, gadget string) {
		t.Helper()
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "input-" + gadget}}
		if err := cluster.Client.Create(context.Background(), sa); err != nil {
			t.Fatal(err)
		}
	}
	expectPass := func(t *testing.T, g *Gadget, before int64) {
		t.Helper()
		eventually(t, 5*time.Second, "a pass of "+g.Name, func(context.Context) (bool, error) {
			return op.rec.passesOf(client.ObjectKeyFromObject(g)) > before, nil
		})
	}
	// settled returns g's pass count once it has not moved for a second (the passes
	// that brought it to Ready are over).
	settled := func(g *Gadget) int64 {
		key := client.ObjectKeyFromObject(g)
		n := op.rec.passesOf(key)
		for {
			time.Sleep(time.Second)
			m := op.rec.passesOf(key)
			if m == n {
				return n
			}
			n = m
		}
	}
	expectNoPass := func(t *testing.T, g *Gadget, before int64) {
		t.Helper()
		time.Sleep(2 * time.Second)
		if n := op.rec.passesOf(client.ObjectKeyFromObject(g)); n != before {
			t.Fatalf("%s had %d passes after an input event of another cluster", g.Name, n-before)
		}
	}

	// An input on the target cluster named after the local Gadget does not concern
	// it (the local Gadget reads its inputs on the management cluster)...
	before := settled(local)
	trigger(t, target, "local")
	expectNoPass(t, local, before)
	// ...one on the management cluster does.
	trigger(t, env, "local")
	expectPass(t, local, before)

	// And the other way round for the Gadget on the target cluster.
	before = settled(remote)
	trigger(t, env, "remote")
	expectNoPass(t, remote, before)
	trigger(t, target, "remote")
	expectPass(t, remote, before)
}

func TestTwoManagementClustersShareATarget(t *testing.T) {
	mgmtB, err := testenv.Start(testenv.Options{Scheme: newScheme(), CRDPaths: []string{"testdata/crds"},
		CRDSources: []testenv.CRDSource{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mgmtB.Stop(); err != nil {
			t.Errorf("stop management cluster B: %v", err)
		}
	})
	ns := env.Namespace(t)
	namespaceOn(t, target, ns)
	namespaceOn(t, mgmtB, ns)
	// Both identities are the default: each management cluster's kube-system UID.
	a := startOperator(t, ns, operatorOptions{})
	b := startOperator(t, ns, operatorOptions{mgmt: mgmtB})
	if a.resolver.Remote() == b.resolver.Remote() {
		t.Fatalf("two management clusters got the same identity %q", a.resolver.Remote().ManagementCluster)
	}
	a.register(t, target, "edge")
	b.register(t, target, "edge")

	ga := a.newGadget(t, ns, "same", "edge", "from A")
	testenv.ExpectCondition(t, env.Client, ga, "Ready", metav1.ConditionTrue)
	gb := b.newGadget(t, ns, "same", "edge", "from B")
	// B's Gadget of the same namespace and name cannot take A's child.
	eventually(t, 30*time.Second, "B refused", func(ctx context.Context) (bool, error) {
		if err := mgmtB.Client.Get(ctx, client.ObjectKeyFromObject(gb), gb); err != nil {
			return false, err
		}
		ready := meta.FindStatusCondition(gb.Status.Conditions, "Ready")
		return ready != nil && ready.Status == metav1.ConditionFalse && b.rec.passesOf(client.ObjectKeyFromObject(gb)) > 0, nil
	})
	cm := childOf(ga)
	if _, err := get(context.Background(), target, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "from A" {
		t.Fatalf("B overwrote A's child: %v", cm.Data)
	}
	// Deleting B's Gadget leaves A's child alone.
	if err := mgmtB.Client.Delete(context.Background(), gb); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "B's Gadget gone", func(ctx context.Context) (bool, error) {
		ok, err := get(ctx, mgmtB, &Gadget{ObjectMeta: gb.ObjectMeta})
		return !ok && err == nil, err
	})
	if ok, err := get(context.Background(), target, childOf(ga)); !ok {
		t.Fatalf("deleting B's Gadget deleted A's child: %v", err)
	}
	testenv.ExpectCondition(t, env.Client, ga, "Ready", metav1.ConditionTrue)
}

// A CR that moves from the management cluster to a target cluster has the children it
// controls on the management cluster swept, as a move between target clusters sweeps
// the old one; the objects it does not control stay.
func TestMovingToATargetClusterSweepsTheManagementCluster(t *testing.T) {
	op, ns := onEdge(t, operatorOptions{})
	g := op.newGadget(t, ns, "g", "", "v1")
	stay := op.newGadget(t, ns, "stay", "", "v1")
	testenv.ExpectCondition(t, env.Client, g, "Ready", metav1.ConditionTrue)
	testenv.ExpectCondition(t, env.Client, stay, "Ready", metav1.ConditionTrue)
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "foreign"}}
	if err := env.Client.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	local := childOf(g)
	if ok, err := get(context.Background(), env, local); !ok || metav1.GetControllerOf(local) == nil {
		t.Fatalf("the local Gadget's child on the management cluster: found %v (%v), controller %v", ok, err, metav1.GetControllerOf(local))
	}

	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), g); err != nil {
		t.Fatal(err)
	}
	g.Spec.TargetClusterRef = &commonv1.TargetClusterRefSpec{Name: "edge"}
	if err := env.Client.Update(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	expectReason(t, env, g, "ChildrenApplied", 30*time.Second, "target cluster edge")
	if ok, err := get(context.Background(), target, childOf(g)); !ok {
		t.Fatalf("the moved Gadget's child is not on the target: %v", err)
	}
	if ok, err := get(context.Background(), env, childOf(g)); ok || err != nil {
		t.Fatalf("the moved Gadget's child still runs on the management cluster (err %v)", err)
	}
	for _, other := range []*corev1.ConfigMap{childOf(stay), foreign} {
		if ok, err := get(context.Background(), env, other); !ok {
			t.Fatalf("the sweep of the management cluster deleted %s, which the moved Gadget does not control: %v", other.Name, err)
		}
	}
}
