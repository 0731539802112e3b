package testenv_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// exampleNamespace creates a namespace for an Example (a test uses env.Namespace(t)).
func exampleNamespace(ctx context.Context) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := env.Client.Create(ctx, ns); err != nil {
		panic(err)
	}
	return ns.Name
}

// ExampleEnv_RunManager starts a manager with the kit's test defaults (the Env's
// scheme, no metrics or probe server, no controller name validation), its cache scoped
// to one namespace, and stops it. env is the package's *Env, started in TestMain with
// testenv.Main; in a test, env.StartManager(t, opts) does the same and stops the
// manager when the test ends.
func ExampleEnv_RunManager() {
	ctx := context.Background()
	ns := exampleNamespace(ctx)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns}}
	if err := env.Client.Create(ctx, cm); err != nil {
		panic(err)
	}

	mgr, counter, stop, err := env.RunManager(ctrl.Options{
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
	})
	if err != nil {
		panic(err)
	}
	defer func() { fmt.Println("stopped:", stop()) }()

	// The first read of a kind starts its informer; the second is served by it.
	got := &corev1.ConfigMap{}
	if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		panic(err)
	}
	counter.Reset()
	if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(cm), got); err != nil {
		panic(err)
	}
	fmt.Println("read", got.Name, "with", counter.Total(), "requests")
	// Output:
	// read hello with 0 requests
	// stopped: <nil>
}

// ExampleWaitForCondition waits for a Ready condition that is current: written for
// the object's generation. The Ready condition is set here by a simulator; in a test
// of your operator it is your reconciler's status write. env is the package's *Env,
// started in TestMain with testenv.Main; in a test, testenv.ExpectCondition(t, ...)
// fails the test with the same message.
func ExampleWaitForCondition() {
	ctx := context.Background()
	db := &mariadbv1alpha1.Database{
		ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: exampleNamespace(ctx)},
		Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: mariadbv1alpha1.MariaDBRef{
			ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"},
		}},
	}
	if err := env.Client.Create(ctx, db); err != nil {
		panic(err)
	}
	if _, err := simulate.MarkDatabaseReady(ctx, env.Client, client.ObjectKeyFromObject(db)); err != nil {
		panic(err)
	}
	fmt.Println(testenv.WaitForCondition(ctx, env.Client, db, "Ready", metav1.ConditionTrue))

	// A spec change raises the generation: the Ready condition is now stale, and the
	// wait fails (bounded by the context) listing the conditions.
	db.Spec.CharacterSet = "latin1"
	if err := env.Client.Update(ctx, db); err != nil {
		panic(err)
	}
	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	err := testenv.WaitForCondition(short, env.Client, db, "Ready", metav1.ConditionTrue)
	fmt.Println(err != nil)
	fmt.Println(testenv.DescribeConditions(db.Generation, db.Status.Conditions))
	// Output:
	// <nil>
	// true
	//   generation 2, conditions:
	//     Ready=True reason=Created observedGeneration=1 (stale): Created
}

// ExampleControlledVersions snapshots the objects an owner controls, runs a pass and
// names what it wrote; ExpectUnchanged(t, c, owner, pass, lists...) does the same in a
// test and fails it. env is the package's *Env, started in TestMain with testenv.Main.
func ExampleControlledVersions() {
	ctx := context.Background()
	ns := exampleNamespace(ctx)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		panic(err)
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}}
	if err := controllerutil.SetControllerReference(owner, child, env.Scheme); err != nil {
		panic(err)
	}
	if err := env.Client.Create(ctx, child); err != nil {
		panic(err)
	}

	// The kinds the owner's reconciler writes.
	lists := []client.ObjectList{&corev1.ConfigMapList{}, &corev1.SecretList{}}
	before, err := testenv.ControlledVersions(ctx, env.Client, owner, lists...)
	if err != nil {
		panic(err)
	}
	child.Data = map[string]string{"k": "v"} // a pass that is not converged
	if err := env.Client.Update(ctx, child); err != nil {
		panic(err)
	}
	after, err := testenv.ControlledVersions(ctx, env.Client, owner, lists...)
	if err != nil {
		panic(err)
	}
	for _, c := range before.Changes(after) {
		what, _, _ := strings.Cut(strings.ReplaceAll(c, ns, "<ns>"), " resourceVersion")
		fmt.Println(what, "resourceVersion moved")
	}
	fmt.Println(len(after.Changes(after)), "changes in a pass that writes nothing")
	// Output:
	// ConfigMap <ns>/child: resourceVersion moved
	// 0 changes in a pass that writes nothing
}

// Memo stands for your operator's API type; its AddToScheme, below, for the one
// controller-gen and the scheme builder generate in your API package.
type Memo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (m *Memo) DeepCopyObject() runtime.Object {
	out := *m
	m.DeepCopyInto(&out.ObjectMeta)
	return &out
}

var memoGroupVersion = schema.GroupVersion{Group: "example.c5c3.io", Version: "v1"}

func memoAddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(memoGroupVersion, &Memo{})
	metav1.AddToGroupVersion(s, memoGroupVersion)
	return nil
}

// ExampleNewSchemeWith extends the kit's scheme with your own types (memoAddToScheme
// and Memo are defined in this file; yours come from your API package) and passes it to
// testenv.Options.Scheme, which replaces the kit's scheme rather than extending it.
func ExampleNewSchemeWith() {
	scheme, err := testenv.NewSchemeWith(memoAddToScheme)
	if err != nil {
		panic(err)
	}
	_ = testenv.Options{Scheme: scheme} // in TestMain: testenv.Main(m, testenv.Options{Scheme: scheme}, &env)

	for _, gvk := range []schema.GroupVersionKind{
		memoGroupVersion.WithKind("Memo"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		mariadbv1alpha1.GroupVersion.WithKind("Database"),
	} {
		fmt.Println(gvk.Kind, scheme.Recognizes(gvk))
	}
	// Output:
	// Memo true
	// ConfigMap true
	// Database true
}
