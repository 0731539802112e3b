package child

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Reconcile makes the optional child ch of owner what ch.Desired says on the cluster
// behind c, and answers with its condition under the rules of the package
// documentation: nil Desired deletes the child the owner controls (True,
// ch.NotRequired); otherwise it is checked, probed (ch.NotServed), applied with owner as
// controller and judged (ch.Verdict).
func Reconcile[O client.Object](ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, ch Optional[O]) (reconcile.Outcome, error) {
	kind := kindOf[O](scheme)
	fail := func(err error) (reconcile.Outcome, error) { return failure(ch.Type, ch.Failed, err), err }
	if err := checkInput(scheme, owner); err != nil {
		return fail(fmt.Errorf("reconcile %s %s: %w", kind, ch.Key, err))
	}
	if isNil(ch.Desired) {
		if ch.Key.Name == "" {
			return fail(fmt.Errorf("reconcile %s %s: %w: the key has no name", kind, ch.Key, apply.ErrMissingName))
		}
		msg, err := remove(ctx, c, owner, newObject[O](), ch.Key, kind, ch.NotRequired.Message)
		if err != nil {
			return fail(fmt.Errorf("reconcile %s: %w", kind, err))
		}
		return reconcile.Done(reconcile.TrueCondition(ch.Type, ch.NotRequired.Reason, msg)), nil
	}
	if err := matchKey(ch.Key, ch.Desired); err != nil {
		return fail(fmt.Errorf("reconcile %s %s: %w", kind, ch.Key, err))
	}
	if ch.Check != nil {
		if err := ch.Check(ch.Desired); err != nil {
			return fail(fmt.Errorf("reconcile %s %s: %w", kind, ch.Key, err))
		}
	}
	if ch.NotServed != nil {
		served, out, err := probe[O](c, scheme, ch.Type, *ch.NotServed)
		if err != nil {
			return out, fmt.Errorf("reconcile %s %s: %w", kind, ch.Key, err)
		}
		if !served {
			return out, nil
		}
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, ch.Desired, apply.FieldManager); err != nil {
		return fail(fmt.Errorf("reconcile %s: %w", kind, err))
	}
	if ch.Verdict != nil {
		return ch.Verdict(ch.Desired), nil
	}
	return reconcile.Done(reconcile.TrueCondition(ch.Type, ch.Ready, fmt.Sprintf("%s %s applied", kind, ch.Key))), nil
}

// failure is the outcome of an error: False with reason failed and the error's text
// when the flow has a failure reason, else the zero outcome.
func failure(condType, failed string, err error) reconcile.Outcome {
	if failed == "" {
		return reconcile.Outcome{}
	}
	return reconcile.Done(reconcile.FalseCondition(condType, failed, err.Error()))
}
