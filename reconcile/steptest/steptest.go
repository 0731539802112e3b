package steptest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// Case is one row of a step test table.
type Case[T reconcile.Object] struct {
	// Object is the custom resource the step runs on. It is stored in the fake client,
	// with a status subresource, and read back before the step runs, so the step sees
	// what it would in a reconcile (resourceVersion set). The case's value is never
	// modified. Required.
	Object T
	// GivenObjects are the other objects the API holds before the step runs.
	GivenObjects []client.Object
	// Interceptors replace client calls, to inject API errors or observe requests;
	// the functions left nil pass through to the fake client.
	Interceptors interceptor.Funcs

	// ExpectedResult is the result the step must return.
	ExpectedResult ctrl.Result
	// ExpectedErr, when set, must be found in the step's error chain with errors.Is.
	ExpectedErr error
	// ShouldErr expects an error of any kind; ExpectedErr implies it. Without either,
	// the step must not fail.
	ShouldErr bool
	// ExpectedConditions are the custom resource's conditions after the step, in any
	// order, lastTransitionTime not compared. Every condition the resource holds must be
	// listed: nil expects none.
	ExpectedConditions []metav1.Condition
	// ExpectedObjects must exist in the client after the step and equal these objects
	// (namespace and name identify them). Server-managed metadata — resourceVersion,
	// uid, generation, creationTimestamp, managedFields — and, for typed objects, the
	// TypeMeta are not compared.
	ExpectedObjects []client.Object
	// AbsentObjects must not exist in the client after the step (only namespace and
	// name are used).
	AbsentObjects []client.Object
	// Verify, when set, runs further checks on the client and the resource after the
	// step.
	Verify func(t *testing.T, c client.Client, obj T)
}

// Suite is a table of cases, keyed by subtest name.
type Suite[T reconcile.Object] map[string]Case[T]

// Factory returns the step under test, wired to the case's client (the fake client,
// wrapped by the case's interceptors).
type Factory[T reconcile.Object] func(c client.Client) reconcile.Step[T]

// Report is the outcome of one case.
type Report[T reconcile.Object] struct {
	// Result is the result the step returned through the runner.
	Result ctrl.Result
	// Err is the error the step returned through the runner.
	Err error
	// Object is the custom resource after the step (the zero T when the case could not
	// run).
	Object T
	// Client is the case's client after the step (nil when the case could not run).
	Client client.Client
	// Problems lists every expectation the step did not meet, or why the case could
	// not run; empty when the case passed.
	Problems []string
	// SetupErr says why the case could not run (nil when it ran): a nil Object, a nil
	// scheme (wrapping apply.ErrNilScheme), objects the fake client refuses, or a step
	// table reconcile.NewPipeline refuses. It is also the only entry of Problems.
	SetupErr error
}

// Run runs every case as a subtest, in name order, reports each problem with t.Error,
// then calls the case's Verify. scheme must know the custom resource's type and the
// types of all given and expected objects; a nil scheme fails every case with an error
// wrapping apply.ErrNilScheme that names the case's object, and runs no step.
func (s Suite[T]) Run(t *testing.T, scheme *runtime.Scheme, factory Factory[T]) {
	t.Helper()
	names := make([]string, 0, len(s))
	for name := range s {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		tc := s[name]
		t.Run(name, func(t *testing.T) {
			t.Helper()
			tc.Run(t, scheme, factory)
		})
	}
}

// Run runs the single case tc as a test; see [Suite.Run].
func (tc Case[T]) Run(t *testing.T, scheme *runtime.Scheme, factory Factory[T]) {
	t.Helper()
	r := tc.Evaluate(t.Context(), scheme, factory)
	for _, problem := range r.Problems {
		t.Error(problem)
	}
	if tc.Verify != nil && r.Client != nil {
		tc.Verify(t, r.Client, r.Object)
	}
}

// Evaluate runs the case outside a test and returns its outcome; Verify is not called.
// [Suite.Run] and [Case.Run] report the same problems through testing.T.
func (tc Case[T]) Evaluate(ctx context.Context, scheme *runtime.Scheme, factory Factory[T]) Report[T] {
	var r Report[T]
	fail := func(err error) Report[T] {
		r.SetupErr = err
		r.Problems = []string{err.Error()}
		return r
	}
	if isNil(tc.Object) {
		return fail(errors.New("steptest: Case.Object is nil: the step needs a custom resource to run on"))
	}
	if err := apply.CheckScheme(scheme); err != nil {
		return fail(fmt.Errorf("steptest: %s: %w", describe(nil, tc.Object), err))
	}
	c, obj, err := setup(ctx, scheme, tc)
	if err != nil {
		return fail(fmt.Errorf("steptest: %w", err))
	}
	p, err := reconcile.NewPipeline(nil, factory(c))
	if err != nil {
		return fail(fmt.Errorf("steptest: %w", err))
	}
	r.Client, r.Object = c, obj
	r.Result, r.Err = p.Run(ctx, obj)

	switch {
	case tc.ExpectedErr != nil && !errors.Is(r.Err, tc.ExpectedErr):
		r.Problems = append(r.Problems, fmt.Sprintf("error = %v, want one wrapping %q", r.Err, tc.ExpectedErr))
	case tc.ExpectedErr == nil && tc.ShouldErr && r.Err == nil:
		r.Problems = append(r.Problems, "error = nil, want an error")
	case tc.ExpectedErr == nil && !tc.ShouldErr && r.Err != nil:
		r.Problems = append(r.Problems, fmt.Sprintf("unexpected error: %v", r.Err))
	}
	if !reflect.DeepEqual(r.Result, tc.ExpectedResult) {
		r.Problems = append(r.Problems, fmt.Sprintf("result = %+v, want %+v", r.Result, tc.ExpectedResult))
	}
	if diff := cmp.Diff(tc.ExpectedConditions, *obj.Conditions(), conditionOpts...); diff != "" {
		r.Problems = append(r.Problems, "conditions (-want +got):\n"+diff)
	}
	for _, want := range tc.ExpectedObjects {
		r.Problems = append(r.Problems, checkPresent(ctx, c, scheme, want)...)
	}
	for _, gone := range tc.AbsentObjects {
		r.Problems = append(r.Problems, checkAbsent(ctx, c, scheme, gone)...)
	}
	return r
}

