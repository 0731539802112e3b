package secrets

import (
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	mcbuilder "sigs.k8s.io/multicluster-runtime/pkg/builder"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

// ErrInvalidInputs reports [CRInputs] that [AddCRInputWatches] cannot watch: no
// NewList or no StoreRef.
var ErrInvalidInputs = errors.New("invalid CR inputs")

// CRInputs are what a custom resource kind T reads through External Secrets, for
// [AddCRInputWatches].
type CRInputs[T client.Object] struct {
	// NewList returns an empty list of the kind. Required.
	NewList func() client.ObjectList
	// StoreRef returns a CR's spec.secretStoreRef (nil: the default store). Required.
	StoreRef func(T) *commonv1.SecretStoreRefSpec
	// SecretRefs names the Secrets of its namespace a CR reads on every pass; nil
	// watches no Secret.
	SecretRefs func(T) []string
	// NamespaceScoped leaves out the ClusterSecretStore watch (the operator's Role
	// cannot read one).
	NamespaceScoped bool
}

// AddCRInputWatches adds to b the watches on what the CRs of cr's kind read, each on
// the management cluster and on the target cluster targets names: the Secrets of
// in.SecretRefs, through the [SecretRefIndex] it registers on mgr's local cache
// ([IndexSecretRefs], [SecretRefFanOut], [AddSecretWatches]), and the stores each CR's
// effective ref selects ([StoreRefFanOut], [AddStoreWatches]). A missing NewList or
// StoreRef is an error wrapping [ErrInvalidInputs]; other errors are the helpers'.
func AddCRInputWatches[T client.Object](ctx context.Context, b *mcbuilder.Builder, mgr mcmanager.Manager,
	targets multicluster.TargetClusterFunc, cr T, in CRInputs[T]) (*mcbuilder.Builder, error) {
	if in.NewList == nil || in.StoreRef == nil {
		return nil, fmt.Errorf("%w: CRInputs of %T need NewList and StoreRef", ErrInvalidInputs, cr)
	}
	local := mgr.GetLocalManager()
	scheme, c := local.GetScheme(), local.GetClient()
	var err error
	if in.SecretRefs != nil {
		if err = IndexSecretRefs(ctx, local.GetFieldIndexer(), cr, in.SecretRefs); err != nil {
			return nil, err
		}
		if b, err = AddSecretWatches(b, scheme, targets, SecretRefFanOut(c, in.NewList)); err != nil {
			return nil, err
		}
	}
	return AddStoreWatches(b, scheme, targets, in.NamespaceScoped, c, StoreRefFanOut(in.NewList, in.StoreRef))
}
