package simulate

import (
	"context"
	"crypto/sha3"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// ESOManagedLabel is the label External Secrets Operator puts on the Secrets it writes;
// [MarkExternalSecretSynced] sets it to "true" as ESO does.
const ESOManagedLabel = "reconcile.external-secrets.io/managed"

// MarkExternalSecretSynced stands in for External Secrets Operator, which envtest does
// not run: it writes data, as fetched from the provider, into the ExternalSecret's
// target Secret and sets the ExternalSecret's Ready condition True (reason
// SecretSynced), with refreshTime, binding and syncedResourceVersion filled in (as ESO
// writes it: "<generation>-<SHA3-224 of the annotations and labels>").
//
// The target Secret is spec.target.name, or the ExternalSecret's name when that is
// empty, in the ExternalSecret's namespace. It follows spec.target.creationPolicy as ESO
// does: Owner (also the default) creates or replaces the Secret with the ExternalSecret
// as controller; Orphan does the same without an owner reference; Merge merges data into
// a Secret that must already exist; None writes no Secret. The template's type, labels
// and annotations are applied; its data templates are not rendered: data is written as
// given. It returns the updated ExternalSecret.
func MarkExternalSecretSynced(ctx context.Context, c client.Client, key client.ObjectKey, data map[string][]byte) (*esov1.ExternalSecret, error) {
	es := &esov1.ExternalSecret{}
	if err := c.Get(ctx, key, es); err != nil {
		return nil, fmt.Errorf("simulate: mark ExternalSecret %s synced: %w", key, err)
	}
	target := es.Spec.Target.Name
	if target == "" {
		target = es.Name
	}
	if err := writeTargetSecret(ctx, c, es, client.ObjectKey{Namespace: es.Namespace, Name: target}, data); err != nil {
		return nil, fmt.Errorf("simulate: mark ExternalSecret %s synced: %w", key, err)
	}
	return setExternalSecretCondition(ctx, c, key, corev1.ConditionTrue,
		esov1.ConditionReasonSecretSynced, SecretBackendSyncedMessage, target)
}

// MarkExternalSecretNotSynced sets the ExternalSecret's Ready condition False with
// reason (ESO uses SecretSyncedError when the provider cannot be read) and leaves any
// target Secret alone, as ESO does when a refresh fails.
func MarkExternalSecretNotSynced(ctx context.Context, c client.Client, key client.ObjectKey, reason string) (*esov1.ExternalSecret, error) {
	return setExternalSecretCondition(ctx, c, key, corev1.ConditionFalse, reason,
		"could not get secret data from provider", "")
}

// MarkExternalSecretEmpty stands in for ESO finding nothing at the ExternalSecret's
// remote keys under spec.target.deletionPolicy Delete: the target Secret is deleted (if
// it exists) and Ready is set True with reason SecretDeleted for the current spec, as
// ESO writes it. A restore ExternalSecret answers "the backend holds no backup" this
// way, so an operator may generate the credential for the first time.
func MarkExternalSecretEmpty(ctx context.Context, c client.Client, key client.ObjectKey) (*esov1.ExternalSecret, error) {
	es := &esov1.ExternalSecret{}
	if err := c.Get(ctx, key, es); err != nil {
		return nil, fmt.Errorf("simulate: mark ExternalSecret %s empty: %w", key, err)
	}
	if es.Spec.Target.DeletionPolicy != esov1.DeletionPolicyDelete {
		return nil, fmt.Errorf("simulate: mark ExternalSecret %s empty: deletionPolicy is %q; ESO deletes the target only under %q",
			key, es.Spec.Target.DeletionPolicy, esov1.DeletionPolicyDelete)
	}
	target := es.Spec.Target.Name
	if target == "" {
		target = es.Name
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: es.Namespace, Name: target}}
	if err := c.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("simulate: mark ExternalSecret %s empty: %w", key, err)
	}
	return setExternalSecretCondition(ctx, c, key, corev1.ConditionTrue,
		esov1.ConditionReasonSecretDeleted, "secret deleted: no data at the remote keys", target)
}

