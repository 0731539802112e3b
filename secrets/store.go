package secrets

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// OpenBaoClusterStoreName is the name of the shared ClusterSecretStore that fronts the
// OpenBao backend. A CR without spec.secretStoreRef routes its ExternalSecrets and
// PushSecrets through it (see [EffectiveStoreRef]).
const OpenBaoClusterStoreName = "openbao-cluster-store"

// EffectiveStoreRef resolves a CR's optional spec.secretStoreRef: nil or an empty kind
// (the CRD defaults kind, so only an object built in code has none; its name is then
// ignored) is the shared {ClusterSecretStore, openbao-cluster-store}, and so is a
// ClusterSecretStore without a name; any other ref is returned as is, so that
// [IsStoreRefReady] refuses a SecretStore without a name rather than guess one.
func EffectiveStoreRef(ref *commonv1.SecretStoreRefSpec) commonv1.SecretStoreRefSpec {
	if ref == nil || ref.Kind == "" {
		return commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: OpenBaoClusterStoreName}
	}
	out := *ref
	if out.Kind == commonv1.ClusterSecretStoreKind && out.Name == "" {
		out.Name = OpenBaoClusterStoreName
	}
	return out
}

// ESOSecretStoreRef builds the store reference of an ExternalSecret
// (spec.secretStoreRef) from a resolved store reference; pass the result of
// [EffectiveStoreRef].
func ESOSecretStoreRef(ref commonv1.SecretStoreRefSpec) esov1.SecretStoreRef {
	return esov1.SecretStoreRef{Kind: string(ref.Kind), Name: ref.Name}
}

// PushSecretStoreRefs builds the single-element store reference list of a PushSecret
// (spec.secretStoreRefs) from a resolved store reference; pass the result of
// [EffectiveStoreRef].
func PushSecretStoreRefs(ref commonv1.SecretStoreRefSpec) []esov1alpha1.PushSecretStoreRef {
	return []esov1alpha1.PushSecretStoreRef{{Kind: string(ref.Kind), Name: ref.Name}}
}

// IsStoreRefReady reports whether the store ref selects is Ready: a ClusterSecretStore
// by name, a SecretStore by name in namespace (the CR's). A missing store is not ready:
// (false, nil). A kind other than the two wraps [ErrUnknownStoreKind], a ref without a
// name [ErrMissingStoreName]; neither makes an API call. Pass an [EffectiveStoreRef].
func IsStoreRefReady(ctx context.Context, c client.Client, ref commonv1.SecretStoreRefSpec, namespace string) (bool, error) {
	if ref.Name == "" {
		return false, fmt.Errorf("check %s readiness: spec.secretStoreRef.name: %w", kindOrUnset(ref.Kind), ErrMissingStoreName)
	}
	switch ref.Kind {
	case commonv1.ClusterSecretStoreKind:
		return IsClusterSecretStoreReady(ctx, c, ref.Name)
	case commonv1.SecretStoreKind:
		return IsSecretStoreReady(ctx, c, ref.Name, namespace)
	default:
		return false, fmt.Errorf("check readiness of store %q: spec.secretStoreRef.kind %q: %w (want %s or %s)",
			ref.Name, ref.Kind, ErrUnknownStoreKind, commonv1.ClusterSecretStoreKind, commonv1.SecretStoreKind)
	}
}

// IsClusterSecretStoreReady reports whether the ClusterSecretStore name has a Ready
// condition with status True. A store that does not exist is not ready: (false, nil).
// Other API errors are returned wrapped with the store's kind and name.
func IsClusterSecretStoreReady(ctx context.Context, c client.Client, name string) (bool, error) {
	store := &esov1.ClusterSecretStore{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, store); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get ClusterSecretStore %s: %w", name, err)
	}
	return storeReady(store.Status), nil
}

// IsSecretStoreReady is the namespaced twin of [IsClusterSecretStoreReady]: it reports
// whether the SecretStore name in namespace has a Ready condition with status True. A
// store that does not exist is not ready: (false, nil). Other API errors are returned
// wrapped with the store's kind and namespace/name.
func IsSecretStoreReady(ctx context.Context, c client.Client, name, namespace string) (bool, error) {
	store := &esov1.SecretStore{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, store); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get SecretStore %s/%s: %w", namespace, name, err)
	}
	return storeReady(store.Status), nil
}

// storeReady reports whether a store status carries Ready=True.
func storeReady(status esov1.SecretStoreStatus) bool {
	for _, cond := range status.Conditions {
		if cond.Type == esov1.SecretStoreReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// kindOrUnset names a store kind in error texts.
func kindOrUnset(kind commonv1.SecretStoreRefKind) string {
	if kind == "" {
		return "secret store"
	}
	return string(kind)
}
