package database

// The permissions the helpers of this package need, generated into
// rbac/database/role.yaml (the ClusterRole reconciler-sdk-database) by make generate.
// list and watch are there for reads served by a manager's cache, which lists and
// watches the kind; events are those of ProvisionParams.Recorder. README.md lists them
// per package.
//
// +kubebuilder:rbac:groups=k8s.mariadb.com,resources=mariadbs,verbs=get;list;watch
// +kubebuilder:rbac:groups=k8s.mariadb.com,resources=databases;users;grants,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
