package reconcile

import (
	"maps"

	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// IgnoreStatusWrites returns a predicate for the For() watch of a controller that
// drops the update events the controller causes itself — status writes and its own
// finalizer patches — and passes every update that needs a reconcile: a
// metadata.generation change (spec), a label change, an annotation change and the start
// of deletion (deletionTimestamp set). Create, delete and generic events pass.
func IgnoreStatusWrites() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		oldObj, newObj := e.ObjectOld, e.ObjectNew
		if oldObj == nil || newObj == nil {
			return false
		}
		return oldObj.GetGeneration() != newObj.GetGeneration() ||
			!maps.Equal(oldObj.GetLabels(), newObj.GetLabels()) ||
			!maps.Equal(oldObj.GetAnnotations(), newObj.GetAnnotations()) ||
			(oldObj.GetDeletionTimestamp() == nil && newObj.GetDeletionTimestamp() != nil)
	}}
}
