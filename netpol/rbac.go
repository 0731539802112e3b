package netpol

// The permissions the helpers of this package need, generated into
// rbac/netpol/role.yaml (the ClusterRole reconciler-sdk-netpol) by make generate.
// list and watch are there for reads served by a manager's cache, which lists and
// watches the kind. README.md lists them per package.
//
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
