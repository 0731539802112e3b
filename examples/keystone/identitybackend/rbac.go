package identitybackend

// The permissions of the KeystoneIdentityBackend controller and of the IdentityBackends
// row, generated with the markers of package keystone into the keystone-operator
// ClusterRole (../config/rbac/role.yaml) by make generate. The row writes and prunes
// the domains and federation Secrets, and creates the session passphrase Secret (and
// patches it to add a provider's key), with the Secret verbs of the Keystone
// controller's role.
//
// +kubebuilder:rbac:groups=keystone.openstack.c5c3.io,resources=keystoneidentitybackends,verbs=get;list;watch
// +kubebuilder:rbac:groups=keystone.openstack.c5c3.io,resources=keystoneidentitybackends/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=keystone.openstack.c5c3.io,resources=keystones,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch
