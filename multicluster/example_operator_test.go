package multicluster_test

import (
	"context"
	"flag"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// readme:start
// An operator whose Gadgets name the cluster their children run on. main wires the
// manager, the resolver, the cleanup and the watches:
func runGadgetOperator(ctx context.Context) error {
	clustersNS := flag.String("clusters-namespace", "", "namespace of the target clusters' kubeconfig Secrets")
	flag.Parse()
	mgr, err := multicluster.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{Scheme: newScheme(),
		Cache: multicluster.CacheOptions("gadget-operator", *clustersNS)},
		multicluster.ManagerOptions{ClustersNamespace: *clustersNS, FieldManager: "gadget-operator"})
	if err != nil {
		return err
	}
	resolver, err := multicluster.NewResolver(ctx, mgr, multicluster.ResolverOptions{
		Applier: apply.ApplierOptions{FieldManager: "gadget-operator"}})
	if err != nil {
		return err
	}
	cleanup, err := multicluster.NewCleanup(resolver, multicluster.CleanupOptions{
		Children: []client.ObjectList{&appsv1.DeploymentList{}, &corev1.ConfigMapList{}},
		Recorder: mgr.GetLocalManager().GetEventRecorder("gadget-operator")})
	if err != nil {
		return err
	}
	r := &GadgetReconciler{client: resolver.Local().Client, cleanup: cleanup}
	b := mcbuilder.ControllerManagedBy(mgr).Named("gadget").
		For(&Gadget{}, mcbuilder.WithEngageWithLocalCluster(true), mcbuilder.WithEngageWithProviderClusters(false))
	// An edit of a child on a target cluster brings the Gadget that claims it.
	if b, err = multicluster.AddChildWatches(b, mgr.GetLocalManager().GetScheme(), &Gadget{},
		resolver.Remote(), &appsv1.Deployment{}, &corev1.ConfigMap{}); err != nil {
		return err
	}
	if err := b.Complete(multicluster.LocalReconciler(r)); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// Each pass runs behind multicluster.OnTarget: a deleted Gadget has its target cluster
// swept (bounded in time); an unknown or silent cluster sets TargetClusterUnavailable and
// writes nothing anywhere; otherwise the steps write through
// multicluster.TargetFrom(ctx).Client, on whichever cluster that is.
func (r *GadgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.RunPass(ctx, r.client, req.NamespacedName, &Gadget{},
		reconcile.DefaultPassOptions("ChildrenReady"), func(ctx context.Context, g *Gadget) (ctrl.Result, error) {
			return multicluster.OnTarget(ctx, r.client, r.cleanup, g, g.Spec.TargetClusterRef, "ChildrenReady", r.pipeline)
		})
}

// readme:end

// GadgetReconciler is the example operator's reconciler.
type GadgetReconciler struct {
	client   client.Client
	cleanup  *multicluster.Cleanup
}

// pipeline stands for the operator's steps: each writes through
// multicluster.TargetFrom(ctx).Client.
func (r *GadgetReconciler) pipeline(ctx context.Context, g *Gadget) (ctrl.Result, error) {
	target := multicluster.TargetFrom(ctx)
	cm := childOf(g)
	if err := apply.EnsureObject(ctx, target.Client, target.Client.Scheme(), g, cm, apply.FieldManager); err != nil {
		return ctrl.Result{}, err
	}
	reconcile.MarkTrue(g, "ChildrenReady", "ChildrenApplied", "")
	return ctrl.Result{}, nil // OnTarget rechecks a target cluster
}

// Example_operator shows the wiring of an operator whose CRs name a target cluster
// (runGadgetOperator and GadgetReconciler.Reconcile above); it needs a cluster, so it
// is compiled but not run.
func Example_operator() {
	_ = runGadgetOperator
}
