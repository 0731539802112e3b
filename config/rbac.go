package config

// The permissions the helpers of this package need, generated into
// rbac/config/role.yaml (the ClusterRole reconciler-sdk-config) by make generate.
// list and watch are there for reads served by a manager's cache, which lists and
// watches the kind. README.md lists them per package.
//
// +kubebuilder:rbac:groups="",resources=configmaps;secrets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets;replicasets;controllerrevisions,verbs=list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=list;watch
