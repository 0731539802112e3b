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

// EnsureDeployment applies deploy, controlled by owner, and reports whether it is rolled
// out and available ([IsDeploymentReady] on the server's answer); on return deploy holds
// the server's copy. A changed immutable selector deletes and re-creates the owner's
// Deployment (never one it does not control); a nil spec.replicas keeps the count an
// autoscaler set. See "Never taking what is not ours" and "Requests and caches" in the
// package documentation.
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

	if existing != nil && deploy.Spec.Replicas == nil && ownsReplicas(existing, apply.FieldManagerFor(c)) {
		deploy.Spec.Replicas = existing.Spec.Replicas
	}

	if err := apply.EnsureObject(ctx, c, scheme, owner, deploy, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure Deployment: %w", err)
	}
	return IsDeploymentReady(deploy), nil
}

// IsDeploymentReady reports whether deploy is rolled out and available: its status
// describes the current spec, updatedReplicas and readyReplicas reach spec.replicas
// (1 when nil) and Available is True. A nil Deployment is not ready; see "Readiness" in
// the package documentation.
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

// defaultReplicas is the API server's default of a Deployment's spec.replicas.
const defaultReplicas = 1

// ownsReplicas reports whether fieldManager set existing's spec.replicas: its Apply entry
// owns it, or the entry of EnsureObject's create (apply.CreatedEntry) owns it with a
// value other than the API server's default (that entry also holds the defaults the
// create got, and a default is no count the operator chose).
func ownsReplicas(existing *appsv1.Deployment, fieldManager string) bool {
	if ownsField(existing.ManagedFields, fieldManager, "f:spec", "f:replicas") {
		return true
	}
	created, ok := apply.CreatedEntry(existing, fieldManager)
	return ok && existing.Spec.Replicas != nil && *existing.Spec.Replicas != defaultReplicas &&
		entryOwns(created, "f:spec", "f:replicas")
}

// ownsField reports whether fieldManager owns the field at path (in fieldsV1 notation,
// e.g. "f:spec", "f:replicas") through an Apply operation.
func ownsField(entries []metav1.ManagedFieldsEntry, fieldManager string, path ...string) bool {
	for _, mf := range entries {
		if mf.Manager == fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply && entryOwns(mf, path...) {
			return true
		}
	}
	return false
}

// entryOwns reports whether the managedFields entry mf holds the field at path.
func entryOwns(mf metav1.ManagedFieldsEntry, path ...string) bool {
	if mf.FieldsV1 == nil {
		return false
	}
	var cur map[string]json.RawMessage
	if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &cur); err != nil {
		return false
	}
	for i, p := range path {
		raw, ok := cur[p]
		if !ok {
			return false
		}
		if i == len(path)-1 {
			return true
		}
		cur = nil
		if err := json.Unmarshal(raw, &cur); err != nil {
			return false
		}
	}
	return true
}
