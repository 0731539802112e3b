package secrets

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// PollInterval is how often a caller polls what this package waits for: a secret store
// or an ExternalSecret that is not ready yet, and a pending restore
// ([SecretRestorePending]). Return ctrl.Result{RequeueAfter: PollInterval}.
const PollInterval = 15 * time.Second

// ReasonRestorePending is the condition reason for a credential that
// [EnsureGeneratedSecret] does not generate yet because an ExternalSecret may still
// restore it ([SecretRestorePending]).
const ReasonRestorePending = "RestorePending"

// MessageRestorePending formats the message of a [ReasonRestorePending] condition with
// GeneratedSecret.RestoreFrom.
const MessageRestorePending = "waiting for External Secrets Operator to restore Secret %s from the secret backend; " +
	"no new credential is generated while the backend may still hold one"

// RestoreCheck is what [CheckRestore] found for a Secret an ExternalSecret may
// restore from the secret backend.
type RestoreCheck struct {
	// Secret is the Secret as read; nil when it does not exist.
	Secret *corev1.Secret
	// Pending names the first ExternalSecret that writes the Secret and has not yet
	// answered whether the backend holds anything for it; nil when every such
	// ExternalSecret has answered that it does not, or none exists.
	Pending *client.ObjectKey
	// Why says what Pending reports instead of an answer, such as "has not synced
	// yet"; empty when Pending is nil.
	Why string
}

// CheckRestore reads, past c's cache, the ExternalSecrets in restoreFrom's namespace that
// write the Secret restoreFrom, then that Secret, and tells whether a credential missing
// elsewhere may be created from scratch ("First install or pending restore" in the
// package documentation): generate only when Pending is nil; else report Why and
// requeue after [PollInterval]. Errors name the Secret and carry no Secret data.
func CheckRestore(ctx context.Context, c client.Client, restoreFrom client.ObjectKey) (RestoreCheck, error) {
	list := &esov1.ExternalSecretList{}
	if err := apply.ListUncached(ctx, c, list, client.InNamespace(restoreFrom.Namespace)); err != nil {
		return RestoreCheck{}, fmt.Errorf("list ExternalSecrets in namespace %s that may restore Secret %s: %w",
			restoreFrom.Namespace, restoreFrom, err)
	}
	synced := &corev1.Secret{}
	err := apply.GetUncached(ctx, c, restoreFrom, synced)
	switch {
	case apierrors.IsNotFound(err):
		synced = nil
	case err != nil:
		return RestoreCheck{}, fmt.Errorf("read synced copy Secret %s: %w", restoreFrom, err)
	}
	check := RestoreCheck{Secret: synced}
	for i := range list.Items {
		es := &list.Items[i]
		if !writesSecret(es, restoreFrom.Name) {
			continue
		}
		if why := restoreAnswer(es, synced != nil); why != "" {
			key := client.ObjectKeyFromObject(es)
			check.Pending, check.Why = &key, why
			break
		}
	}
	return check, nil
}

// writesSecret reports whether es can write the Secret name: its target is name, it
// creates or merges into a Secret (creationPolicy is not None) and it is not being
// deleted.
func writesSecret(es *esov1.ExternalSecret, name string) bool {
	target := es.Spec.Target.Name
	if target == "" {
		target = es.Name
	}
	return target == name && es.Spec.Target.CreationPolicy != esov1.CreatePolicyNone &&
		es.DeletionTimestamp == nil
}

// restoreAnswer returns "" when es has answered, in a sync of its current spec made
// after it was created, that the backend does not hold the credential its target
// lacks: Ready=True with reason SecretDeleted (the backend has nothing for it and ESO
// removed the target), or with reason SecretSynced while the target exists (ESO wrote
// what the backend has). A SecretSynced target that does not exist was deleted after
// the sync, and ESO has not written it again yet. Otherwise it says what es reports.
func restoreAnswer(es *esov1.ExternalSecret, syncedExists bool) string {
	if synced, why := externalSecretSynced(es); !synced {
		return why
	}
	switch reason := readyCondition(es).Reason; {
	case reason == esov1.ConditionReasonSecretSynced && !syncedExists:
		return "is Ready=True (SecretSynced) but its target Secret does not exist: it was deleted after the sync"
	case reason != esov1.ConditionReasonSecretSynced && reason != esov1.ConditionReasonSecretDeleted:
		return fmt.Sprintf("is Ready=True with reason %s, which does not say what the backend holds", reason)
	}
	if es.Status.RefreshTime.Before(&es.CreationTimestamp) {
		return "reports a sync from before it was created (a status restored with the object)"
	}
	return ""
}
