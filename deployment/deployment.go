package deployment

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// EnsureDeployment creates or updates the Deployment deploy, controlled by owner,
// through Server-Side Apply under apply.FieldManager.
//
// It returns (true, nil) when all replicas are available ([IsDeploymentReady] on the
// server's answer), (false, nil) when the Deployment exists but is not ready yet, and
// (false, err) on failure. On return deploy holds the server's copy, status included.
//
// Pass a freshly built desired object on every call. A converged Deployment is not
// rewritten: the call costs one GET and one no-op PATCH. The GET before the apply
// serves exactly two purposes:
//
//   - spec.selector is immutable: when the desired selector differs from the stored
//     one, the stored Deployment is deleted (background propagation, so the garbage
//     collector removes its ReplicaSets and pods) and re-created from deploy. If the
//     old object is still there after the delete (a finalizer holds it), EnsureDeployment
//     returns (false, nil) and re-creates it on a later call; a Deployment that is being
//     deleted is never applied to.
//   - spec.replicas left nil hands the replica count to someone else, typically a
//     HorizontalPodAutoscaler. Server-Side Apply would reset a field that the SDK's
//     field manager owned and no longer applies to its default (1 replica); so while
//     the field manager still owns spec.replicas, the stored count is applied back
//     instead. Once the autoscaler writes the count (through the scale subresource),
//     ownership moves to it and EnsureDeployment stops sending the field.
func EnsureDeployment(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	deploy *appsv1.Deployment,
) (bool, error) {
	if deploy == nil {
		return false, fmt.Errorf("ensure Deployment: %w", apply.ErrNilObject)
	}
	desc := "Deployment " + keyOf(deploy)
	if err := apply.Validate(owner, deploy); err != nil {
		return false, fmt.Errorf("ensure %s: %w", desc, err)
	}

	existing := &appsv1.Deployment{}
	err := c.Get(ctx, client.ObjectKeyFromObject(deploy), existing)
	switch {
	case apierrors.IsNotFound(err):
		existing = nil
	case err != nil:
		return false, fmt.Errorf("ensure %s: get: %w", desc, err)
	case existing.DeletionTimestamp != nil:
		// Being deleted (by us after a selector change, or by someone else): wait until
		// it is gone, then create it afresh.
		return false, nil
	}

	if existing != nil && selectorChanged(existing.Spec.Selector, deploy.Spec.Selector) {
		gone, err := deleteForRecreate(ctx, c, existing)
		if err != nil {
			return false, fmt.Errorf("ensure %s: spec.selector changed from %q to %q, which is immutable: %w",
				desc, selectorString(existing.Spec.Selector), selectorString(deploy.Spec.Selector), err)
		}
		if !gone {
			return false, nil
		}
		existing = nil
	}

	if existing != nil && deploy.Spec.Replicas == nil && ownsField(existing.ManagedFields, "f:spec", "f:replicas") {
		deploy.Spec.Replicas = existing.Spec.Replicas
	}

	if err := apply.EnsureObject(ctx, c, scheme, owner, deploy, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure Deployment: %w", err)
	}
	return IsDeploymentReady(deploy), nil
}

// IsDeploymentReady reports whether deploy has at least spec.replicas ready replicas
// (1 when spec.replicas is nil) and an Available condition with status True. It is a
// pure function; a nil Deployment is not ready.
//
// These are the spec's two conditions and nothing more: status.observedGeneration and
// updatedReplicas are not compared, so during a rolling update the Deployment counts
// as ready while enough pods (old or new) serve.
func IsDeploymentReady(deploy *appsv1.Deployment) bool {
	if deploy == nil {
		return false
	}
	desired := int32(1)
	if deploy.Spec.Replicas != nil {
		desired = *deploy.Spec.Replicas
	}
	if deploy.Status.ReadyReplicas < desired {
		return false
	}
	for _, cond := range deploy.Status.Conditions {
		if cond.Type == appsv1.DeploymentAvailable {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// selectorChanged reports whether the stored selector and the desired one select
// differently. Both are compared in their canonical string form, so an empty and a nil
// matchExpressions list, or a different order of requirements, are not a change. A nil
// or invalid desired selector is not treated as a change: the apply reports it.
func selectorChanged(stored, desired *metav1.LabelSelector) bool {
	if desired == nil {
		return false
	}
	d, err := metav1.LabelSelectorAsSelector(desired)
	if err != nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(stored)
	if err != nil {
		return true
	}
	return s.String() != d.String()
}

func selectorString(sel *metav1.LabelSelector) string {
	if s, err := metav1.LabelSelectorAsSelector(sel); err == nil {
		return s.String()
	}
	return metav1.FormatLabelSelector(sel)
}

// deleteForRecreate deletes obj (background propagation, preconditioned on its UID)
// and reports whether it is gone. It is gone unless a finalizer holds it.
func deleteForRecreate(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	if err := apply.DeleteObject(ctx, c, obj); err != nil {
		return false, err
	}
	err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("get after delete: %w", err)
	}
	return false, nil
}

// ownsField reports whether the SDK's field manager owns the field at path (in fieldsV1
// notation, e.g. "f:spec", "f:replicas") through an Apply operation.
func ownsField(entries []metav1.ManagedFieldsEntry, path ...string) bool {
	for _, mf := range entries {
		if mf.Manager != apply.FieldManager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
			continue
		}
		var cur map[string]json.RawMessage
		if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &cur); err != nil {
			continue
		}
		found := true
		for i, p := range path {
			raw, ok := cur[p]
			if !ok {
				found = false
				break
			}
			if i == len(path)-1 {
				break
			}
			cur = nil
			if err := json.Unmarshal(raw, &cur); err != nil {
				found = false
				break
			}
		}
		if found {
			return true
		}
	}
	return false
}
