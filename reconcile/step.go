package reconcile

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StepFunc does one step of a reconcile pass on obj, the custom resource being
// reconciled. It returns a zero result and nil error to let the pass go on; a non-zero
// result (RequeueAfter) or an error ends the pass. It must not return both: when it
// does, the error wins and the result is dropped (see [Pipeline.Run]).
//
// A reconciler's methods fit it directly:
//
//	func (r *DashboardReconciler) reconcileConfig(ctx context.Context, d *v1.Dashboard) (ctrl.Result, error)
type StepFunc[T Object] func(ctx context.Context, obj T) (ctrl.Result, error)

// groupKind says how a Step runs.
type groupKind uint8

const (
	single groupKind = iota
	sequential
	parallel
)

// String names the kind in validation errors.
func (k groupKind) String() string {
	switch k {
	case sequential:
		return "Sequential group"
	case parallel:
		return "Parallel group"
	default:
		return "step"
	}
}

// Step is one row of a pipeline table: a name, the condition type the step owns and the
// function that does the work, or a group of steps built with [Sequential] or
// [Parallel].
//
// A step with a Name is instrumented: its duration is observed on every exit (including
// a panic) under the sub_reconciler label Name, its errors are counted under the labels
// (Name, Condition), and its error is returned wrapped in a [*StepError]. A step without
// a Name (such as a prune step) runs bare: no metrics, error returned as is. Names are
// metric label values, so they come from the table and never from the object.
type Step[T Object] struct {
	// Name labels the step's metrics and errors; empty runs the step uninstrumented.
	Name string
	// Condition is the condition type the step owns (e.g. "ConfigReady"). It is the
	// condition_type label of the errors metric and, for a Parallel member, the one
	// condition merged back from the member's copy of the object. Optional for steps
	// outside a Parallel group.
	Condition string
	// Run does the work. Unused (and must be nil) on a group.
	Run StepFunc[T]
	// Owns lists one empty object of each kind the step creates and controls (its
	// children, e.g. &appsv1.Deployment{}). The pipeline gathers them ([Pipeline.Owned])
	// so the controller's watches, its children list and its tests derive from the
	// table instead of repeating it. Optional; a group's members declare their own.
	Owns []client.Object

	kind    groupKind
	members []Step[T]
}

// Sequential returns a group step that runs every member once, in order, whatever the
// others return. Member errors are joined with [JoinErrors] (the join is terminal only
// when every member's error is) and end the pass; with no error, the shortest non-zero
// requeue of the members is the group's result (a zero result when none asks for one).
// name may be empty; a named group is also measured as a whole. Members may be steps or
// groups.
func Sequential[T Object](name string, members ...Step[T]) Step[T] {
	return Step[T]{Name: name, kind: sequential, members: members}
}

// Parallel returns a group step that runs its members concurrently. Each member works on
// its own deep copy of the object and owns exactly one condition type (its Condition,
// required and unique in the group); once all members returned, each member's condition
// is merged back into the object, the failed members' as much as the others'. Every
// other change a member makes to its copy (spec, other status fields, other conditions)
// is discarded. Errors and requeues combine as in [Sequential]: one member's transient
// error keeps the group's error retryable even when another member's is terminal.
// Members must be single steps, not groups. Run returns only once every member has
// returned, so no member outlives the pass; a member that waits for something should
// honour its context.
func Parallel[T Object](name string, members ...Step[T]) Step[T] {
	return Step[T]{Name: name, kind: parallel, members: members}
}
