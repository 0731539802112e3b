package child

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// remove deletes the child at key when owner controls it (apply.DeleteControlled: read
// into obj, preconditioned on the UID read) and returns the NotRequired message; one
// owner does not control is left in place and the message says so.
func remove(ctx context.Context, c client.Client, owner, obj client.Object, key client.ObjectKey, kind, notRequired string) (string, error) {
	foreign, err := apply.DeleteControlled(ctx, c, owner, obj, key)
	if err != nil {
		return "", err
	}
	if foreign {
		return fmt.Sprintf("%s; %s %s is not controlled by %s and was left in place", notRequired, kind, key, owner.GetName()), nil
	}
	return notRequired, nil
}
