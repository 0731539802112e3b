package v1alpha1_test

import (
	"fmt"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// A Keystone and its identity backends are reconcile.Objects: the pipeline sets their
// conditions through the Conditions accessor.
func Example() {
	k := &v1alpha1.Keystone{}
	k.Name, k.Generation = "keystone", 3
	reconcile.MarkTrue(k, "DatabaseReady", "DatabaseSynced", "")
	b := &v1alpha1.KeystoneIdentityBackend{Spec: v1alpha1.KeystoneIdentityBackendSpec{
		KeystoneRef: v1alpha1.LocalObjectReference{Name: k.Name}, Domain: "corp"}}
	reconcile.MarkFalse(b, "DomainReady", "WaitingForKeystone", "Keystone keystone is not ready")
	fmt.Println(k.Status.Conditions[0].Type, k.Status.Conditions[0].ObservedGeneration)
	fmt.Println(b.Spec.Domain, b.Status.Conditions[0].Reason)
	// Output:
	// DatabaseReady 3
	// corp WaitingForKeystone
}
