package child

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// probe asks c's RESTMapper whether the cluster serves O's kind. When it does not, or
// cannot tell, it returns the outcome to answer: False with notServed (nil error), or
// False capability.ReasonCapabilityProbeFailed with the probe's error.
func probe[O client.Object](c client.Client, scheme *runtime.Scheme, condType string, notServed Reason) (served bool, out reconcile.Outcome, err error) {
	gvk, err := gvkOf[O](scheme)
	if err != nil {
		return false, reconcile.Outcome{}, err
	}
	served, err = capability.IsKindServed(c.RESTMapper(), gvk)
	switch {
	case err != nil:
		return false, reconcile.Done(reconcile.FalseCondition(condType, capability.ReasonCapabilityProbeFailed,
			fmt.Sprintf("cannot tell whether the cluster serves %s: discovery failed: %v", gvk.GroupKind(), err))), err
	case !served:
		return false, reconcile.Done(reconcile.FalseCondition(condType, notServed.Reason, notServed.Message)), nil
	}
	return true, reconcile.Outcome{}, nil
}
