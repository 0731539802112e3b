package operator_test

import (
	"errors"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/operator"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// gadgetGV is the API group of the operator's own kind in these tests.
var gadgetGV = schema.GroupVersion{Group: "gadgets.example.com", Version: "v1"}

// addGadget registers the operator's own kind, as a generated AddToScheme does.
func addGadget(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(gadgetGV.WithKind("Gadget"), &corev1.ConfigMap{})
	return nil
}

// NewScheme knows every kind the SDK reads or writes, and the operator's own.
func TestNewScheme(t *testing.T) {
	s, err := operator.NewScheme(addGadget)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("Secret"),
		appsv1.SchemeGroupVersion.WithKind("Deployment"),
		cmv1.SchemeGroupVersion.WithKind("Certificate"),
		mariadbv1alpha1.GroupVersion.WithKind("Database"),
		{Group: gatewayv1.GroupName, Version: "v1", Kind: "HTTPRoute"},
		vpav1.SchemeGroupVersion.WithKind("VerticalPodAutoscaler"),
		esov1.GroupVersion.WithKind("ExternalSecret"),
		esov1.GroupVersion.WithKind("ClusterSecretStore"),
		esov1alpha1.GroupVersion.WithKind("PushSecret"),
		gadgetGV.WithKind("Gadget"),
	} {
		if !s.Recognizes(want) {
			t.Errorf("the scheme does not know %s", want)
		}
	}
}

// A failing AddToScheme is returned, naming its position.
func TestNewSchemeFails(t *testing.T) {
	boom := errors.New("boom")
	_, err := operator.NewScheme(addGadget, func(*runtime.Scheme) error { return boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "add[1]") {
		t.Fatalf("NewScheme = %v, want boom naming add[1]", err)
	}
}
