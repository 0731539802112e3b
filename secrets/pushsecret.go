package secrets

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// EnsurePushSecret creates or updates the PushSecret ps, controlled by owner, through
// Server-Side Apply under apply.FieldManager (see apply.EnsureObject).
//
// The field manager owns only the fields ps sets. Leave spec.updatePolicy and
// spec.refreshInterval unset to keep ESO's server-side defaults (Replace, 1h): they are
// never claimed, and applying the same desired PushSecret again does not write, so ESO
// is not woken to re-push an unchanged credential. Build ps afresh on every pass; a
// PushSecret read back from the server carries those defaults and would claim them.
//
// PushSecret is ESO's v1alpha1 API, which may change between ESO releases. On return
// ps holds the server's copy. Errors name the PushSecret; a nil ps returns
// [ErrNilPushSecret].
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
	if err := apply.EnsureObject(ctx, c, scheme, owner, ps, apply.FieldManager); err != nil {
		return fmt.Errorf("ensure PushSecret: %w", err)
	}
	return nil
}
