package multicluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// FinalizerDomain is the domain of the finalizers [Cleanup] puts on a CR, one per target
// cluster that may hold its children: FinalizerDomain + "/" + the cluster's name.
const FinalizerDomain = "target-cluster.cobaltcore.c5c3.io"

// DefaultGiveUpAfter is how long [Cleanup] keeps trying to sweep an unavailable target
// cluster after a CR's deletion started, before it lets the CR go: 10 minutes.
const DefaultGiveUpAfter = 10 * time.Minute

// Event reasons [Cleanup] records on the CR.
const (
	// ReasonTargetClusterSwept (Normal): the CR's children on a target cluster were deleted.
	ReasonTargetClusterSwept = "TargetClusterSwept"
	// ReasonTargetClusterSweepAbandoned (Warning): the target cluster stayed
	// unavailable for GiveUpAfter; the CR was let go and its children there remain.
	ReasonTargetClusterSweepAbandoned = "TargetClusterSweepAbandoned"
)

// FinalizerFor returns the finalizer that stands for cluster's children. A finalizer's
// name part follows the rules of a label value, so a cluster name that is not a valid
// one (longer than 63 characters) is shortened as apply.ClaimLabelValue shortens it, to
// a prefix and a hash; such a finalizer can only be swept while the CR still names the
// cluster.
func FinalizerFor(cluster string) string {
	return FinalizerDomain + "/" + apply.ClaimLabelValue(cluster)
}

// CleanupOptions configure [NewCleanup].
type CleanupOptions struct {
	// Children are the kinds a CR writes to target clusters, as empty lists (for
	// example &appsv1.DeploymentList{}); the sweep deletes the objects of these kinds
	// in the CR's namespace that the CR claims. Required.
	Children []client.ObjectList
	// GiveUpAfter bounds how long a deleting CR waits for an unavailable target
	// cluster, counted from its deletionTimestamp; zero means DefaultGiveUpAfter.
	GiveUpAfter time.Duration
	// Recorder records the sweep's events on the CR; nil records none.
	Recorder events.EventRecorder
	// ConditionType is the condition a deleting CR reports a pending sweep on (for
	// example "Ready"); empty reports none.
	ConditionType string
}

// Cleanup removes a CR's children from target clusters, where no owner reference lets
// the garbage collector do it. [Cleanup.Track] puts a finalizer on the CR for the target
// cluster it names (none when it names none: the management cluster's garbage collector
// reclaims children there), [Cleanup.Finalize] sweeps each such cluster when the CR is
// deleted, and a target cluster that stays unavailable is given up after GiveUpAfter,
// with a Warning event, so a CR is never stuck in deletion forever.
type Cleanup struct {
	resolver Resolver
	opts     CleanupOptions
	now      func() time.Time
}

// NewCleanup returns the Cleanup that resolves clusters through resolver.
func NewCleanup(resolver Resolver, opts CleanupOptions) (*Cleanup, error) {
	if resolver == nil {
		return nil, fmt.Errorf("%w: NewCleanup: resolver is nil", ErrInvalidOptions)
	}
	if len(opts.Children) == 0 {
		return nil, fmt.Errorf("%w: CleanupOptions.Children is empty", ErrInvalidOptions)
	}
	for i, l := range opts.Children {
		if l == nil {
			return nil, fmt.Errorf("%w: CleanupOptions.Children[%d] is nil", ErrInvalidOptions, i)
		}
	}
	if opts.GiveUpAfter <= 0 {
		opts.GiveUpAfter = DefaultGiveUpAfter
	}
	return &Cleanup{resolver: resolver, opts: opts, now: time.Now}, nil
}

