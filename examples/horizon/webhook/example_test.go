package webhook_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/webhook"
)

// Example runs a Horizon through the webhooks' logic as the API server would, without
// a cluster: the Defaulter fills the store, the preselected login choice and the
// Gateway's namespace; the Validator refuses the extraConfig key that single sign-on
// already sets, naming both fields, and admits the Horizon once the key is gone.
func Example() {
	ctx := context.Background()
	h := &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Name: "horizon", Namespace: "openstack"},
		Spec: v1alpha1.HorizonSpec{
			Image:            "quay.io/openstack.kolla/horizon:2025.1-ubuntu-noble",
			SecretKey:        v1alpha1.SecretKeySpec{RemoteKey: "openstack/horizon/secret-key"},
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			WebSSO: &v1alpha1.WebSSOSpec{Enabled: true, Choices: []v1alpha1.WebSSOChoice{
				{ID: "oidc", Label: "Company single sign-on"},
				{ID: "credentials", Label: "Keystone credentials"},
			}},
			Gateway: &v1alpha1.GatewaySpec{
				ParentRef: v1alpha1.GatewayParentRef{Name: "public"},
				Hostname:  "dashboard.example.com",
			},
			ExtraConfig: map[string]string{
				"SESSION_TIMEOUT": "3600",
				"WEBSSO_CHOICES":  `(("credentials", "Keystone"),)`,
			},
		},
	}

	if err := (webhook.Defaulter{}).Default(ctx, h); err != nil {
		panic(err)
	}
	fmt.Println("secretStoreRef:", h.Spec.SecretStoreRef.Kind, h.Spec.SecretStoreRef.Name)
	fmt.Println("websso.initialChoice:", h.Spec.WebSSO.InitialChoice)
	fmt.Println("gateway.parentRef.namespace:", h.Spec.Gateway.ParentRef.Namespace)

	_, err := webhook.Validator{}.ValidateCreate(ctx, h)
	fmt.Println(err)

	delete(h.Spec.ExtraConfig, "WEBSSO_CHOICES")
	_, err = webhook.Validator{}.ValidateCreate(ctx, h)
	fmt.Println("admitted:", err == nil)
	// Output:
	// secretStoreRef: ClusterSecretStore openbao-cluster-store
	// websso.initialChoice: oidc
	// gateway.parentRef.namespace: openstack
	// Horizon.horizon.openstack.c5c3.io "horizon" is invalid: spec.extraConfig.WEBSSO_CHOICES: Forbidden: also set by spec.websso.choices; remove one of them
	// admitted: true
}
