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

// deploymentGVK names the Deployment kind in errors about objects the owner does not
// control.
var deploymentGVK = appsv1.SchemeGroupVersion.WithKind("Deployment")

// EnsureDeployment creates or updates the Deployment deploy, controlled by owner,
// through Server-Side Apply under apply.FieldManager.
//
// It returns (true, nil) when the Deployment is rolled out and available
// ([IsDeploymentReady] on the server's answer), (false, nil) when it exists but is not
// ready yet (right after a change of its pod template, too), and (false, err) on
// failure. On return deploy holds the server's copy, status included.
//
// Pass a freshly built desired object on every call. A converged Deployment is not
// rewritten: through a plain client the call costs two GETs (its own, and the one
// apply.EnsureObject makes to check who controls the object) and one no-op PATCH;
// through an apply.Applier over a manager's cached client it sends no request at all
// (both reads are served by the Deployment informer and the Applier skips the converged
// apply). The GET before the apply serves exactly two purposes:
//
//   - spec.selector is immutable: when the desired selector differs from the stored
//     one, the stored Deployment is deleted (background propagation, so the garbage
//     collector removes its ReplicaSets and pods; preconditioned on the UID that was
//     read, so a Deployment re-created in between is left alone) and re-created from
//     deploy. If the old object is still there after the delete (a finalizer holds
//     it), EnsureDeployment returns (false, nil) and re-creates it on a later call; a
//     Deployment that is being deleted is never applied to.
//   - spec.replicas left nil hands the replica count to someone else, typically a
//     HorizontalPodAutoscaler. Server-Side Apply would reset a field that the
//     operator's field manager (apply.FieldManager, or an apply.Applier's own) owned
//     and no longer applies to its default (1 replica); so while that field manager
//     still owns spec.replicas, the stored count is applied back instead. Once the autoscaler writes the count (through the scale subresource),
//     ownership moves to it and EnsureDeployment stops sending the field.
//
// A Deployment of that name that owner does not control (installed by Helm or kubectl,
// or controlled by another object) is never applied to, deleted or re-created: the call
// fails with an error wrapping apply.ErrNotControlled (a *apply.NotControlledError that
// names the current controller, or says there is none) and sends no write. This holds
// for a selector change too, even when the Deployment carries apply.AdoptAnnotation:
// consent to adoption is no consent to deleting the Deployment and its pods; delete it
// by hand to let the owner create its own. One that owner does not control and that is
// being deleted is refused with an error wrapping apply.ErrBeingDeleted; the call
// creates the owner's Deployment once it is gone.
//
// A nil scheme is refused with apply.ErrNilScheme before any request.
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
	if err := apply.CheckScheme(scheme); err != nil {
		return false, fmt.Errorf("ensure %s: %w", desc, err)
	}
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
		if ctrlErr := apply.CheckControlled(c, owner, existing, deploymentGVK); ctrlErr != nil {
			return false, fmt.Errorf("ensure %s: %w (%s); retry once it is gone", desc, apply.ErrBeingDeleted, ctrlErr.Error())
		}
		// Being deleted (by us after a selector change, or by someone else): wait until
		// it is gone, then create it afresh.
		return false, nil
	}

	if existing != nil && selectorChanged(existing.Spec.Selector, deploy.Spec.Selector) {
		changed := fmt.Sprintf("spec.selector changed from %q to %q, which is immutable",
			selectorString(existing.Spec.Selector), selectorString(deploy.Spec.Selector))
		if err := apply.CheckControlled(c, owner, existing, deploymentGVK); err != nil {
			return false, fmt.Errorf("ensure %s: %s, and the Deployment is not deleted to re-create it: %w", desc, changed, err)
		}
		gone, err := deleteForRecreate(ctx, c, existing)
		if err != nil {
			return false, fmt.Errorf("ensure %s: %s: %w", desc, changed, err)
		}
		if !gone {
			return false, nil
		}
		existing = nil
	}

	if existing != nil && deploy.Spec.Replicas == nil && ownsField(existing.ManagedFields, apply.FieldManagerFor(c), "f:spec", "f:replicas") {
		deploy.Spec.Replicas = existing.Spec.Replicas
	}

	if err := apply.EnsureObject(ctx, c, scheme, owner, deploy, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure Deployment: %w", err)
	}
	return IsDeploymentReady(deploy), nil
}

// IsDeploymentReady reports whether deploy is rolled out and available. It is a pure
// function; a nil Deployment is not ready. With desired = spec.replicas (1 when nil),
// the Deployment is ready when all of these hold:
//
//   - status.observedGeneration >= metadata.generation: the status describes the
//     current spec;
//   - status.readyReplicas >= desired;
//   - status.updatedReplicas >= desired: every desired replica runs the current pod
//     template;
//   - an Available condition with status True.
//
// Right after a change of the pod template the old ReplicaSet still serves and the
// Deployment is still Available, but its status is older than the spec (and then its
// updated replicas are too few), so it is not ready until the rollout has replaced
// every replica. Row by row:
//
//	Scenario                                                 Result
//	spec.replicas nil                                        desired defaults to 1
//	no Available condition                                   false
//	readyReplicas < desired                                  false
//	readyReplicas >= desired and Available=True              true, unless a row below holds
//	status.observedGeneration < metadata.generation          false
//	status.updatedReplicas < desired                         false
func IsDeploymentReady(deploy *appsv1.Deployment) bool {
	if deploy == nil {
		return false
	}
	if deploy.Status.ObservedGeneration < deploy.Generation {
		return false
	}
	desired := int32(1)
	if deploy.Spec.Replicas != nil {
		desired = *deploy.Spec.Replicas
	}
	if deploy.Status.ReadyReplicas < desired || deploy.Status.UpdatedReplicas < desired {
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

// deleteForRecreate deletes obj, which the caller read and checked to be controlled by
// the owner (background propagation, preconditioned on the UID read, so an object
// re-created under the same name since is never removed), and reports whether it is
// gone. It is gone unless a finalizer holds it.
func deleteForRecreate(ctx context.Context, c client.Client, obj client.Object) (bool, error) {
	if obj.GetUID() == "" {
		return false, fmt.Errorf("delete for re-create: the object read carries no UID")
	}
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

// ownsField reports whether fieldManager owns the field at path (in fieldsV1 notation,
// e.g. "f:spec", "f:replicas") through an Apply operation.
func ownsField(entries []metav1.ManagedFieldsEntry, fieldManager string, path ...string) bool {
	for _, mf := range entries {
		if mf.Manager != fieldManager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.FieldsV1 == nil {
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
