package names_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
)

// Every child's name follows from the Keystone's name: the identity-backend controller
// and the rotation pods find them without reading the Keystone's status.
func Example() {
	k := &v1alpha1.Keystone{ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: "keystone"}}
	fmt.Println(names.AdminPasswordSecretName(k))
	fmt.Println(names.FernetKeysSecretName(k))
	fmt.Println(names.Endpoint(k))
	// Output:
	// keystone-admin-password
	// keystone-fernet-keys
	// http://keystone.openstack.svc:5000
}
