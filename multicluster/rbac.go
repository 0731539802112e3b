package multicluster

// The permissions this package needs on the management cluster, generated into
// rbac/multicluster/role.yaml (the ClusterRole reconciler-sdk-multicluster) by make
// generate: the kubeconfig provider lists and watches the registration Secrets (bind
// the role to the clusters namespace with a RoleBinding to narrow it), NewResolver reads
// the kube-system Namespace for the management cluster's identity, Cleanup records
// events and patches the finalizers of the CR (the CR kind's own rule, in the
// operator's role, grants that). On a target cluster the kubeconfig's user needs what
// the children's packages list for the kinds written there, plus list on each swept
// kind. README.md lists them per package.
//
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
