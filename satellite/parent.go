package satellite

import (
	"context"
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// ResolveParams are the inputs of [ResolveParentChildren]: where the parent is, how to
// find the cluster its children run on, and the satellite's own conditions that the
// outcome is reported through.
type ResolveParams struct {
	// Client reads the parent on the management cluster. Required.
	Client client.Client
	// Parent is an empty object of the parent kind; the Get fills it, so the caller
	// can read the parent after a successful call. Required.
	Parent client.Object
	// ParentKey is the namespace and name of the parent, usually the satellite's
	// namespace and the parent name the satellite carries.
	ParentKey client.ObjectKey
	// ParentKind names the parent kind in error texts ("Glance"). Empty means the kind
	// in Parent's type meta (an unstructured object carries it) or else Parent's Go
	// type name.
	ParentKind string
	// TargetClusterRef reads spec.targetClusterRef off Parent once the Get has filled
	// it. A nil func means the parent kind has no target cluster: the Resolver is asked
	// for the management cluster (a nil ref).
	TargetClusterRef func(parent client.Object) *commonv1.TargetClusterRefSpec
	// Resolver looks the parent's target cluster up. Nil keeps everything local: the
	// children client is Client.
	Resolver multicluster.Resolver
	// Conditions is the satellite's own status.conditions; the conditions this call
	// sets land here. Required.
	Conditions *[]metav1.Condition
	// Generation is the satellite's metadata.generation, stamped as observedGeneration
	// on every condition this call sets.
	Generation int64
	// GateConditionType is the satellite's gate condition ("CredentialsReady",
	// "DomainReady"), set False when the parent is missing or its target cluster does
	// not resolve. Required.
	GateConditionType string
	// WaitingForParentReason is the gate condition's reason while the parent does not
	// exist ("WaitingForParent").
	WaitingForParentReason string
	// WaitingForParentMessage is the gate condition's message while the parent does not
	// exist.
	WaitingForParentMessage string
	// RequeueAfter is the requeue interval returned while the parent is missing or its
	// target cluster does not resolve. Zero requeues on the next event only (a watch
	// on the parent kind).
	RequeueAfter time.Duration
	// ProjectionConditionType, when set, is the satellite's projection condition
	// ("ConfigProjected"): a missing parent flips it from True to False. Empty demotes
	// nothing.
	ProjectionConditionType string
	// ProjectionDemotionReason is the projection condition's reason after a missing
	// parent demoted it.
	ProjectionDemotionReason string
	// ProjectionDemotionMessage is the projection condition's message after a missing
	// parent demoted it.
	ProjectionDemotionMessage string
}

// ResolveParentChildren reads the parent a satellite names and returns the client for
// the cluster the parent's children (its Deployment and the projected Secrets) run on.
// It is the first thing a satellite controller does on each pass.
//
//   - Client reads the parent into Parent at ParentKey. TargetClusterRef then reads
//     the parent's spec.targetClusterRef, and Resolver looks that cluster up; children
//     is the Client of the resolved [multicluster.Target]. With a nil Resolver,
//     children is Client itself. On success children is non-nil and result is zero,
//     and Conditions is left as it is: the caller's own checks set the gate.
//   - A parent that does not exist sets GateConditionType False with
//     WaitingForParentReason and WaitingForParentMessage and returns a nil client with
//     ctrl.Result{RequeueAfter: RequeueAfter} and a nil error. There is no fallback to
//     the local client: without the parent, the satellite cannot know where its
//     effect would run. With ProjectionConditionType set, the same call also flips
//     that condition to False under ProjectionDemotionReason and
//     ProjectionDemotionMessage where it stands True; an absent or already False (or
//     Unknown) projection condition is left untouched, and an empty
//     ProjectionConditionType demotes nothing.
//   - A target cluster that does not resolve (the Resolver returns an error) sets
//     GateConditionType False under [multicluster.TargetClusterUnavailable] with the
//     resolver's error text as message, and returns a nil client with
//     ctrl.Result{RequeueAfter: RequeueAfter} and a nil error. A Resolver that returns
//     neither an error nor a client is a programming error and is returned as one.
//   - Any other failure to read the parent returns a nil client, a zero result and the
//     error `fetching parent <ParentKind> <namespace>/<name>: <cause>` (wrapped with
//     %w), without touching Conditions.
//   - A nil Client, Parent or Conditions, or an empty GateConditionType, returns an
//     error wrapping [ErrInvalidParams] that names the field, before any API call.
//
// A nil children client means the caller returns result and err as they are; a
// non-nil one means it goes on with its own checks. A parent that is being deleted
// still counts as present: its Deployment runs until the garbage collector removes it.
//
// Every condition set here carries observedGeneration = Generation, and its
// lastTransitionTime moves only when the status flips (meta.SetStatusCondition). A
// reason the API server would refuse is replaced as reconcile.SetCondition does, so a
// bad reason cannot make the satellite's status write fail.
func ResolveParentChildren(ctx context.Context, p ResolveParams) (children client.Client, result ctrl.Result, err error) {
	if err := p.validate(); err != nil {
		return nil, ctrl.Result{}, err
	}
	conds := &conditions{conds: p.Conditions}
	conds.Generation = p.Generation

	if err := p.Client.Get(ctx, p.ParentKey, p.Parent); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, ctrl.Result{}, fmt.Errorf("fetching parent %s %s: %w", p.kind(), p.ParentKey, err)
		}
		reconcile.MarkFalse(conds, p.GateConditionType, p.WaitingForParentReason, p.WaitingForParentMessage)
		if p.ProjectionConditionType != "" && meta.IsStatusConditionTrue(*p.Conditions, p.ProjectionConditionType) {
			reconcile.MarkFalse(conds, p.ProjectionConditionType, p.ProjectionDemotionReason, p.ProjectionDemotionMessage)
		}
		return nil, ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
	}

	if p.Resolver == nil {
		return p.Client, ctrl.Result{}, nil
	}
	var ref *commonv1.TargetClusterRefSpec
	if p.TargetClusterRef != nil {
		ref = p.TargetClusterRef(p.Parent)
	}
	target, err := p.Resolver.Resolve(ctx, ref)
	if err != nil {
		reconcile.MarkFalse(conds, p.GateConditionType, multicluster.TargetClusterUnavailable, err.Error())
		return nil, ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
	}
	if target == nil || target.Client == nil {
		return nil, ctrl.Result{}, fmt.Errorf("resolving the target cluster of parent %s %s: resolver returned no client",
			p.kind(), p.ParentKey)
	}
	return target.Client, ctrl.Result{}, nil
}

