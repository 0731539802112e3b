package multicluster

import (
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	mcreconcile "sigs.k8s.io/multicluster-runtime/pkg/reconcile"
)

// ControllerOptions returns the options of a controller built on mgr with
// multicluster-runtime's builder, defaulted from the Controller configuration of the
// manager (ctrl.Options.Controller: MaxConcurrentReconciles, RecoverPanic,
// SkipNameValidation, ...). controller-runtime's own builder applies that configuration;
// the multicluster builder does not, so pass these to WithOptions:
//
//	mcbuilder.ControllerManagedBy(mgr).Named("dashboard").WithOptions(multicluster.ControllerOptions(mgr))
func ControllerOptions(mgr mcmanager.Manager) crcontroller.TypedOptions[mcreconcile.Request] {
	opts := crcontroller.TypedOptions[mcreconcile.Request]{}
	opts.DefaultFromConfig(mgr.GetLocalManager().GetControllerOptions())
	return opts
}
