package operator

import (
	"fmt"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// NewScheme returns a scheme of every kind the SDK reads or writes, then the kinds that
// add register (the operator's own AddToScheme functions): the Kubernetes built-ins,
// cert-manager v1, mariadb-operator v1alpha1, Gateway API v1, VerticalPodAutoscaler v1
// and the SDK's mirror of External Secrets (secrets/eso/v1, v1alpha1; ESO's own Go types
// share its kinds and cannot join this scheme). The error names the add that failed.
func NewScheme(add ...func(*runtime.Scheme) error) (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, kinds := range []struct {
		name string
		add  func(*runtime.Scheme) error
	}{
		{"client-go", clientgoscheme.AddToScheme},
		{"cert-manager v1", cmv1.AddToScheme},
		{"mariadb-operator v1alpha1", mariadbv1alpha1.AddToScheme},
		{"gateway-api v1", gatewayv1.Install},
		{"vertical-pod-autoscaler v1", vpav1.AddToScheme},
		{"external-secrets v1", esov1.AddToScheme},
		{"external-secrets v1alpha1", esov1alpha1.AddToScheme},
	} {
		if err := kinds.add(s); err != nil {
			return nil, fmt.Errorf("scheme: %s: %w", kinds.name, err)
		}
	}
	for i, f := range add {
		if err := f(s); err != nil {
			return nil, fmt.Errorf("scheme: add[%d]: %w", i, err)
		}
	}
	return s, nil
}
