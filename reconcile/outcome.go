package reconcile

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Outcome is the one answer of the SDK's flows and gates (the optional-child flows, the
// database flows, the health check, the secret-store and target-cluster gates): the
// condition to set on the custom resource and the requeue the step should return.
//
// Every flow answers (Outcome, error) under the same rules:
//
//   - the Condition carries no observedGeneration: [Settle] stamps it from the object;
//   - a zero Condition (no Type) means "leave the condition as it is";
//   - on error, the Condition is the flow's False condition when the flow has a reason
//     for the failure (VPAError, CapabilityProbeFailed, ...), else zero, and Result is
//     zero: a step never returns a requeue together with an error;
//   - a non-zero Result asks the pass to stop here and come back (a gate that did not
//     pass, an object that is not ready yet); a zero Result lets the pass go on.
//
// A step hands an outcome over with [Settle]:
//
//	out, err := netpol.Flow(ctx, c, scheme, cr, key, desired)
//	return reconcile.Settle(cr, out, err)
type Outcome struct {
	// Condition is the condition to set; zero Type leaves the condition as it is.
	Condition metav1.Condition
	// Result is the requeue the step returns; zero lets the pass go on.
	Result ctrl.Result
}

// Continue reports whether the pass may go on after the outcome: no requeue was asked
// for.
func (o Outcome) Continue() bool { return o.Result.IsZero() }

// Settle sets out.Condition on obj ([ApplyCondition]: observedGeneration from obj, a
// zero condition changes nothing) and returns what the step returns: err alone when it
// is set, else out.Result.
func Settle[T Object](obj T, out Outcome, err error) (ctrl.Result, error) {
	ApplyCondition(obj, out.Condition)
	if err != nil {
		return ctrl.Result{}, err
	}
	return out.Result, nil
}

// Requeue returns an outcome that sets cond and asks for a requeue after d: the answer of
// a gate that did not pass or of an object that is not ready yet.
func Requeue(cond metav1.Condition, d time.Duration) Outcome {
	return Outcome{Condition: cond, Result: ctrl.Result{RequeueAfter: d}}
}

// Done returns an outcome that sets cond and lets the pass go on.
func Done(cond metav1.Condition) Outcome { return Outcome{Condition: cond} }

// TrueCondition and FalseCondition build the condition of an outcome: a condition type, status, reason and
// message, without observedGeneration ([Settle] stamps it).
func TrueCondition(condType, reason, message string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: metav1.ConditionTrue, Reason: reason, Message: message}
}

// FalseCondition is the False twin of [TrueCondition].
func FalseCondition(condType, reason, message string) metav1.Condition {
	return metav1.Condition{Type: condType, Status: metav1.ConditionFalse, Reason: reason, Message: message}
}
