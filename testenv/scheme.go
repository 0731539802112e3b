package testenv

import (
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// NewScheme returns a scheme with the Kubernetes core types, CustomResourceDefinitions
// and the Go types of cert-manager (v1), mariadb-operator (v1alpha1), Gateway API (v1)
// and VerticalPodAutoscaler (v1) registered, plus the SDK's typed mirror of External
// Secrets Operator (ExternalSecret, SecretStore and ClusterSecretStore from
// secrets/eso/v1, PushSecret from secrets/eso/v1alpha1). ESO's own Go types use the
// same GroupVersionKinds, so they cannot be added to this scheme.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		cmv1.AddToScheme,
		mariadbv1alpha1.AddToScheme,
		gatewayv1.Install,
		vpav1.AddToScheme,
		esov1.AddToScheme,
		esov1alpha1.AddToScheme,
	} {
		utilruntime.Must(add(s))
	}
	return s
}

// NewSchemeWith returns [NewScheme] extended with the types that addToScheme register
// (your operator's API group, e.g. its generated AddToScheme). Pass it as
// [Options.Scheme], which replaces the kit's scheme rather than extending it, so that
// the kit's client knows both the kit's types and yours.
func NewSchemeWith(addToScheme ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := NewScheme()
	for i, add := range addToScheme {
		if err := add(s); err != nil {
			return nil, fmt.Errorf("testenv: addToScheme[%d]: %w", i, err)
		}
	}
	return s, nil
}
