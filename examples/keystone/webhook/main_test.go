package webhook_test

import (
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is kube-apiserver and etcd with the Keystone CRDs and config/webhook installed,
// pointing at the webhook server of the managers the tests start.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDSources: []testenv.CRDSource{}, CRDPaths: []string{"../config/crd/bases"},
		WebhookPaths: []string{"../config/webhook"}}, &env))
}

// minimal is a valid Keystone named keystone in namespace openstack with only the
// required fields set, changed by edits in order.
func minimal(edits ...func(*v1alpha1.Keystone)) *v1alpha1.Keystone {
	k := &v1alpha1.Keystone{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
		Spec: v1alpha1.KeystoneSpec{
			Image:     "registry.example/keystone:2025.1",
			Database:  v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}},
			Bootstrap: v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
		},
	}
	for _, edit := range edits {
		edit(k)
	}
	return k
}

// fernet sets spec.fernet's maxActiveKeys and rotationInterval.
func fernet(maxActiveKeys int32, interval string) func(*v1alpha1.Keystone) {
	return func(k *v1alpha1.Keystone) {
		k.Spec.Fernet.MaxActiveKeys = maxActiveKeys
		k.Spec.Fernet.RotationInterval = duration(interval)
	}
}

// credential sets spec.credential's maxActiveKeys and rotationInterval.
func credential(maxActiveKeys int32, interval string) func(*v1alpha1.Keystone) {
	return func(k *v1alpha1.Keystone) {
		k.Spec.Credential.MaxActiveKeys = maxActiveKeys
		k.Spec.Credential.RotationInterval = duration(interval)
	}
}

// token sets spec.token's expiration and allowExpiredWindow.
func token(expiration, window string) func(*v1alpha1.Keystone) {
	return func(k *v1alpha1.Keystone) {
		k.Spec.Token.Expiration = duration(expiration)
		k.Spec.Token.AllowExpiredWindow = duration(window)
	}
}

// duration parses s, a Go duration; it panics on a typo in a test.
func duration(s string) *metav1.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return &metav1.Duration{Duration: d}
}

// backend is a valid KeystoneIdentityBackend named corp-ldap in namespace openstack,
// changed by edits in order.
func backend(edits ...func(*v1alpha1.KeystoneIdentityBackend)) *v1alpha1.KeystoneIdentityBackend {
	b := &v1alpha1.KeystoneIdentityBackend{
		ObjectMeta: metav1.ObjectMeta{Name: "corp-ldap", Namespace: "openstack"},
		Spec: v1alpha1.KeystoneIdentityBackendSpec{
			KeystoneRef: v1alpha1.LocalObjectReference{Name: "keystone"},
			Domain:      "corp",
			Config: map[string]map[string]string{"ldap": {
				"url":    "ldaps://ldap.corp.example.com",
				"suffix": "dc=corp,dc=example,dc=com",
			}},
			PasswordSecretRef: &v1alpha1.SecretKeyRef{Name: "corp-ldap-bind", Key: "password"},
		},
	}
	for _, edit := range edits {
		edit(b)
	}
	return b
}
