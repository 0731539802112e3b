package testenv

import (
	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// NewScheme returns a scheme with the Kubernetes core types, CustomResourceDefinitions
// and the Go types of cert-manager (v1), mariadb-operator (v1alpha1), Gateway API (v1)
// and VerticalPodAutoscaler (v1) registered.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		cmv1.AddToScheme,
		mariadbv1alpha1.AddToScheme,
		gatewayv1.Install,
		vpav1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}
