package admittest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/admit"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// RequestContext is a context carrying an admission request in namespace ns, as the
// webhook server hands it to a defaulter or validator (admit.Namespace reads it).
func RequestContext(ns string) context.Context {
	return admission.NewContextWithRequest(context.Background(),
		admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Namespace: ns}})
}

// ExpectDefault defaults a deep copy of in with d in ctx, twice, and fails t unless the
// object equals want both times (the defaults are right and a second call changes
// nothing), and unless a second copy defaulted once shares no pointer, slice or map
// with the first (a default must not hand out a package-level value that one object's
// later edit would change in another). An error of Default fails t at once.
func ExpectDefault[T runtime.Object](t testing.TB, ctx context.Context, d admission.Defaulter[T], in, want T) {
	t.Helper()
	got, other := in.DeepCopyObject().(T), in.DeepCopyObject().(T)
	for _, round := range []string{"defaulted", "defaulted twice"} {
		if err := d.Default(ctx, got); err != nil {
			t.Fatalf("%s: Default: %v", round, err)
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", round, diff)
		}
	}
	if err := d.Default(ctx, other); err != nil {
		t.Fatalf("Default: %v", err)
		return
	}
	if path := shared(reflect.ValueOf(got), reflect.ValueOf(other), ""); path != "" {
		t.Errorf("two objects defaulted apart share %s: changing one changes the other", path)
	}
}

// shared is the path of the first pointer, slice or map that a and b, values of one
// type, both hold; "" when none. Unexported fields are not followed.
func shared(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if a.IsNil() || b.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() && (a.Kind() != reflect.Slice || a.Cap() > 0) {
			return "the " + a.Type().String() + " at " + strings.TrimPrefix(path, ".")
		}
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() || a.Elem().Type() != b.Elem().Type() {
			return ""
		}
		return shared(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if f := a.Type().Field(i); f.IsExported() {
				if p := shared(a.Field(i), b.Field(i), path+"."+f.Name); p != "" {
					return p
				}
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range min(a.Len(), b.Len()) {
			if p := shared(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		for _, k := range a.MapKeys() {
			if bv := b.MapIndex(k); bv.IsValid() {
				if p := shared(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k)); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

// Causes are the causes (field, type, message) of err, an Invalid API error with
// details; nil for a nil err. Any other error fails t at once.
func Causes(t testing.TB, err error) []metav1.StatusCause {
	t.Helper()
	if err == nil {
		return nil
	}
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("err = %v, want an Invalid error with details", err)
		return nil
	}
	return status.Status().Details.Causes
}

// Case is one validation ([ExpectValidateCreate], [ExpectValidateUpdate]), a row of a
// table ([CreateTable], [UpdateTable]): the object, the one it replaces on an update,
// and what the validator must answer.
type Case[T client.Object] struct {
	// Old is the stored object an update replaces; CreateTable ignores it.
	Old T
	// Obj is the object created, or what Old is updated to.
	Obj T
	// Want are the causes of the refusal, in order; none admits Obj.
	Want []metav1.StatusCause
	// Warnings are the warnings, in order (on create usually none).
	Warnings []string
	// Hidden are strings that neither the refusal nor a warning may contain: values
	// Obj carries that the admit package's messages never echo.
	Hidden []string
}

// CreateTable runs [ExpectValidateCreate] on each case as a subtest named by its key.
func CreateTable[T client.Object](t *testing.T, v admission.Validator[T], cases map[string]Case[T]) {
	t.Helper()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { ExpectValidateCreate(t, v, c) })
	}
}

// UpdateTable runs [ExpectValidateUpdate] on each case as a subtest named by its key.
func UpdateTable[T client.Object](t *testing.T, v admission.Validator[T], cases map[string]Case[T]) {
	t.Helper()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { ExpectValidateUpdate(t, v, c) })
	}
}

// ExpectValidateCreate runs v.ValidateCreate on c.Obj and fails t unless the refusal's
// causes are c.Want (none: admitted), the refusal names c.Obj, the warnings are
// c.Warnings and neither contains a string of c.Hidden.
func ExpectValidateCreate[T client.Object](t testing.TB, v admission.Validator[T], c Case[T]) {
	t.Helper()
	warnings, err := v.ValidateCreate(context.Background(), c.Obj)
	expect(t, c, warnings, err)
}

// ExpectValidateUpdate runs v.ValidateUpdate from c.Old to c.Obj and checks the answer
// as [ExpectValidateCreate] does.
func ExpectValidateUpdate[T client.Object](t testing.TB, v admission.Validator[T], c Case[T]) {
	t.Helper()
	warnings, err := v.ValidateUpdate(context.Background(), c.Old, c.Obj)
	expect(t, c, warnings, err)
}

// expect fails t unless a validator's answer, warnings and err, is what c wants.
func expect[T client.Object](t testing.TB, c Case[T], warnings admission.Warnings, err error) {
	t.Helper()
	causes := Causes(t, err)
	if diff := cmp.Diff(c.Want, causes); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	var status apierrors.APIStatus
	if causes != nil && errors.As(err, &status) && status.Status().Details.Name != c.Obj.GetName() {
		t.Errorf("refusal names %q, want the object's name %q", status.Status().Details.Name, c.Obj.GetName())
	}
	if len(c.Warnings)+len(warnings) > 0 {
		if diff := cmp.Diff(c.Warnings, []string(warnings)); diff != "" {
			t.Errorf("warnings (-want +got):\n%s", diff)
		}
	}
	for _, h := range c.Hidden {
		if err != nil && strings.Contains(err.Error(), h) {
			t.Errorf("refusal echoes %q: %v", h, err)
		}
		if strings.Contains(strings.Join(warnings, "\n"), h) {
			t.Errorf("warnings echo %q: %q", h, warnings)
		}
	}
}

// ExpectNotInScheme runs setup, a webhook package's registration, on a manager whose
// scheme knows the Kubernetes built-in kinds only, and fails t unless it returns an
// error wrapping admit.ErrNotInScheme whose text contains each of want (the missing Go
// type, e.g. "v1alpha1.Widget"). The manager is never started and needs no API server.
func ExpectNotInScheme(t testing.TB, setup func(ctrl.Manager) error, want ...string) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
		return
	}
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatalf("a manager for the setup: %v", err)
		return
	}
	err = setup(mgr)
	if !errors.Is(err, admit.ErrNotInScheme) {
		t.Errorf("setup on a scheme without the kind: err = %v, want it to wrap admit.ErrNotInScheme", err)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v\nwant it to contain %q", err, w)
		}
	}
}

