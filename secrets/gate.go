package secrets

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Condition reasons the store gates set on the caller's condition.
const (
	// ReasonSecretStoreNotReady: the selected store does not exist or is not Ready.
	ReasonSecretStoreNotReady = "SecretStoreNotReady"
	// ReasonClusterSecretStoreUnsupported: a namespace-scoped operator was asked to gate
	// on a ClusterSecretStore, which its Role cannot grant.
	ReasonClusterSecretStoreUnsupported = "ClusterSecretStoreUnsupported"
)

// Message formats of the conditions the store gates set.
const (
	// MessageSecretStoreNotReady formats the SecretStoreNotReady message with the store
	// kind and name.
	MessageSecretStoreNotReady = "%s %q is not ready; upstream secret backend unreachable"
	// MessageClusterSecretStoreUnsupported formats the ClusterSecretStoreUnsupported
	// message with the store name and the CR's namespace.
	MessageClusterSecretStoreUnsupported = "ClusterSecretStore %q cannot be read by a namespace-scoped operator; " +
		"set spec.secretStoreRef to a SecretStore in namespace %q"
)

// StoreGate is the secret-store gate ("Gates" in the package documentation) for obj, a
// CR holding ref, in the Outcome shape: a Ready store gives the zero Outcome; a missing
// or not-Ready one, or a ClusterSecretStore for a namespaceScoped operator (refused
// without an API call), a False conditionType and a requeue after [PollInterval]. An API
// error, an unknown kind, a missing name or a nil obj gives (zero Outcome, err).
func StoreGate(
	ctx context.Context,
	c client.Client,
	obj client.Object,
	conditionType string,
	ref commonv1.SecretStoreRefSpec,
	namespaceScoped bool,
) (reconcile.Outcome, error) {
	ref = EffectiveStoreRef(&ref)
	if isNil(obj) {
		return reconcile.Outcome{}, fmt.Errorf("gate on %s %q: %w", ref.Kind, ref.Name, ErrNilObject)
	}
	namespace := obj.GetNamespace()
	logger := log.FromContext(ctx).WithValues("storeKind", ref.Kind, "storeName", ref.Name, "namespace", namespace)
	if namespaceScoped && ref.Kind == commonv1.ClusterSecretStoreKind {
		logger.V(1).Info("refusing ClusterSecretStore in namespace-scoped mode")
		return reconcile.Requeue(reconcile.FalseCondition(conditionType, ReasonClusterSecretStoreUnsupported,
			fmt.Sprintf(MessageClusterSecretStoreUnsupported, ref.Name, namespace)), PollInterval), nil
	}
	ready, err := IsStoreRefReady(ctx, c, ref, namespace)
	if err != nil || ready {
		return reconcile.Outcome{}, err
	}
	logger.V(1).Info("secret store not ready")
	return reconcile.Requeue(reconcile.FalseCondition(conditionType, ReasonSecretStoreNotReady,
		fmt.Sprintf(MessageSecretStoreNotReady, ref.Kind, ref.Name)), PollInterval), nil
}

// GateStoreReady is [StoreGate] writing through conds: a refusal or a store that is not
// ready sets conditionType on conds (observedGeneration = generation) and returns
// (false, nil); a Ready store returns (true, nil) and leaves conds alone; an error
// returns (false, err) and leaves conds alone, a nil conds one wrapping [ErrNilConditions].
func GateStoreReady(
	ctx context.Context,
	c client.Client,
	ref commonv1.SecretStoreRefSpec,
	namespace string,
	namespaceScoped bool,
	conds *[]metav1.Condition,
	generation int64,
	conditionType string,
) (bool, error) {
	if conds == nil {
		return false, fmt.Errorf("gate on %s %q: %w", kindOrUnset(ref.Kind), ref.Name, ErrNilConditions)
	}
	owner := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace}}
	out, err := StoreGate(ctx, c, owner, conditionType, ref, namespaceScoped)
	if err != nil {
		return false, err
	}
	if out.Condition.Type != "" {
		cond := out.Condition
		cond.ObservedGeneration = generation
		meta.SetStatusCondition(conds, cond)
	}
	return out.Continue(), nil
}
