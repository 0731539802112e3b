package secrets

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

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

// pendingRestore names the ExternalSecret a restore waits for and why.
type pendingRestore struct {
	externalSecret client.ObjectKey
	why            string
}

// restoreSources lists the ExternalSecrets in restoreFrom's namespace that write
// restoreFrom. List them before reading restoreFrom itself: ESO writes the target
// Secret before the status that reports the sync.
func restoreSources(ctx context.Context, c client.Client, restoreFrom client.ObjectKey) ([]esov1.ExternalSecret, error) {
	list := &esov1.ExternalSecretList{}
	if err := c.List(ctx, list, client.InNamespace(restoreFrom.Namespace)); err != nil {
		return nil, fmt.Errorf("list ExternalSecrets in namespace %s that may restore Secret %s: %w",
			restoreFrom.Namespace, restoreFrom, err)
	}
	var sources []esov1.ExternalSecret
	for _, es := range list.Items {
		if writesSecret(&es, restoreFrom.Name) {
			sources = append(sources, es)
		}
	}
	return sources, nil
}

// restorePending returns the first of sources that has not yet answered whether the
// backend holds the credential, nil when all have (or there are none). syncedExists
// says whether the Secret they write exists (without the credential).
func restorePending(sources []esov1.ExternalSecret, syncedExists bool) *pendingRestore {
	for i := range sources {
		if why := restoreAnswer(&sources[i], syncedExists); why != "" {
			return &pendingRestore{externalSecret: client.ObjectKeyFromObject(&sources[i]), why: why}
		}
	}
	return nil
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
