package child

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// ReconcileSet makes the children of O's kind that owner controls in its namespace
// exactly set.Desired, and answers with one condition under the rules of the package
// documentation: it probes (set.NotServed), applies every desired child with owner as
// controller, then deletes the owner's children that set.Desired does not name.
func ReconcileSet[O client.Object](ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, set Set[O]) (reconcile.Outcome, error) {
	kinds := plural(kindOf[O](scheme))
	fail := func(err error) (reconcile.Outcome, error) {
		err = fmt.Errorf("reconcile %s: %w", kinds, err)
		return failure(set.Type, set.Failed, err), err
	}
	if err := checkInput(scheme, owner); err != nil {
		return fail(err)
	}
	if err := checkSet(owner, set.Desired); err != nil {
		return fail(err)
	}
	list, err := newList[O](scheme)
	if err != nil {
		return fail(err)
	}
	if set.NotServed != nil {
		served, out, err := probe[O](c, scheme, set.Type, *set.NotServed)
		switch {
		case err != nil:
			return out, fmt.Errorf("reconcile %s: %w", kinds, err)
		case !served && len(set.Desired) == 0:
			return reconcile.Done(reconcile.TrueCondition(set.Type, set.NotRequired.Reason, set.NotRequired.Message)), nil
		case !served:
			return out, nil
		}
	}
	for _, obj := range set.Desired {
		if err := apply.EnsureObject(ctx, c, scheme, owner, obj, apply.FieldManager); err != nil {
			return fail(err)
		}
	}
	if err := prune(ctx, c, owner, list, set.Desired); err != nil {
		return fail(err)
	}
	if len(set.Desired) == 0 {
		return reconcile.Done(reconcile.TrueCondition(set.Type, set.NotRequired.Reason, set.NotRequired.Message)), nil
	}
	return reconcile.Done(reconcile.TrueCondition(set.Type, set.Ready,
		fmt.Sprintf("%s applied: %s", kindOf[O](scheme), Names(set.Desired)))), nil
}

// Names lists objs as sorted, comma-separated namespace/name keys (name alone when
// cluster-scoped), so that a message naming them is stable across passes; nil entries
// are skipped.
func Names[O client.Object](objs []O) string {
	names := make([]string, 0, len(objs))
	for _, obj := range objs {
		if isNil(obj) {
			continue
		}
		names = append(names, strings.TrimPrefix(client.ObjectKeyFromObject(obj).String(), "/"))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
