package httproute

// The permissions the helpers of this package need, generated into
// rbac/httproute/role.yaml (the ClusterRole reconciler-sdk-httproute) by make generate.
// list and watch are there for reads served by a manager's cache, which lists and
// watches the kind. README.md lists them per package.
//
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;patch;delete