// validate refuses the parameters ResolveParentChildren cannot work with.
func (p *ResolveParams) validate() error {
	switch {
	case p.Client == nil:
		return fmt.Errorf("%w: ResolveParams.Client is nil", ErrInvalidParams)
	case isNil(p.Parent):
		return fmt.Errorf("%w: ResolveParams.Parent is nil", ErrInvalidParams)
	case p.Conditions == nil:
		return fmt.Errorf("%w: ResolveParams.Conditions is nil", ErrInvalidParams)
	case p.GateConditionType == "":
		return fmt.Errorf("%w: ResolveParams.GateConditionType is empty", ErrInvalidParams)
	}
	return nil
}

// isNil reports whether obj is nil or a nil pointer.
func isNil(obj client.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// kind returns ParentKind; when it is empty, the kind Parent carries in its type
// meta (set on unstructured objects), or else its Go type name.
func (p *ResolveParams) kind() string {
	if p.ParentKind != "" {
		return p.ParentKind
	}
	if k := p.Parent.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return reflect.Indirect(reflect.ValueOf(p.Parent)).Type().Name()
}

// conditions presents a bare condition slice and a generation as a reconcile.Object,
// so that the conditions set here go through reconcile.SetCondition (reason and
// message made acceptable to the API server) like every other step's.
type conditions struct {
	metav1.PartialObjectMetadata
	conds *[]metav1.Condition
}

// Conditions returns the satellite's condition slice.
func (c *conditions) Conditions() *[]metav1.Condition { return c.conds }
