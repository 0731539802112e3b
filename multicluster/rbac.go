package multicluster

// The permissions this package needs on the management cluster, generated into
// rbac/multicluster/role.yaml (the ClusterRole reconciler-sdk-multicluster) by make
// generate: the kubeconfig provider lists and watches the registration Secrets (bind
// the role to the clusters namespace with a RoleBinding to narrow it), NewResolver reads
// the kube-system Namespace for the management cluster's identity, Cleanup records
// events and patches the finalizers of the CR (the CR kind's own rule, in the
// operator's role, grants that), the provider records a KubeconfigRefused event on a
// refused registration Secret, and a CR that moves to a target cluster has its
// children on the management cluster listed and deleted (the children kinds' own
// rules grant that). On a target cluster the kubeconfig's user needs what
// the children's packages list for the kinds written there, plus list on each swept
// kind. README.md lists them per package. RunOperator serves /metrics behind
// authentication and authorization by default (OperatorOptions.InsecureMetrics): it
// creates TokenReviews and SubjectAccessReviews for every scrape it has not seen in
// the last minutes.
//
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
