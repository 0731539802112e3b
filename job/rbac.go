package job

// The permissions the helpers of this package need, generated into
// rbac/job/role.yaml (the ClusterRole reconciler-sdk-job) by make generate.
// list and watch are there for reads served by a manager's cache, which lists and
// watches the kind. README.md lists them per package.
//
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch;create;patch
