package secrets

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// EnsurePushSecret creates or updates the PushSecret ps, controlled by owner, through
// Server-Side Apply (apply.EnsureObject; "Writing" in the package documentation). Build
// ps afresh on every pass; for a generated credential build it with
// [GeneratedPushSecret]. On return ps holds the server's copy. A nil ps returns
// [ErrNilPushSecret], a nil scheme an error wrapping apply.ErrNilScheme.
func EnsurePushSecret(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	ps *esov1alpha1.PushSecret,
) error {
	if ps == nil {
		return ErrNilPushSecret
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return fmt.Errorf("ensure PushSecret %s: %w", client.ObjectKeyFromObject(ps), err)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, ps, apply.FieldManager); err != nil {
		return fmt.Errorf("ensure PushSecret: %w", err)
	}
	return nil
}

// GeneratedPush says where [GeneratedPushSecret] pushes a generated credential.
type GeneratedPush struct {
	// Name of the PushSecret; empty means the generated Secret's name.
	Name string
	// StoreRef is the store to push to; it is resolved with [EffectiveStoreRef], so
	// the zero value selects the shared ClusterSecretStore [OpenBaoClusterStoreName].
	StoreRef commonv1.SecretStoreRefSpec
	// RemoteKey is the provider secret the credential is written to (for OpenBao, its
	// path). Required.
	RemoteKey string
	// Property of the provider secret the credential is written to; empty writes the
	// provider secret as a whole, as ESO does.
	Property string
	// RefreshInterval is how often ESO pushes again; nil keeps ESO's default (1h).
	RefreshInterval *metav1.Duration
}

// GeneratedPushSecret builds the PushSecret that pushes gs.DataKey of gs to the backend,
// in gs.Key's namespace, with updatePolicy IfNotExists and deletionPolicy None ("Generated
// credentials" in the package documentation); apply it with [EnsurePushSecret]. Invalid
// input wraps [ErrInvalidGeneratedSecret], [ErrMissingStoreName] or [ErrUnknownStoreKind].
func GeneratedPushSecret(gs GeneratedSecret, push GeneratedPush) (*esov1alpha1.PushSecret, error) {
	if _, err := gs.validate(); err != nil {
		return nil, err
	}
	if push.RemoteKey == "" {
		return nil, fmt.Errorf("generated Secret %s: GeneratedPush.RemoteKey: %w: empty", gs.Key, ErrInvalidGeneratedSecret)
	}
	ref := EffectiveStoreRef(&push.StoreRef)
	switch {
	case ref.Kind != commonv1.ClusterSecretStoreKind && ref.Kind != commonv1.SecretStoreKind:
		return nil, fmt.Errorf("push generated Secret %s: spec.secretStoreRef.kind %q: %w", gs.Key, ref.Kind, ErrUnknownStoreKind)
	case ref.Name == "":
		return nil, fmt.Errorf("push generated Secret %s: spec.secretStoreRef.name: %w", gs.Key, ErrMissingStoreName)
	}
	name := push.Name
	if name == "" {
		name = gs.Key.Name
	}
	var refresh *metav1.Duration
	if push.RefreshInterval != nil {
		refresh = &metav1.Duration{Duration: push.RefreshInterval.Duration}
	}
	return &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: gs.Key.Namespace},
		Spec: esov1alpha1.PushSecretSpec{
			RefreshInterval: refresh,
			SecretStoreRefs: PushSecretStoreRefs(ref),
			UpdatePolicy:    esov1alpha1.PushSecretUpdatePolicyIfNotExists,
			DeletionPolicy:  esov1alpha1.PushSecretDeletionPolicyNone,
			Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: gs.Key.Name}},
			Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{
				SecretKey: gs.DataKey,
				RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: push.RemoteKey, Property: push.Property},
			}}},
		},
	}, nil
}
