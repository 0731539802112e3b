package policy

// The permissions the helpers of this package need, generated into
// rbac/policy/role.yaml (the ClusterRole reconciler-sdk-policy) by make generate.
// list and watch are there for reads served by a manager's cache, which lists and
// watches the kind. README.md lists them per package.
//
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
