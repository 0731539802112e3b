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
// the cluster the parent's children (its Deployment and the projected Secrets) run on:
// the Client of the resolved [multicluster.Target], or Client itself with a nil
// Resolver. A nil children client comes with the result and error to return as they
// are: a missing parent or an unresolved target cluster sets GateConditionType False and
// requeues after RequeueAfter (the package documentation, "Resolving the parent").
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