// Serve starts a manager on env, the test's control plane installed with the webhook
// configurations (testenv.Options.WebhookPaths), and runs setup, a webhook package's
// registration, on it; from then on the API server calls the webhooks, until the test
// ends. An error fails t at once.
func Serve(t testing.TB, env *testenv.Env, setup func(ctrl.Manager) error) {
	t.Helper()
	mgr, _ := env.StartManager(t, ctrl.Options{})
	if err := setup(mgr); err != nil {
		t.Fatalf("set the webhooks up: %v", err)
	}
}

// Admitted creates obj in namespace ns with [CreateManifest] and returns the object as
// the API server stored it: defaulted by the mutating webhooks and the CRD. An error
// (a refusal too) fails t at once.
func Admitted[T client.Object](t testing.TB, c client.Client, ns string, obj T) T {
	t.Helper()
	ctx := context.Background()
	if err := CreateManifest(ctx, c, ns, obj); err != nil {
		t.Fatalf("create: %v", err)
	}
	got := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(T) // a new, zero T: Get merges into maps
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: obj.GetName()}, got); err != nil {
		t.Fatalf("get the created object: %v", err)
	}
	return got
}

// ExpectRefusedUpdate updates a copy of stored, an object as c last read it, changed
// by edit, and fails t unless the API server refuses the update with an Invalid error
// whose text contains each of want, and the object is then still stored unchanged.
func ExpectRefusedUpdate[T client.Object](t testing.TB, c client.Client, stored T, edit func(T), want ...string) {
	t.Helper()
	ctx := context.Background()
	changed := stored.DeepCopyObject().(T)
	edit(changed)
	err := c.Update(ctx, changed)
	if !apierrors.IsInvalid(err) {
		t.Errorf("update: err = %v, want Invalid", err)
	}
	for _, w := range want {
		if err != nil && !strings.Contains(err.Error(), w) {
			t.Errorf("update: err = %v\nwant it to contain %s", err, w)
		}
	}
	got := reflect.New(reflect.TypeOf(stored).Elem()).Interface().(T)
	if err := c.Get(ctx, client.ObjectKeyFromObject(stored), got); err != nil {
		t.Fatalf("get after the update: %v", err)
	}
	if diff := cmp.Diff(stored, got); diff != "" {
		t.Errorf("object after the refused update (-want +got):\n%s", diff)
	}
}

// CreateManifest creates obj in namespace ns as a user's manifest of it reaches the
// API server: untyped, its apiVersion and kind from c's scheme, no status and no
// metadata.creationTimestamp, with [CreateStrict]. The webhooks see what they will see
// in production, where a typed client's object would already carry Go's zero values.
func CreateManifest(ctx context.Context, c client.Client, ns string, obj client.Object) error {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return fmt.Errorf("admittest: the manifest of a %T: %w", obj, err)
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return fmt.Errorf("admittest: the manifest of a %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		return fmt.Errorf("admittest: the manifest of a %T: %w", obj, err)
	}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return CreateStrict(ctx, c, u)
}

// CreateStrict creates obj through c with strict field validation, as kubectl apply
// does: an unknown or duplicate field is an error rather than silently dropped.
func CreateStrict(ctx context.Context, c client.Client, obj client.Object) error {
	return client.WithFieldValidation(c, metav1.FieldValidationStrict).Create(ctx, obj)
}

// CreateFile creates the object of the YAML manifest file in namespace ns through c
// with [CreateStrict] and returns it as stored; name, when not empty, replaces the
// manifest's metadata.name. The error names the file.
func CreateFile(ctx context.Context, c client.Client, ns, file, name string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		return nil, fmt.Errorf("admittest: %s: %w", file, err)
	}
	u.SetNamespace(ns)
	if name != "" {
		u.SetName(name)
	}
	if err := CreateStrict(ctx, c, u); err != nil {
		return nil, fmt.Errorf("admittest: create %s: %w", file, err)
	}
	return u, nil
}
