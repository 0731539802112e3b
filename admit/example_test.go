package admit_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/c5c3/reconciler-sdk/admit"
)

// portRules are the checks of a webhook package: a ConfigMap's data.port must be set.
// The message names the field and never the value.
type portRules struct{}

func (portRules) GroupKind() schema.GroupKind { return schema.GroupKind{Kind: "ConfigMap"} }

func (portRules) Problems(cm *corev1.ConfigMap) field.ErrorList {
	if cm.Data["port"] == "" {
		return field.ErrorList{field.Required(field.NewPath("data").Key("port"), "the port to listen on")}
	}
	return nil
}

// PortValidator is what the package registers with
// admit.Register(mgr, &corev1.ConfigMap{}, nil, PortValidator{}).
type PortValidator = admit.Validator[*corev1.ConfigMap, portRules]

// ExampleValidator runs a create and two updates through a Validator as the API
// server would: a problem is refused on create, carried over unchanged it is only a
// warning, and a fixed object is admitted.
func ExampleValidator() {
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "server", Namespace: "apps"}}

	_, err := PortValidator{}.ValidateCreate(ctx, cm)
	fmt.Println("create:", err)

	edited := cm.DeepCopy()
	edited.Labels = map[string]string{"team": "web"}
	warnings, err := PortValidator{}.ValidateUpdate(ctx, cm, edited)
	fmt.Println("unrelated edit:", warnings, err)

	fixed := edited.DeepCopy()
	fixed.Data = map[string]string{"port": "8080"}
	warnings, err = PortValidator{}.ValidateUpdate(ctx, edited, fixed)
	fmt.Println("fixed:", warnings, err)
	// Output:
	// create: ConfigMap "server" is invalid: data[port]: Required value: the port to listen on
	// unrelated edit: [data[port]: Required value: the port to listen on] <nil>
	// fixed: [] <nil>
}
