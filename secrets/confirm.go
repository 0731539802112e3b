package secrets

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// Annotations [ConfirmPush] stamps on a PushSecret to tell a push of the source
// Secret's current version apart from an earlier push.
const (
	// PushOfVersionAnnotation holds the resourceVersion of the source Secret that the
	// PushSecret is to push. ConfirmPush sets it whenever the Secret changed.
	PushOfVersionAnnotation = "cobaltcore.c5c3.io/push-of-version"
	// PushSyncedBeforeAnnotation holds the PushSecret's status.syncedResourceVersion at
	// the moment PushOfVersionAnnotation was set. ESO writes that field only after a
	// successful push, from the labels and annotations it read, so a value other than
	// this one records a push made after the stamp.
	PushSyncedBeforeAnnotation = "cobaltcore.c5c3.io/push-synced-before"
)

// PushConfirmation is the answer of [ConfirmPush] and [PushConfirmationOf]: whether
// External Secrets Operator has confirmed a push of a given version of the source
// Secret, and if not, what the PushSecret reports instead.
type PushConfirmation struct {
	// Confirmed is true when the PushSecret's status records a successful push of the
	// source Secret at the stamped version or a later one.
	Confirmed bool
	// Pending is empty when Confirmed is set; otherwise a clause that says what the
	// PushSecret reports instead, written to follow "PushSecret <namespace>/<name>",
	// for example "is Ready=False (reason Errored)". It never holds a secret value.
	Pending string
}

// ConfirmPush applies want through [EnsurePushSecret], stamped with source's
// resourceVersion, and reports whether ESO has confirmed a push of that version or a
// later one ("Confirming a push" in the package documentation); want then holds the
// server's copy. A nil want returns [ErrNilPushSecret]; a source that is nil, has no
// resourceVersion, or is not the Secret want selects is refused with [ErrInvalidPushSource].
func ConfirmPush(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	want *esov1alpha1.PushSecret,
	source *corev1.Secret,
) (PushConfirmation, error) {
	if want == nil {
		return PushConfirmation{}, ErrNilPushSecret
	}
	key := client.ObjectKeyFromObject(want)
	if err := checkPushSource(want, source); err != nil {
		return PushConfirmation{}, fmt.Errorf("confirm push of PushSecret %s: %w", key, err)
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return PushConfirmation{}, fmt.Errorf("confirm push of PushSecret %s: %w", key, err)
	}
	current := &esov1alpha1.PushSecret{}
	err := c.Get(ctx, key, current)
	if err != nil && !apierrors.IsNotFound(err) {
		return PushConfirmation{}, fmt.Errorf("confirm push of PushSecret %s: get: %w", key, err)
	}
	version := source.ResourceVersion
	before := current.Status.SyncedResourceVersion
	stamped := err == nil && current.Annotations[PushOfVersionAnnotation] == version
	if stamped {
		before = current.Annotations[PushSyncedBeforeAnnotation]
	}
	annotations := make(map[string]string, len(want.Annotations)+2)
	maps.Copy(annotations, want.Annotations)
	annotations[PushOfVersionAnnotation] = version
	annotations[PushSyncedBeforeAnnotation] = before
	want.Annotations = annotations
	if err := EnsurePushSecret(ctx, c, scheme, owner, want); err != nil {
		return PushConfirmation{}, fmt.Errorf("confirm push of Secret %s/%s at version %s: %w",
			source.Namespace, source.Name, version, err)
	}
	if !stamped {
		return PushConfirmation{Pending: "has just been asked to push the Secret's current version"}, nil
	}
	return PushConfirmationOf(want, version), nil
}

// PushConfirmationOf judges ps as [ConfirmPush] stamped it, without an API call:
// Confirmed once ESO recorded a successful push of ps's current generation since the
// stamp of version, else Pending says what is missing. A nil ps is not confirmed.
func PushConfirmationOf(ps *esov1alpha1.PushSecret, version string) PushConfirmation {
	if ps == nil {
		return PushConfirmation{Pending: "does not exist"}
	}
	var ready *esov1alpha1.PushSecretStatusCondition
	for i := range ps.Status.Conditions {
		if ps.Status.Conditions[i].Type == esov1alpha1.PushSecretReady {
			ready = &ps.Status.Conditions[i]
		}
	}
	synced := ps.Status.SyncedResourceVersion
	gen, ok := syncedGeneration(synced)
	before, hasBefore := ps.Annotations[PushSyncedBeforeAnnotation]
	var pending string
	switch {
	case ps.Annotations[PushOfVersionAnnotation] != version:
		pending = fmt.Sprintf("is stamped with version %q of the Secret, not with its current version %q",
			ps.Annotations[PushOfVersionAnnotation], version)
	case !hasBefore:
		pending = "has no " + PushSyncedBeforeAnnotation + " annotation"
	case ready == nil:
		pending = "has not pushed yet"
	case ready.Status != corev1.ConditionTrue || ready.Reason != esov1alpha1.ReasonSynced:
		pending = fmt.Sprintf("is Ready=%s (reason %s)", ready.Status, ready.Reason)
	case !ok || gen != ps.Generation:
		pending = fmt.Sprintf("has not pushed its current generation %d (status.syncedResourceVersion %q)", ps.Generation, synced)
	case synced == before:
		pending = "has not pushed since the Secret changed (status.syncedResourceVersion unchanged)"
	default:
		return PushConfirmation{Confirmed: true}
	}
	return PushConfirmation{Pending: pending}
}

// checkPushSource refuses a source Secret ConfirmPush cannot stamp want with.
func checkPushSource(want *esov1alpha1.PushSecret, source *corev1.Secret) error {
	switch {
	case source == nil:
		return fmt.Errorf("%w: the source Secret is nil", ErrInvalidPushSource)
	case source.ResourceVersion == "":
		return fmt.Errorf("%w: Secret %s/%s has no resourceVersion (read it from the API server first)",
			ErrInvalidPushSource, source.Namespace, source.Name)
	case source.Namespace != want.Namespace:
		return fmt.Errorf("%w: Secret %s/%s is not in the PushSecret's namespace %q",
			ErrInvalidPushSource, source.Namespace, source.Name, want.Namespace)
	case want.Spec.Selector.Secret != nil && want.Spec.Selector.Secret.Name != "" &&
		want.Spec.Selector.Secret.Name != source.Name:
		return fmt.Errorf("%w: Secret %s/%s is not the Secret spec.selector.secret.name %q selects",
			ErrInvalidPushSource, source.Namespace, source.Name, want.Spec.Selector.Secret.Name)
	}
	return nil
}
