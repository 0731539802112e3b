package satellite

// The permissions the helpers of this package need, generated into
// rbac/satellite/role.yaml (the ClusterRole reconciler-sdk-satellite) by make generate.
// list and watch are there for reads served by a manager's cache, which lists and
// watches the kind. The parent kind and the satellite kind are the operator's own and
// not listed here. README.md lists them per package.
//
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
