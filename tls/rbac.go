package tls

// The permissions the helpers of this package need, generated into
// rbac/tls/role.yaml (the ClusterRole reconciler-sdk-tls) by make generate.
// list and watch are there for reads served by a manager's cache, which lists and
// watches the kind. README.md lists them per package.
//
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch;create;patch
