package webhook_test

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/webhook"
)

// Example runs a Keystone through the webhooks' logic as the API server would, without
// a cluster: the Defaulter fills the store and the MariaDB's namespace; the Validator
// refuses a daily fernet rotation that keeps too few keys for tokens valid for an hour
// plus a 48-hour allow-expired window, naming the smallest safe maxActiveKeys, and
// admits it once enough keys are kept.
func Example() {
	ctx, k := context.Background(), &v1alpha1.Keystone{
		ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"},
		Spec: v1alpha1.KeystoneSpec{
			Image:     "registry.example/keystone:2025.1",
			Fernet:    v1alpha1.KeyRepositorySpec{MaxActiveKeys: 3, RotationInterval: &metav1.Duration{Duration: 24 * time.Hour}},
			Database:  v1alpha1.DatabaseSpec{MariaDBRef: v1alpha1.MariaDBRef{Name: "mariadb"}},
			Bootstrap: v1alpha1.BootstrapSpec{AdminPassword: v1alpha1.RemoteKeySpec{RemoteKey: "openstack/keystone/admin"}},
		},
	}

	if err := (webhook.Defaulter{}).Default(ctx, k); err != nil {
		panic(err)
	}
	fmt.Println("secretStoreRef:", k.Spec.SecretStoreRef.Kind, k.Spec.SecretStoreRef.Name)
	fmt.Println("database.mariaDBRef.namespace:", k.Spec.Database.MariaDBRef.Namespace)

	_, err := webhook.Validator{}.ValidateCreate(ctx, k)
	fmt.Println("invalid:", apierrors.IsInvalid(err))
	fmt.Println(err)

	k.Spec.Fernet.MaxActiveKeys = 5
	_, err = webhook.Validator{}.ValidateCreate(ctx, k)
	fmt.Println("admitted:", err == nil)
	// Output:
	// secretStoreRef: ClusterSecretStore openbao-cluster-store
	// database.mariaDBRef.namespace: openstack
	// invalid: true
	// Keystone.keystone.openstack.c5c3.io "keystone" is invalid: spec.fernet.maxActiveKeys: Invalid value: 3: unsafe key rotation: with maxActiveKeys 3 and a rotation every 24h0m0s a key is removed 24h0m0s after the rotation that retires it, but a token needs it for token expiration 1h0m0s + allow-expired window 48h0m0s; maxActiveKeys must be at least 5; or lengthen spec.fernet.rotationInterval, or shorten spec.token.expiration or spec.token.allowExpiredWindow
	// admitted: true
}
