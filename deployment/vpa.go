package deployment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/capability"
)

// VPAGroupVersionKind is the kind the VPA flow manages and probes for:
// autoscaling.k8s.io/v1 VerticalPodAutoscaler.
var VPAGroupVersionKind = vpav1.SchemeGroupVersion.WithKind("VerticalPodAutoscaler")

// ReconcileVPA is the VPA flow: it makes the VerticalPodAutoscalers controlled by owner
// exactly the set desired and returns the [ConditionVPAReady] condition to set.
//
// It first asks the cluster behind c (its RESTMapper, through
// capability.IsKindServed) whether it serves [VPAGroupVersionKind]:
//
//   - discovery failed: False, [ReasonCapabilityProbeFailed], and the error (wrapping
//     capability.ErrProbeFailed) so that the caller retries; nothing is touched.
//   - not served, desired empty: True, [ReasonVPANotRequired] (no VPA can exist).
//   - not served, desired not empty: False, [ReasonVPANotInstalled], nil error: the
//     opt-in cannot be honoured until the VPA CRDs are installed, which is not an
//     error to retry with back-off. The message names the requested VPAs.
//   - served: every desired VPA is applied with owner as controller (Server-Side
//     Apply; converged VPAs are not rewritten), then every VPA controlled by owner in
//     owner's namespace (apply.IsControlled: through an apply.Applier with
//     ApplierOptions.Remote, claimed for owner) that desired does not name is deleted, so a workload that
//     opted out or went away loses its VPA. True, [ReasonVPAReady] (or
//     [ReasonVPANotRequired] when desired is empty).
//
// A failing apply, list or delete gives False, [ReasonVPAError], and the error; VPAs
// are deleted only after every desired one was applied. An invalid desired set (a nil
// entry, an entry without a name, two entries with one namespace/name) is refused
// before any API call with [ReasonVPAError] and an error wrapping [ErrInvalidVPASet];
// a nil scheme likewise, with an error wrapping apply.ErrNilScheme.
//
// A wanted VPA of a name that owner does not control (made by kubectl or Helm, or
// controlled by another object) is refused with [ReasonVPAError] and an error wrapping
// apply.ErrNotControlled that names its controller, and one being deleted with
// apply.ErrBeingDeleted; neither is written. The prune deletes only VPAs that owner
// controls and that are not already being deleted, each preconditioned on the UID it
// listed.
//
// The returned condition carries no observedGeneration; the caller stamps it. A
// converged pass costs one LIST plus, per desired VPA, one GET (apply.EnsureObject's
// control check) and one no-op PATCH.
func ReconcileVPA(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	desired []*vpav1.VerticalPodAutoscaler,
) (metav1.Condition, error) {
	if err := validateVPASet(scheme, owner, desired); err != nil {
		return vpaError(err)
	}

	served, err := capability.IsKindServed(c.RESTMapper(), VPAGroupVersionKind)
	if err != nil {
		err = fmt.Errorf("reconcile VerticalPodAutoscalers: %w", err)
		return falseCondition(ConditionVPAReady, ReasonCapabilityProbeFailed, err.Error()), err
	}
	if !served {
		if len(desired) == 0 {
			return trueCondition(ConditionVPAReady, ReasonVPANotRequired,
				"no VerticalPodAutoscaler is requested"), nil
		}
		return falseCondition(ConditionVPAReady, ReasonVPANotInstalled, fmt.Sprintf(
			"the cluster does not serve %s/%s %s; install the VerticalPodAutoscaler CRDs to honour the request for %s",
			VPAGroupVersionKind.Group, VPAGroupVersionKind.Version, VPAGroupVersionKind.Kind, vpaNames(desired))), nil
	}

	for _, vpa := range desired {
		if err := apply.EnsureObject(ctx, c, scheme, owner, vpa, apply.FieldManager); err != nil {
			return vpaError(fmt.Errorf("reconcile VerticalPodAutoscalers: %w", err))
		}
	}
	if err := pruneVPAs(ctx, c, owner, desired); err != nil {
		return vpaError(fmt.Errorf("reconcile VerticalPodAutoscalers: %w", err))
	}
	if len(desired) == 0 {
		return trueCondition(ConditionVPAReady, ReasonVPANotRequired, "no VerticalPodAutoscaler is requested"), nil
	}
	return trueCondition(ConditionVPAReady, ReasonVPAReady, "VerticalPodAutoscaler applied: "+vpaNames(desired)), nil
}

// pruneVPAs deletes every VPA controlled by owner (in owner's namespace) that desired
// does not name.
func pruneVPAs(ctx context.Context, c client.Client, owner client.Object, desired []*vpav1.VerticalPodAutoscaler) error {
	list := &vpav1.VerticalPodAutoscalerList{}
	if err := c.List(ctx, list, client.InNamespace(owner.GetNamespace())); err != nil {
		return fmt.Errorf("list VerticalPodAutoscalers in namespace %q: %w", owner.GetNamespace(), err)
	}
	wanted := make(map[client.ObjectKey]bool, len(desired))
	for _, vpa := range desired {
		wanted[client.ObjectKeyFromObject(vpa)] = true
	}
	var errs []error
	for i := range list.Items {
		vpa := &list.Items[i]
		if wanted[client.ObjectKeyFromObject(vpa)] || !apply.IsControlled(c, owner, vpa) || vpa.DeletionTimestamp != nil {
			continue
		}
		if err := apply.DeleteObject(ctx, c, vpa); err != nil {
			errs = append(errs, fmt.Errorf("prune VerticalPodAutoscaler %s: %w", keyOf(vpa), err))
		}
	}
	return errors.Join(errs...)
}

func validateVPASet(scheme *runtime.Scheme, owner client.Object, desired []*vpav1.VerticalPodAutoscaler) error {
	if err := apply.ValidateOwner(owner); err != nil {
		return fmt.Errorf("reconcile VerticalPodAutoscalers: %w", err)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return fmt.Errorf("reconcile VerticalPodAutoscalers of %s: %w", keyOf(owner), err)
	}
	seen := make(map[client.ObjectKey]bool, len(desired))
	for i, vpa := range desired {
		switch {
		case vpa == nil:
			return fmt.Errorf("reconcile VerticalPodAutoscalers: %w: entry %d is nil", ErrInvalidVPASet, i)
		case vpa.Name == "":
			return fmt.Errorf("reconcile VerticalPodAutoscalers: %w: entry %d has no metadata.name", ErrInvalidVPASet, i)
		case seen[client.ObjectKeyFromObject(vpa)]:
			return fmt.Errorf("reconcile VerticalPodAutoscalers: %w: VerticalPodAutoscaler %s is listed twice", ErrInvalidVPASet, keyOf(vpa))
		}
		seen[client.ObjectKeyFromObject(vpa)] = true
	}
	return nil
}

// vpaNames lists the desired VPAs as sorted, comma-separated namespace/name keys, so
// that the message is stable across passes.
func vpaNames(desired []*vpav1.VerticalPodAutoscaler) string {
	names := make([]string, 0, len(desired))
	for _, vpa := range desired {
		names = append(names, keyOf(vpa))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func vpaError(err error) (metav1.Condition, error) {
	return falseCondition(ConditionVPAReady, ReasonVPAError, err.Error()), err
}