// MarkSecretStoreReady sets the Ready condition of the SecretStore at key True (reason
// Valid, capabilities ReadWrite), as ESO does once it has validated the store against
// its backend.
func MarkSecretStoreReady(ctx context.Context, c client.Client, key client.ObjectKey) (*esov1.SecretStore, error) {
	store := &esov1.SecretStore{}
	if err := setStoreCondition(ctx, c, key, store, &store.Status, corev1.ConditionTrue, esov1.ReasonStoreValid); err != nil {
		return nil, err
	}
	return store, nil
}

// MarkSecretStoreNotReady sets the Ready condition of the SecretStore at key False
// with reason (ESO uses ValidationFailed when the backend is unreachable).
func MarkSecretStoreNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason string) (*esov1.SecretStore, error) {
	store := &esov1.SecretStore{}
	if err := setStoreCondition(ctx, c, key, store, &store.Status, corev1.ConditionFalse, reason); err != nil {
		return nil, err
	}
	return store, nil
}

// MarkClusterSecretStoreReady is [MarkSecretStoreReady] for the ClusterSecretStore
// name.
func MarkClusterSecretStoreReady(ctx context.Context, c client.Client, name string) (*esov1.ClusterSecretStore, error) {
	store := &esov1.ClusterSecretStore{}
	if err := setStoreCondition(ctx, c, client.ObjectKey{Name: name}, store, &store.Status, corev1.ConditionTrue, esov1.ReasonStoreValid); err != nil {
		return nil, err
	}
	return store, nil
}

// MarkClusterSecretStoreNotReady is [MarkSecretStoreNotReady] for the
// ClusterSecretStore name.
func MarkClusterSecretStoreNotReady(ctx context.Context, c client.Client, name, reason string) (*esov1.ClusterSecretStore, error) {
	store := &esov1.ClusterSecretStore{}
	if err := setStoreCondition(ctx, c, client.ObjectKey{Name: name}, store, &store.Status, corev1.ConditionFalse, reason); err != nil {
		return nil, err
	}
	return store, nil
}

// writeTargetSecret writes data into the target Secret per the creation policy.
func writeTargetSecret(ctx context.Context, c client.Client, es *esov1.ExternalSecret, key client.ObjectKey, data map[string][]byte) error {
	policy := es.Spec.Target.CreationPolicy
	if policy == esov1.CreatePolicyNone {
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		secret := &corev1.Secret{}
		err := c.Get(ctx, key, secret)
		exists := err == nil
		switch {
		case err != nil && !apierrors.IsNotFound(err):
			return fmt.Errorf("get target Secret %s: %w", key, err)
		case !exists && policy == esov1.CreatePolicyMerge:
			return fmt.Errorf("target Secret %s does not exist and creationPolicy is Merge", key)
		case !exists:
			secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
		}
		if policy == esov1.CreatePolicyMerge {
			if secret.Data == nil {
				secret.Data = map[string][]byte{}
			}
			maps.Copy(secret.Data, data)
		} else {
			secret.Data = maps.Clone(data)
			secret.Type = corev1.SecretTypeOpaque
			if t := es.Spec.Target.Template; t != nil {
				if t.Type != "" {
					secret.Type = t.Type
				}
				secret.Labels = mergeStrings(secret.Labels, t.Metadata.Labels)
				secret.Annotations = mergeStrings(secret.Annotations, t.Metadata.Annotations)
			}
			secret.Labels = mergeStrings(secret.Labels, map[string]string{ESOManagedLabel: "true"})
			if policy == "" || policy == esov1.CreatePolicyOwner {
				if err := setControllerOwner(es, secret, c.Scheme()); err != nil {
					return err
				}
			}
		}
		if exists {
			return c.Update(ctx, secret)
		}
		return c.Create(ctx, secret)
	})
}

// setControllerOwner makes es the controller of secret.
func setControllerOwner(es *esov1.ExternalSecret, secret *corev1.Secret, scheme *runtime.Scheme) error {
	if err := controllerutil.SetControllerReference(es, secret, scheme); err != nil {
		return fmt.Errorf("set ExternalSecret %s/%s as owner of its target Secret: %w", es.Namespace, es.Name, err)
	}
	return nil
}

