package v1alpha1_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
)

// Example builds a Horizon that offers single sign-on next to Keystone credentials and
// scales between two and six pods, and prints it as a manifest.
func Example() {
	h := &v1alpha1.Horizon{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Horizon"},
		ObjectMeta: metav1.ObjectMeta{Name: "horizon", Namespace: "openstack"},
		Spec: v1alpha1.HorizonSpec{
			Image:            "quay.io/openstack.kolla/horizon:2025.1-ubuntu-noble",
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			SecretKey:        v1alpha1.SecretKeySpec{RemoteKey: "openstack/horizon/secret-key"},
			WebSSO: &v1alpha1.WebSSOSpec{
				Enabled: true,
				Choices: []v1alpha1.WebSSOChoice{
					{ID: "credentials", Label: "Keystone credentials"},
					{ID: "oidc", Label: "Company single sign-on"},
				},
				InitialChoice: "oidc",
				IDPMapping:    map[string]v1alpha1.IDPMapping{"oidc": {IDP: "company-idp", Protocol: "openid"}},
			},
			Autoscaling: &commonv1.AutoscalingSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 6},
		},
	}
	out, err := yaml.Marshal(h)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	// Output:
	// apiVersion: horizon.openstack.c5c3.io/v1alpha1
	// kind: Horizon
	// metadata:
	//   name: horizon
	//   namespace: openstack
	// spec:
	//   autoscaling:
	//     maxReplicas: 6
	//     minReplicas: 2
	//   image: quay.io/openstack.kolla/horizon:2025.1-ubuntu-noble
	//   keystoneEndpoint: http://keystone.openstack.svc:5000/v3
	//   secretKey:
	//     remoteKey: openstack/horizon/secret-key
	//   websso:
	//     choices:
	//     - id: credentials
	//       label: Keystone credentials
	//     - id: oidc
	//       label: Company single sign-on
	//     enabled: true
	//     idpMapping:
	//       oidc:
	//         idp: company-idp
	//         protocol: openid
	//     initialChoice: oidc
	// status: {}
}
