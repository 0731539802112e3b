package testenv

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/c5c3/reconciler-sdk/apply"
)

// ResourceVersions maps each object of a snapshot, named "Kind namespace/name", to its
// metadata.resourceVersion. [ControlledVersions] takes one.
type ResourceVersions map[string]string

// ControlledVersions lists, through c, each kind of lists in owner's namespace and
// returns the resourceVersions of the objects owner controls (apply.IsControlled: an
// owner reference to owner's UID with controller: true, or, when c is an apply.Applier
// with ApplierOptions.Remote, owner's claim). Pass one empty list per kind the owner's
// reconciler writes, e.g. &corev1.ConfigMapList{}, &appsv1.DeploymentList{}; the lists
// themselves are left untouched. Pass an uncached client (such as [Env.Client]), so that
// the snapshot is the server's state and not an informer's.
func ControlledVersions(ctx context.Context, c client.Client, owner client.Object, lists ...client.ObjectList) (ResourceVersions, error) {
	out := ResourceVersions{}
	for _, l := range lists {
		list := l.DeepCopyObject().(client.ObjectList)
		if err := c.List(ctx, list, client.InNamespace(owner.GetNamespace())); err != nil {
			return nil, fmt.Errorf("testenv: list %T in %s: %w", l, owner.GetNamespace(), err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, fmt.Errorf("testenv: items of %T: %w", l, err)
		}
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok || !apply.IsControlled(c, owner, obj) {
				continue
			}
			out[kindIn(obj, c.Scheme())+" "+client.ObjectKeyFromObject(obj).String()] = obj.GetResourceVersion()
		}
	}
	return out, nil
}

// Changes lists, sorted, every object whose resourceVersion differs between the
// snapshots before and after: "Kind ns/name: resourceVersion 12 -> 15", "...: appeared"
// or "...: disappeared". It is empty when nothing was written.
func (before ResourceVersions) Changes(after ResourceVersions) []string {
	var out []string
	for k, rv := range before {
		switch now, ok := after[k]; {
		case !ok:
			out = append(out, k+": disappeared")
		case now != rv:
			out = append(out, fmt.Sprintf("%s: resourceVersion %s -> %s", k, rv, now))
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			out = append(out, k+": appeared")
		}
	}
	slices.Sort(out)
	return out
}

// ExpectUnchanged asserts that pass — a converged reconcile pass, a resync — makes no
// write to the objects owner controls, by their stored state: it takes
// [ControlledVersions] of lists through c, runs pass, takes them again and fails the
// test naming every object whose resourceVersion moved, that appeared or that
// disappeared. An error from pass fails the test.
//
// A no-op write (an apply or update the server recognises as changing nothing) leaves
// the resourceVersion alone, so ExpectUnchanged does not see it; [ExpectQuiet] counts
// the requests themselves. Use both to check that a converged pass neither changes
// anything nor sends anything: see the package documentation for what each SDK helper
// sends on a converged pass.
func ExpectUnchanged(t testing.TB, c client.Client, owner client.Object, pass func(context.Context) error, lists ...client.ObjectList) {
	t.Helper()
	ctx := context.Background()
	before, err := ControlledVersions(ctx, c, owner, lists...)
	if err != nil {
		t.Fatal(err)
	}
	if err := pass(ctx); err != nil {
		t.Fatalf("testenv: pass: %v", err)
	}
	after, err := ControlledVersions(ctx, c, owner, lists...)
	if err != nil {
		t.Fatal(err)
	}
	if changes := before.Changes(after); len(changes) > 0 {
		t.Errorf("testenv: the pass wrote %d objects controlled by %s %s:\n  %s", len(changes),
			kindIn(owner, c.Scheme()), client.ObjectKeyFromObject(owner), strings.Join(changes, "\n  "))
	}
}

// kindIn names obj's kind as scheme knows it, else as [kindOf] does.
func kindIn(obj client.Object, scheme *runtime.Scheme) string {
	if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
		return gvk.Kind
	}
	return kindOf(obj)
}