var conditionOpts = []cmp.Option{
	cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"),
	cmpopts.SortSlices(func(a, b metav1.Condition) bool { return a.Type < b.Type }),
	cmpopts.EquateEmpty(),
}

// setup builds the fake client with the case's objects and reads the custom resource
// back from it.
func setup[T reconcile.Object](ctx context.Context, scheme *runtime.Scheme, tc Case[T]) (c client.Client, obj T, err error) {
	objs := []client.Object{deepCopy(tc.Object)}
	for _, o := range tc.GivenObjects {
		objs = append(objs, deepCopy(o))
	}
	defer func() {
		// The fake client's builder panics on objects it cannot store.
		if r := recover(); r != nil {
			err = fmt.Errorf("build fake client: %v", r)
		}
	}()
	base := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(tc.Object).Build()
	obj = newLike(tc.Object)
	if err := base.Get(ctx, client.ObjectKeyFromObject(tc.Object), obj); err != nil {
		return nil, obj, fmt.Errorf("read back %s: %w", describe(scheme, tc.Object), err)
	}
	return interceptor.NewClient(base, tc.Interceptors), obj, nil
}

// checkPresent compares the stored version of want with want.
func checkPresent(ctx context.Context, c client.Client, scheme *runtime.Scheme, want client.Object) []string {
	got := newLike(want)
	if err := c.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
		return []string{fmt.Sprintf("expected object %s: %v", describe(scheme, want), err)}
	}
	w, g := normalize(deepCopy(want)), normalize(got)
	if diff := diffObjects(w, g); diff != "" {
		return []string{fmt.Sprintf("object %s (-want +got):\n%s", describe(scheme, want), diff)}
	}
	return nil
}

// checkAbsent reports gone if the client still has it.
func checkAbsent(ctx context.Context, c client.Client, scheme *runtime.Scheme, gone client.Object) []string {
	err := c.Get(ctx, client.ObjectKeyFromObject(gone), newLike(gone))
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return []string{fmt.Sprintf("absent object %s: %v", describe(scheme, gone), err)}
	default:
		return []string{fmt.Sprintf("object %s exists, want it absent", describe(scheme, gone))}
	}
}

// normalize clears what the API server, not the step, decides.
func normalize(o client.Object) client.Object {
	o.SetResourceVersion("")
	o.SetUID("")
	o.SetGeneration(0)
	o.SetCreationTimestamp(metav1.Time{})
	o.SetManagedFields(nil)
	if _, ok := o.(*unstructured.Unstructured); !ok {
		o.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	}
	return o
}

// diffObjects returns a readable difference between want and got, or "" when they are
// semantically equal.
func diffObjects(want, got client.Object) (diff string) {
	if equality.Semantic.DeepEqual(want, got) {
		return ""
	}
	defer func() {
		// cmp refuses types with unexported fields it has no option for; fall back to
		// a plain dump then.
		if r := recover(); r != nil {
			diff = fmt.Sprintf("want: %+v\ngot:  %+v", want, got)
		}
	}()
	diff = cmp.Diff(want, got, cmpopts.EquateEmpty(),
		cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }))
	if strings.TrimSpace(diff) == "" {
		diff = fmt.Sprintf("want: %+v\ngot:  %+v", want, got)
	}
	return diff
}

// newLike returns an empty object of o's type (an Unstructured keeps o's kind).
func newLike[O client.Object](o O) O {
	if u, ok := any(o).(*unstructured.Unstructured); ok {
		n := &unstructured.Unstructured{}
		n.SetGroupVersionKind(u.GroupVersionKind())
		return any(n).(O)
	}
	return reflect.New(reflect.TypeOf(o).Elem()).Interface().(O)
}

func deepCopy[O client.Object](o O) O {
	return o.DeepCopyObject().(O)
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// describe names o as "Kind namespace/name" (the Go type instead of the kind when
// scheme is nil or does not know o).
func describe(scheme *runtime.Scheme, o client.Object) string {
	kind := fmt.Sprintf("%T", o)
	if scheme == nil {
		return kind + " " + client.ObjectKeyFromObject(o).String()
	}
	if gvks, _, err := scheme.ObjectKinds(o); err == nil && len(gvks) > 0 {
		kind = gvks[0].Kind
	}
	return kind + " " + client.ObjectKeyFromObject(o).String()
}
