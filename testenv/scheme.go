package testenv

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/c5c3/reconciler-sdk/operator"
)

// NewScheme returns operator.NewScheme (every kind the SDK reads or writes: the
// Kubernetes built-ins, cert-manager, mariadb-operator, Gateway API, VPA and the SDK's
// mirror of External Secrets) with CustomResourceDefinitions added, which the kit installs.
func NewScheme() *runtime.Scheme {
	s, err := operator.NewScheme(apiextensionsv1.AddToScheme)
	utilruntime.Must(err)
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
