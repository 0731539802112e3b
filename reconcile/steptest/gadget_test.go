package steptest_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Gadget is the custom resource of the kit's own tests.
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              GadgetSpec   `json:"spec,omitempty"`
	Status            GadgetStatus `json:"status,omitempty"`
}

// GadgetSpec is the desired state of a Gadget.
type GadgetSpec struct {
	SecretName string `json:"secretName,omitempty"`
	Extra      bool   `json:"extra,omitempty"`
}

// GadgetStatus is the observed state of a Gadget.
type GadgetStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Conditions implements reconcile.Object.
func (g *Gadget) Conditions() *[]metav1.Condition { return &g.Status.Conditions }

// DeepCopyObject implements runtime.Object.
func (g *Gadget) DeepCopyObject() runtime.Object {
	if g == nil {
		return nil
	}
	out := &Gadget{TypeMeta: g.TypeMeta, Spec: g.Spec}
	g.DeepCopyInto(&out.ObjectMeta)
	if g.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(g.Status.Conditions))
		for i := range g.Status.Conditions {
			g.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
	return out
}

// secretPoll is the requeue while the Gadget's Secret is missing.
const secretPoll = 15 * time.Second

var gadgetGV = schema.GroupVersion{Group: "steptest.test.c5c3.io", Version: "v1"}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	s.AddKnownTypes(gadgetGV, &Gadget{})
	metav1.AddToGroupVersion(s, gadgetGV)
	return s
}

func gadget() *Gadget {
	return &Gadget{
		ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns", Generation: 2, UID: "3f1c6a52-0000-4000-8000-000000000001"},
		Spec:       GadgetSpec{SecretName: "g-key"},
	}
}

// ConfigStep is an operator's step under test: it waits for a Secret, renders a
// ConfigMap owned by the Gadget, and deletes an optional ConfigMap the spec no longer
// asks for.
type ConfigStep struct {
	Client client.Client
	Scheme *runtime.Scheme
}

// Step returns the table row for the step.
func (s ConfigStep) Step() reconcile.Step[*Gadget] {
	return reconcile.Step[*Gadget]{Name: "Config", Condition: "ConfigReady", Run: s.reconcile}
}

func (s ConfigStep) reconcile(ctx context.Context, g *Gadget) (ctrl.Result, error) {
	secret := &corev1.Secret{}
	err := s.Client.Get(ctx, client.ObjectKey{Namespace: g.Namespace, Name: g.Spec.SecretName}, secret)
	switch {
	case apierrors.IsNotFound(err):
		reconcile.MarkFalse(g, "ConfigReady", "WaitingForSecretKey", fmt.Sprintf("Secret %q not found", g.Spec.SecretName))
		return ctrl.Result{RequeueAfter: secretPoll}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read Secret %s/%s: %w", g.Namespace, g.Spec.SecretName, err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-config", Namespace: g.Namespace},
		Data:       map[string]string{"settings.py": fmt.Sprintf("SECRET_KEY_LEN = %d\n", len(secret.Data["key"]))},
	}
	if err := apply.EnsureObject(ctx, s.Client, s.Scheme, g, cm, apply.FieldManager); err != nil {
		reconcile.MarkFalse(g, "ConfigReady", "ConfigError", "cannot apply the config")
		return ctrl.Result{}, err
	}
	if !g.Spec.Extra {
		extra := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-extra", Namespace: g.Namespace}}
		if err := s.Client.Delete(ctx, extra); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	reconcile.MarkTrue(g, "ConfigReady", "ConfigRendered", "")
	return ctrl.Result{}, nil
}