// Track runs on a live CR once [TargetGate] has resolved target, before the first write
// to it. For a target cluster it adds FinalizerFor(target.Name) to obj through c (the
// management cluster's client); before it adds it, while obj does not carry it yet (the
// CR is new, or moves there from the management cluster or another target cluster), it
// deletes the objects of the CleanupOptions.Children kinds in obj's namespace on the
// management cluster that obj controls (its controller owner reference): the children
// it ran there before it moved. It also sweeps any other target cluster obj's
// finalizers name (the CR named another cluster before) and drops that finalizer once
// the sweep is complete; a cluster that is unavailable, or that obj's namespace may no
// longer use, keeps its finalizer and is tried again on the next pass, without failing
// this one. Clusters are resolved for obj's namespace ([WithNamespace]). An error is
// returned for a write to obj and for a failed sweep of the management cluster (the
// finalizer is then not added, so the next pass sweeps again).
func (cl *Cleanup) Track(ctx context.Context, c client.Client, obj reconcile.Object, target *Target) error {
	if target == nil {
		return fmt.Errorf("%w: Track: target is nil", ErrInvalidOptions)
	}
	ctx = WithNamespace(ctx, obj.GetNamespace())
	current := ""
	if !target.IsLocal() {
		current = FinalizerFor(target.Name)
		if !slices.Contains(obj.GetFinalizers(), current) {
			if err := cl.sweepLocal(ctx, c, obj); err != nil {
				return err
			}
		}
		if _, err := reconcile.AddFinalizer(ctx, c, obj, current); err != nil {
			return err
		}
	}
	for _, f := range obj.GetFinalizers() {
		cluster, ok := clusterOf(f, nil)
		if !ok || f == current {
			continue
		}
		done, err := cl.sweep(ctx, obj, cluster)
		if err != nil || !done {
			log.FromContext(ctx).Info("children on a target cluster the CR no longer names are not swept yet",
				"cluster", cluster, "reason", errText(err))
			continue
		}
		if _, err := reconcile.RemoveFinalizer(ctx, c, obj, f); err != nil {
			return err
		}
	}
	return nil
}