func mergeStrings(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]string{}
	}
	maps.Copy(dst, src)
	return dst
}

// setExternalSecretCondition writes the Ready condition of an ExternalSecret; a
// non-empty target also fills in refreshTime, syncedResourceVersion and binding.
func setExternalSecretCondition(ctx context.Context, c client.Client, key client.ObjectKey, status corev1.ConditionStatus, reason, msg, target string) (*esov1.ExternalSecret, error) {
	es := &esov1.ExternalSecret{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, es); err != nil {
			return err
		}
		now := metav1.Now()
		cond := esov1.ExternalSecretStatusCondition{
			Type: esov1.ExternalSecretReady, Status: status, Reason: reason, Message: msg, LastTransitionTime: now,
		}
		replaced := false
		for i := range es.Status.Conditions {
			if es.Status.Conditions[i].Type == esov1.ExternalSecretReady {
				if es.Status.Conditions[i].Status == status {
					cond.LastTransitionTime = es.Status.Conditions[i].LastTransitionTime
				}
				es.Status.Conditions[i], replaced = cond, true
			}
		}
		if !replaced {
			es.Status.Conditions = append(es.Status.Conditions, cond)
		}
		if target != "" {
			es.Status.RefreshTime = now
			es.Status.SyncedResourceVersion = esoResourceVersion(es.ObjectMeta)
			es.Status.Binding = corev1.LocalObjectReference{Name: target}
		}
		return c.Status().Update(ctx, es)
	})
	if err != nil {
		return nil, fmt.Errorf("simulate: set ExternalSecret %s Ready=%s: %w", key, status, err)
	}
	return es, nil
}

// externalSecretReady returns the Ready condition of es, nil when it has none.
func externalSecretReady(es *esov1.ExternalSecret) *esov1.ExternalSecretStatusCondition {
	for i := range es.Status.Conditions {
		if es.Status.Conditions[i].Type == esov1.ExternalSecretReady {
			return &es.Status.Conditions[i]
		}
	}
	return nil
}

// esoResourceVersion is what External Secrets Operator (v0.20) records in the
// status.syncedResourceVersion of an object it has synced, from the object's metadata
// as it read it: "<generation>-<hex SHA3-224 of the annotations and labels>" (ESO's
// ctrlutil.GetResourceVersion). A change of generation, of a label or of an annotation
// changes it.
func esoResourceVersion(m metav1.ObjectMeta) string {
	// ESO hashes the %+v text of an unexported struct of the two maps; fmt prints map
	// keys sorted, so the text depends only on the maps' contents.
	type meta struct {
		annotations map[string]string
		labels      map[string]string
	}
	text := fmt.Sprintf("%+v", meta{annotations: m.Annotations, labels: m.Labels})
	return fmt.Sprintf("%d-%x", m.Generation, sha3.Sum224([]byte(text)))
}

// setStoreCondition writes the Ready condition of a SecretStore or ClusterSecretStore
// (obj, whose status is st).
func setStoreCondition(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, st *esov1.SecretStoreStatus, status corev1.ConditionStatus, reason string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, obj); err != nil {
			return err
		}
		msg := "store validated"
		if status != corev1.ConditionTrue {
			msg = "unable to validate store"
		}
		cond := esov1.SecretStoreStatusCondition{
			Type: esov1.SecretStoreReady, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.Now(),
		}
		replaced := false
		for i := range st.Conditions {
			if st.Conditions[i].Type == esov1.SecretStoreReady {
				if st.Conditions[i].Status == status {
					cond.LastTransitionTime = st.Conditions[i].LastTransitionTime
				}
				st.Conditions[i], replaced = cond, true
			}
		}
		if !replaced {
			st.Conditions = append(st.Conditions, cond)
		}
		st.Capabilities = esov1.SecretStoreReadWrite
		return c.Status().Update(ctx, obj)
	})
	if err != nil {
		kind := esov1.SecretStoreKind
		if key.Namespace == "" {
			kind = esov1.ClusterSecretStoreKind
		}
		return fmt.Errorf("simulate: set %s %s Ready=%s: %w", kind, key, status, err)
	}
	return nil
}
