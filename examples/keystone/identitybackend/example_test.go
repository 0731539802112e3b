package identitybackend_test

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
)

// A backend's configuration is checked without its bind password: one that sets
// [ldap] password itself is refused, since the password comes from its Secret only.
func ExampleCheckDomainConfig() {
	b := &v1alpha1.KeystoneIdentityBackend{
		ObjectMeta: metav1.ObjectMeta{Namespace: "openstack", Name: "corp-ldap"},
		Spec: v1alpha1.KeystoneIdentityBackendSpec{
			KeystoneRef: v1alpha1.LocalObjectReference{Name: "keystone"}, Domain: "corp",
			Config: map[string]map[string]string{"ldap": {"url": "ldaps://ldap.corp.example"}},
		},
	}
	fmt.Println(identitybackend.CheckDomainConfig(b))
	b.Spec.Config["ldap"]["password"] = "inline"
	err := identitybackend.CheckDomainConfig(b)
	fmt.Println(errors.Is(err, identitybackend.ErrBindPasswordInConfig))
	// Output:
	// <nil>
	// true
}
