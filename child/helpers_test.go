package child_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/child"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// The condition the tests' flows report.
const (
	condType    = "ChildReady"
	reasonReady = "ChildReady"
	reasonNone  = "ChildNotRequired"
	noneMessage = "no child wanted"
)

// newOwner creates the persisted ConfigMap that owns the children of a test.
func newOwner(t testing.TB, ns, name string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

// configMap is a child ConfigMap ns/name holding value.
func configMap(ns, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"test.c5c3.io/child": "true"}},
		Data:       map[string]string{"value": value},
	}
}

// optional is the descriptor of the child ConfigMap ns/child, wanted with value (nil:
// not wanted).
func optional(ns string, desired *corev1.ConfigMap) child.Optional[*corev1.ConfigMap] {
	return child.Optional[*corev1.ConfigMap]{
		Key:         client.ObjectKey{Namespace: ns, Name: "child"},
		Desired:     desired,
		Type:        condType,
		Ready:       reasonReady,
		NotRequired: child.Reason{Reason: reasonNone, Message: noneMessage},
	}
}

// existing is what stands at a child's key before the flow runs.
type existing struct {
	// controller: "" (none: made by kubectl or Helm), "owner" or "other".
	controller string
	// deleting holds the object in deletion.
	deleting bool
}

// create makes the existing ConfigMap ns/name as e describes and returns the server's
// copy.
func (e existing) create(t *testing.T, ns, name string, owner client.Object) *corev1.ConfigMap {
	t.Helper()
	obj := configMap(ns, name, "theirs")
	var ctrlr client.Object
	switch e.controller {
	case "owner":
		ctrlr = owner
	case "other":
		ctrlr = newOwner(t, ns, "someone-else")
	}
	if ctrlr != nil {
		if err := controllerutil.SetControllerReference(ctrlr, obj, env.Scheme); err != nil {
			t.Fatal(err)
		}
	}
	if e.deleting {
		env.CreateBeingDeleted(t, obj)
		return obj
	}
	if err := env.Client.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// untouched fails the test unless the ConfigMap before is still there unwritten.
func untouched(t *testing.T, before *corev1.ConfigMap) {
	t.Helper()
	now := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(before), now); err != nil {
		t.Fatalf("the existing ConfigMap %s: %v, want it untouched", before.Name, err)
	}
	if now.ResourceVersion != before.ResourceVersion || now.UID != before.UID {
		t.Errorf("the existing ConfigMap %s was written: resourceVersion %s -> %s", before.Name, before.ResourceVersion, now.ResourceVersion)
	}
}

// replaceNS replaces the namespace ns in s by NS.
func replaceNS(s, ns string) string { return strings.ReplaceAll(s, ns, "NS") }

// outcome is an outcome with the namespace in its message replaced by NS, for
// comparison across namespaces.
func outcome(out reconcile.Outcome, ns string) reconcile.Outcome {
	out.Condition.Message = strings.ReplaceAll(out.Condition.Message, ns, "NS")
	return out
}

// checkErr fails the test unless err is nil when want is, or wraps want and contains
// text once the namespace ns in it is replaced by NS.
func checkErr(t *testing.T, ns string, err, want error, text string) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("err = %v, want none", err)
	case want == nil:
	case !errors.Is(err, want):
		t.Fatalf("err = %v, want one wrapping %v", err, want)
	case !strings.Contains(strings.ReplaceAll(err.Error(), ns, "NS"), text):
		t.Errorf("err = %q, want it to contain %q", err, text)
	}
}

// diff fails the test when got differs from want.
func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s (-want +got):\n%s", what, d)
	}
}

// brokenMapper fails every mapping as an unreachable discovery endpoint would.
type brokenMapper struct{ meta.RESTMapper }

func (brokenMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, errors.New("failed to get server groups: connection refused")
}

// brokenDiscovery is a client of env whose RESTMapper cannot reach discovery.
func brokenDiscovery(t *testing.T) client.Client {
	t.Helper()
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme, Mapper: brokenMapper{}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
