package deploy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// DeleteOptions configure [Delete].
type DeleteOptions struct {
	// Wait makes Delete return only once every object it deleted is gone (finalizers
	// run, a Namespace's content removed), or ctx ends.
	Wait bool
	// PollInterval is how often Wait reads the deleted objects; zero means
	// [DefaultPollInterval].
	PollInterval time.Duration
}

// Skipped is an object [Delete] found but left: [FieldManager] never applied it.
type Skipped struct {
	// Object names it, as [Describe] does.
	Object string
	// Managers are the field managers its managedFields list ("manager/Operation").
	Managers []string
}

// DeleteReport is what [Delete] did with each object it was given.
type DeleteReport struct {
	// Deleted are the objects it deleted, in the order it deleted them.
	Deleted []string
	// Skipped are the objects it left because [FieldManager] never applied them.
	Skipped []Skipped
	// Absent are the objects that did not exist (or were gone before their deletion).
	Absent []string
}

// Delete undoes [Apply] for objs: in the reverse of [Ordered]'s order it reads each
// object and deletes it (background propagation, with its UID as precondition, so an
// object made again since the read is not touched) when its managedFields show an
// apply by [FieldManager]. An object without one was not deployed by Apply: it is left
// and reported in Skipped. An object that does not exist is reported in Absent. With
// opts.Wait it then waits until every deleted object is gone. The first failure stops
// it with an error naming the object; the report holds what was done until then.
//
// As with kubectl delete, deleting a Namespace deletes everything in it, and deleting a
// CustomResourceDefinition every custom resource of its kind.
func Delete(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, opts DeleteOptions) (DeleteReport, error) {
	var report DeleteReport
	ordered := Ordered(objs)
	slices.Reverse(ordered)
	var deleted []*unstructured.Unstructured
	for _, obj := range ordered {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), live)
		if apierrors.IsNotFound(err) || isNoMatch(err) {
			report.Absent = append(report.Absent, Describe(obj))
			continue
		}
		if err != nil {
			return report, fmt.Errorf("deploy: reading %s: %w", Describe(obj), err)
		}
		if !apply.AppliedBy(live, FieldManager) {
			report.Skipped = append(report.Skipped, Skipped{Object: Describe(obj), Managers: managers(live)})
			continue
		}
		uid := live.GetUID()
		err = c.Delete(ctx, live, client.PropagationPolicy(metav1.DeletePropagationBackground),
			client.Preconditions{UID: &uid})
		if apierrors.IsNotFound(err) {
			report.Absent = append(report.Absent, Describe(obj))
			continue
		}
		if err != nil {
			return report, fmt.Errorf("deploy: deleting %s: %w", Describe(obj), err)
		}
		report.Deleted = append(report.Deleted, Describe(obj))
		deleted = append(deleted, live)
	}
	if !opts.Wait {
		return report, nil
	}
	interval := opts.PollInterval
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	for _, obj := range deleted {
		var last *unstructured.Unstructured // the object as the last read found it
		err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(obj.GroupVersionKind())
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), live)
			switch {
			case apierrors.IsNotFound(err) || isNoMatch(err):
				return true, nil
			case err != nil:
				return false, err
			default:
				last = live
				return live.GetUID() != obj.GetUID(), nil // made again by someone else: ours is gone
			}
		})
		if err != nil {
			return report, fmt.Errorf("deploy: waiting for %s to be gone%s: %w", Describe(obj), pending(last), err)
		}
	}
	return report, nil
}

// pending says what still holds live, the last read of an object being deleted: its
// finalizers (a Namespace's spec.finalizers too) and the status conditions that are True (Terminating, NamespaceDeletion...),
// with their reasons and messages, as kubectl describe would show them. It is empty
// when there was no read.
func pending(live *unstructured.Unstructured) string {
	if live == nil {
		return ""
	}
	var held []string
	f := live.GetFinalizers()
	if live.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Namespace"}) {
		spec, _, _ := unstructured.NestedStringSlice(live.Object, "spec", "finalizers") // the namespace controller's
		f = append(slices.Clone(f), spec...)
	}
	if len(f) > 0 {
		held = append(held, "finalizers "+strings.Join(f, ", "))
	}
	conds, _, _ := unstructured.NestedSlice(live.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] != string(metav1.ConditionTrue) {
			continue
		}
		held = append(held, fmt.Sprintf("%v %v: %v", m["type"], m["reason"], m["message"]))
	}
	if len(held) == 0 {
		return ""
	}
	return " (" + strings.Join(held, "; ") + ")"
}

// managers lists obj's field managers as "manager/Operation".
func managers(obj client.Object) []string {
	var out []string
	for _, f := range obj.GetManagedFields() {
		m := f.Manager + "/" + string(f.Operation)
		if f.Subresource != "" {
			m += "(" + f.Subresource + ")"
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// String is the line an undeploy prints for s.
func (s Skipped) String() string {
	if len(s.Managers) == 0 {
		return s.Object + " (no field managers)"
	}
	return s.Object + " (managed by " + strings.Join(s.Managers, ", ") + ")"
}