// Finalize runs on a CR being deleted: it sweeps every target cluster obj's finalizers
// name and removes each finalizer once its cluster holds none of obj's children, so the
// API server can delete obj. While a cluster is unavailable (or a child is still being
// deleted) it reports the pending sweep on CleanupOptions.ConditionType and requeues
// after [RetryInterval] (a cluster obj's namespace may no longer
// use, [AllowedNamespacesAnnotation], counts as unavailable: nothing is swept there);
// once GiveUpAfter has passed since the deletion started it records a Warning event
// (ReasonTargetClusterSweepAbandoned) naming the cluster and removes the finalizer:
// the children there remain. ref is the CR's
// spec.targetClusterRef (it names the cluster of a finalizer whose name had to be
// shortened). A CR that is not being deleted is left alone.
func (cl *Cleanup) Finalize(ctx context.Context, c client.Client, obj reconcile.Object, ref *commonv1.TargetClusterRefSpec) (ctrl.Result, error) {
	deleted := obj.GetDeletionTimestamp()
	if deleted == nil {
		return ctrl.Result{}, nil
	}
	ctx = WithNamespace(ctx, obj.GetNamespace())
	giveUpAt := deleted.Add(cl.opts.GiveUpAfter)
	var pending []string
	for _, f := range obj.GetFinalizers() {
		cluster, ok := clusterOf(f, ref)
		if !ok {
			continue
		}
		done, err := cl.sweep(ctx, obj, cluster)
		switch {
		case done:
			cl.event(obj, corev1.EventTypeNormal, ReasonTargetClusterSwept,
				"deleted the children on target cluster %q", cluster)
		case !cl.now().Before(giveUpAt):
			cl.event(obj, corev1.EventTypeWarning, ReasonTargetClusterSweepAbandoned,
				"gave up removing the children on target cluster %q after %s: %s; they remain there",
				cluster, cl.opts.GiveUpAfter, errText(err))
		case err != nil && !errors.Is(err, ErrTargetClusterUnavailable):
			return ctrl.Result{}, fmt.Errorf("sweep target cluster %q: %w", cluster, err)
		default:
			pending = append(pending, fmt.Sprintf("target cluster %q: %s", cluster, errText(err)))
			continue
		}
		if _, err := reconcile.RemoveFinalizer(ctx, c, obj, f); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(pending) == 0 {
		return ctrl.Result{}, nil
	}
	if cl.opts.ConditionType != "" {
		meta.SetStatusCondition(obj.Conditions(), metav1.Condition{
			Type:   cl.opts.ConditionType,
			Status: metav1.ConditionFalse,
			Reason: TargetClusterUnavailable,
			Message: fmt.Sprintf("deleting: children not removed yet from %s; giving up at %s",
				strings.Join(pending, "; "), giveUpAt.UTC().Format(time.RFC3339)),
			ObservedGeneration: obj.GetGeneration(),
		})
	}
	wait := min(RetryInterval, max(giveUpAt.Sub(cl.now()), time.Second))
	return ctrl.Result{RequeueAfter: wait}, nil
}

// errNotSwept says that children are still being deleted.
var errNotSwept = errors.New("children are still being deleted")

// sweep deletes obj's children on cluster and reports whether none is left. An
// unavailable cluster returns its *UnavailableError.
func (cl *Cleanup) sweep(ctx context.Context, obj client.Object, cluster string) (bool, error) {
	target, err := resolve(ctx, cl.resolver, &commonv1.TargetClusterRefSpec{Name: cluster})
	if err != nil {
		return false, err
	}
	if target.IsLocal() || target.Ownership == nil {
		return true, nil
	}
	gvk, err := target.Client.GroupVersionKindFor(obj)
	if err != nil {
		return false, fmt.Errorf("owner kind: %w", err)
	}
	selector := client.MatchingLabels(apply.ClaimLabels(*target.Ownership, gvk, obj))
	left := 0
	for _, proto := range cl.opts.Children {
		list, ok := proto.DeepCopyObject().(client.ObjectList)
		if !ok {
			return false, fmt.Errorf("DeepCopyObject of %T is not a client.ObjectList", proto)
		}
		if err := target.APIReader.List(ctx, list, client.InNamespace(obj.GetNamespace()), selector); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return false, fmt.Errorf("list %T on target cluster %q: %w", proto, cluster, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return false, err
		}
		for _, item := range items {
			child, ok := item.(client.Object)
			if !ok || !apply.IsControlled(target.Client, obj, child) {
				continue
			}
			if child.GetDeletionTimestamp() != nil {
				left++
				continue
			}
			if err := apply.DeleteObject(ctx, target.Client, child); err != nil {
				return false, fmt.Errorf("on target cluster %q: %w", cluster, err)
			}
			if len(child.GetFinalizers()) > 0 {
				left++ // it goes once its own finalizers are done
			}
		}
	}
	if left > 0 {
		return false, errNotSwept
	}
	return true, nil
}

// sweepLocal deletes the objects of the Children kinds in obj's namespace on the
// management cluster whose controller owner reference is obj. It lists past the cache
// (the management cluster's APIReader, else c) and deletes through the management
// cluster's client (else c); a kind the cluster does not serve is skipped.
func (cl *Cleanup) sweepLocal(ctx context.Context, c client.Client, obj client.Object) error {
	local, err := resolve(ctx, cl.resolver, nil)
	if err != nil {
		return fmt.Errorf("sweep the management cluster: %w", err)
	}
	var reader client.Reader = c
	if local.APIReader != nil {
		reader = local.APIReader
	}
	writer := c
	if local.Client != nil {
		writer = local.Client
	}
	for _, proto := range cl.opts.Children {
		list, ok := proto.DeepCopyObject().(client.ObjectList)
		if !ok {
			return fmt.Errorf("DeepCopyObject of %T is not a client.ObjectList", proto)
		}
		if err := reader.List(ctx, list, client.InNamespace(obj.GetNamespace())); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return fmt.Errorf("sweep the management cluster: list %T: %w", proto, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		for _, item := range items {
			child, ok := item.(client.Object)
			if !ok || child.GetDeletionTimestamp() != nil || !metav1.IsControlledBy(child, obj) {
				continue
			}
			if err := apply.DeleteObject(ctx, writer, child); err != nil {
				return fmt.Errorf("sweep the management cluster: %w", err)
			}
		}
	}
	return nil
}

func (cl *Cleanup) event(obj client.Object, eventType, reason, note string, args ...any) {
	if cl.opts.Recorder != nil {
		cl.opts.Recorder.Eventf(obj, nil, eventType, reason, "Delete", note, args...)
	}
}

// clusterOf returns the cluster a finalizer of FinalizerDomain names: ref's name when
// the finalizer is ref's (its name may have been shortened), else the finalizer's name.
func clusterOf(finalizer string, ref *commonv1.TargetClusterRefSpec) (string, bool) {
	if ref != nil && ref.Name != "" && FinalizerFor(ref.Name) == finalizer {
		return ref.Name, true
	}
	return strings.CutPrefix(finalizer, FinalizerDomain+"/")
}

func errText(err error) string {
	if err == nil {
		return "children are still being deleted"
	}
	return err.Error()
}
