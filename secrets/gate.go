package secrets

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
)

// Condition reasons GateStoreReady sets on the caller's condition.
const (
	// ReasonSecretStoreNotReady is the reason when the selected store does not exist or
	// its Ready condition is not True.
	ReasonSecretStoreNotReady = "SecretStoreNotReady"
	// ReasonClusterSecretStoreUnsupported is the reason when a namespace-scoped operator
	// is asked to gate on a ClusterSecretStore, which its Role cannot grant.
	ReasonClusterSecretStoreUnsupported = "ClusterSecretStoreUnsupported"
)

// Message formats of the conditions GateStoreReady sets.
const (
	// MessageSecretStoreNotReady formats the SecretStoreNotReady message with the store
	// kind and name.
	MessageSecretStoreNotReady = "%s %q is not ready; upstream secret backend unreachable"
	// MessageClusterSecretStoreUnsupported formats the ClusterSecretStoreUnsupported
	// message with the store name and the CR's namespace.
	MessageClusterSecretStoreUnsupported = "ClusterSecretStore %q cannot be read by a namespace-scoped operator; " +
		"set spec.secretStoreRef to a SecretStore in namespace %q"
)

// GateStoreReady is the store-ref-aware readiness gate a reconciler runs before it
// reads ESO-synced Secrets, so an outage of the secret backend surfaces on the CR even
// while each ExternalSecret still reports the Ready of its last successful sync.
//
// ref is the CR's store reference (resolved with [EffectiveStoreRef]; an unresolved
// ref is resolved here), namespace the CR's namespace, and conds, generation and
// conditionType the condition the gate reports through.
//
//   - With namespaceScoped set (an operator started with --namespace, whose Role cannot
//     grant a cluster-scoped kind), a ref of kind ClusterSecretStore is refused without
//     any client call: conditionType is set False with reason
//     [ReasonClusterSecretStoreUnsupported] and the message
//     `ClusterSecretStore "<name>" cannot be read by a namespace-scoped operator; set
//     spec.secretStoreRef to a SecretStore in namespace "<namespace>"`, and the gate
//     returns (false, nil). The refusal clears once the ref selects a SecretStore.
//   - A store that is missing or not Ready sets conditionType False with reason
//     [ReasonSecretStoreNotReady] and the message `<Kind> "<name>" is not ready; upstream
//     secret backend unreachable`, and returns (false, nil): the caller requeues.
//   - A Ready store returns (true, nil) and leaves conds alone: the caller's next gate
//     (the synced Secret) owns the True condition.
//   - An API error, an unknown kind or a missing name returns (false, err) without
//     touching conds; a nil conds returns an error wrapping [ErrNilConditions].
//
// Every condition carries observedGeneration = generation; lastTransitionTime moves
// only when the status flips.
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
	ref = EffectiveStoreRef(&ref)
	logger := log.FromContext(ctx).WithValues("storeKind", ref.Kind, "storeName", ref.Name)

	if namespaceScoped && ref.Kind == commonv1.ClusterSecretStoreKind {
		meta.SetStatusCondition(conds, metav1.Condition{
			Type:               conditionType,
			Status:             metav1.ConditionFalse,
			ObservedGeneration: generation,
			Reason:             ReasonClusterSecretStoreUnsupported,
			Message:            fmt.Sprintf(MessageClusterSecretStoreUnsupported, ref.Name, namespace),
		})
		logger.V(1).Info("refusing ClusterSecretStore in namespace-scoped mode", "namespace", namespace)
		return false, nil
	}

	ready, err := IsStoreRefReady(ctx, c, ref, namespace)
	if err != nil {
		return false, err
	}
	if ready {
		return true, nil
	}
	meta.SetStatusCondition(conds, metav1.Condition{
		Type:               conditionType,
		Status:             metav1.ConditionFalse,
		ObservedGeneration: generation,
		Reason:             ReasonSecretStoreNotReady,
		Message:            fmt.Sprintf(MessageSecretStoreNotReady, ref.Kind, ref.Name),
	})
	logger.V(1).Info("secret store not ready", "namespace", namespace)
	return false, nil
}
