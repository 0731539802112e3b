package steptest_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/reconcile/steptest"
)

// ExampleSuite shows the shape of a step's table test. In a _test.go file the suite is
// run with its Run method:
//
//	func TestConfigStep(t *testing.T) {
//		steptest.Suite[*Gadget]{ ... }.Run(t, scheme, configStep)
//	}
//
// Here each case is evaluated directly to show what the kit reports.
func ExampleSuite() {
	suite := steptest.Suite[*Gadget]{
		"waits for the secret": {
			Object:         gadget(),
			ExpectedResult: ctrl.Result{RequeueAfter: secretPoll},
			ExpectedConditions: []metav1.Condition{{
				Type: "ConfigReady", Status: metav1.ConditionFalse, Reason: "WaitingForSecretKey",
				Message: `Secret "g-key" not found`, ObservedGeneration: 2,
			}},
		},
		"expects a result the step does not return": {
			Object:       gadget(),
			GivenObjects: []client.Object{keySecret()},
			ExpectedConditions: []metav1.Condition{{
				Type: "ConfigReady", Status: metav1.ConditionTrue, Reason: "ConfigRendered", ObservedGeneration: 2,
			}},
			ExpectedResult: ctrl.Result{RequeueAfter: secretPoll},
		},
	}
	for _, name := range []string{"waits for the secret", "expects a result the step does not return"} {
		r := suite[name].Evaluate(context.Background(), scheme, configStep)
		fmt.Printf("%s: %d problem(s)\n", name, len(r.Problems))
		for _, p := range r.Problems {
			fmt.Println("  ", p)
		}
	}
	// Output:
	// waits for the secret: 0 problem(s)
	// expects a result the step does not return: 1 problem(s)
	//    result = {Requeue:false RequeueAfter:0s Priority:<nil>}, want {Requeue:false RequeueAfter:15s Priority:<nil>}
}
