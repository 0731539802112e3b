package inspect

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/duration"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// crdInfo describes a Katalog entry with its current health.
func (s *server) crdInfo(crd *katalog.CRD) CRDInfo {
	info := CRDInfo{
		Name:    crd.Name,
		Group:   crd.APITypes.Group,
		Version: crd.APITypes.Version,
		Kind:    crd.APITypes.Kind,
		Plural:  crd.APITypes.Plural,
		Workers: crd.WorkerCount(),
		Resync:  crd.ResyncPeriod().String(),
		Health:  s.opts.Health.Health(crd.Name),
	}
	if len(crd.DependsOn) > 0 {
		info.DependsOn = make(map[string]string, len(crd.DependsOn))
		for name, cond := range crd.DependsOn {
			info.DependsOn[name] = string(cond)
		}
	}
	return info
}

// listCRs reads every custom resource of crd from the Reader, sorted by namespace and name.
func (s *server) listCRs(ctx context.Context, crd *katalog.CRD) ([]CRSummary, error) {
	gvk := crd.GroupVersionKind()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := s.opts.Reader.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list %s (CRD %s): %w", gvk.Kind, crd.Name, err)
	}
	items := make([]CRSummary, 0, len(list.Items))
	for i := range list.Items {
		items = append(items, s.summary(&list.Items[i]))
	}
	slices.SortFunc(items, func(a, b CRSummary) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return items, nil
}

// getCR reads one custom resource of crd from the Reader.
func (s *server) getCR(ctx context.Context, crd *katalog.CRD, ns, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(crd.GroupVersionKind())
	if err := s.opts.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, u); err != nil {
		return nil, fmt.Errorf("get %s %s/%s (CRD %s): %w", crd.APITypes.Kind, ns, name, crd.Name, err)
	}
	return u, nil
}

// summary is the list entry of a custom resource.
func (s *server) summary(u *unstructured.Unstructured) CRSummary {
	sum := CRSummary{
		Namespace:  u.GetNamespace(),
		Name:       u.GetName(),
		Generation: u.GetGeneration(),
		Created:    u.GetCreationTimestamp().UTC(),
		Age:        s.age(u.GetCreationTimestamp().Time),
	}
	sum.Phase, _, _ = unstructured.NestedString(u.Object, "status", "phase")
	sum.ObservedGeneration, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	for _, c := range conditions(u) {
		if c.Type == "Ready" {
			sum.Ready, sum.Reason = c.Status, c.Reason
			if sum.ObservedGeneration == 0 {
				sum.ObservedGeneration = c.ObservedGeneration
			}
		}
	}
	return sum
}

// detail gathers everything the detail of a custom resource shows.
func (s *server) detail(ctx context.Context, crd *katalog.CRD, u *unstructured.Unstructured) CRDetail {
	d := CRDetail{
		CRD:          crd.Name,
		Kind:         crd.APITypes.Kind,
		UID:          string(u.GetUID()),
		CRSummary:    s.summary(u),
		StatusFields: statusFields(u),
		Conditions:   conditions(u),
	}
	d.Children, d.ChildErrors = s.children(ctx, u)
	events, err := s.events(ctx, u)
	if err != nil {
		d.EventsError = err.Error()
	}
	d.Events = events
	return d
}

// conditions decodes status.conditions; entries that are not objects are skipped.
func conditions(u *unstructured.Unstructured) []Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := make([]Condition, 0, len(raw))
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		c := Condition{
			Type:    text(m["type"]),
			Status:  text(m["status"]),
			Reason:  text(m["reason"]),
			Message: text(m["message"]),
		}
		c.ObservedGeneration, _, _ = unstructured.NestedInt64(m, "observedGeneration")
		if ts, ok := m["lastTransitionTime"].(string); ok {
			if t, err := time.Parse(time.RFC3339, ts); err == nil {
				c.LastTransitionTime = t.UTC()
			}
		}
		out = append(out, c)
	}
	return out
}

// statusFields flattens status, without conditions, into dot paths with their values:
// maps are descended into, lists and scalars are leaves.
func statusFields(u *unstructured.Unstructured) []Field {
	status, _, _ := unstructured.NestedMap(u.Object, "status")
	delete(status, "conditions")
	var out []Field
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			path := prefix + k
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(path+".", sub)
				continue
			}
			out = append(out, Field{Path: path, Value: text(v)})
		}
	}
	walk("", status)
	slices.SortFunc(out, func(a, b Field) int { return cmp.Compare(a.Path, b.Path) })
	if out == nil {
		out = []Field{}
	}
	return out
}

// text renders a JSON value: strings as they are, other scalars with fmt, lists and maps
// as compact JSON.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case map[string]any, []any:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	default:
		return fmt.Sprint(v)
	}
}

// children lists the objects of each child kind in u's namespace whose controller is u.
// A kind that cannot be read is reported in errs and the others are still shown.
func (s *server) children(ctx context.Context, u *unstructured.Unstructured) (out []Child, errs []string) {
	out = []Child{}
	for _, gvk := range s.opts.ChildKinds {
		list := newList(gvk)
		if err := s.opts.Reader.List(ctx, list, client.InNamespace(u.GetNamespace())); err != nil {
			errs = append(errs, fmt.Sprintf("%s in namespace %s: %v", gvk.Kind, u.GetNamespace(), err))
			continue
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s in namespace %s: %v", gvk.Kind, u.GetNamespace(), err))
			continue
		}
		var kind []Child
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok {
				continue
			}
			ref := metav1.GetControllerOf(obj)
			if ref == nil || ref.UID != u.GetUID() {
				continue
			}
			ready, readiness := readiness(gvk.GroupKind(), obj)
			kind = append(kind, Child{
				Kind:      gvk.Kind,
				Name:      obj.GetName(),
				Ready:     ready,
				Readiness: readiness,
				Age:       s.age(obj.GetCreationTimestamp().Time),
			})
		}
		slices.SortFunc(kind, func(a, b Child) int { return cmp.Compare(a.Name, b.Name) })
		out = append(out, kind...)
	}
	return out, errs
}

// newList returns a typed list for the kinds client-go knows, so that the Reader (a
// manager's cache) serves it from the same informer as the engine's typed reads, and an
// unstructured list for any other kind.
func newList(gvk schema.GroupVersionKind) client.ObjectList {
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if obj, err := clientgoscheme.Scheme.New(listGVK); err == nil {
		if list, ok := obj.(client.ObjectList); ok {
			return list
		}
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(listGVK)
	return list
}

var (
	deploymentKind = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	jobKind        = schema.GroupKind{Group: "batch", Kind: "Job"}
)

// readiness reports whether a child is ready and what that rests on. Only the status
// of Deployments and Jobs is read; any other object is ready because it exists (a
// Secret's data never reaches an answer).
func readiness(gk schema.GroupKind, obj client.Object) (bool, string) {
	if gk != deploymentKind && gk != jobKind {
		return true, "exists"
	}
	m, err := toMap(obj)
	if err != nil {
		return false, fmt.Sprintf("unreadable: %v", err)
	}
	if gk == deploymentKind {
		desired, found, _ := unstructured.NestedInt64(m, "spec", "replicas")
		if !found {
			desired = 1
		}
		available, _, _ := unstructured.NestedInt64(m, "status", "availableReplicas")
		return available >= desired, fmt.Sprintf("%d/%d available", available, desired)
	}
	completions, found, _ := unstructured.NestedInt64(m, "spec", "completions")
	if !found {
		completions = 1
	}
	succeeded, _, _ := unstructured.NestedInt64(m, "status", "succeeded")
	conds, _, _ := unstructured.NestedSlice(m, "status", "conditions")
	for _, c := range conds {
		cm, ok := c.(map[string]any)
		if ok && cm["type"] == "Failed" && cm["status"] == "True" {
			return false, strings.TrimSpace("failed " + text(cm["reason"]))
		}
	}
	if succeeded >= completions {
		return true, fmt.Sprintf("%d/%d succeeded", succeeded, completions)
	}
	active, _, _ := unstructured.NestedInt64(m, "status", "active")
	return false, fmt.Sprintf("%d/%d succeeded, %d active", succeeded, completions, active)
}

// toMap returns the object as an unstructured map.
func toMap(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// events lists the events about u through the EventUIDIndex field selector, from the
// manager's cache, newest first and at most RecentEvents.
func (s *server) events(ctx context.Context, u *unstructured.Unstructured) ([]Event, error) {
	list := &corev1.EventList{}
	events := s.opts.Events
	if events == nil {
		events = s.opts.Reader
	}
	err := events.List(ctx, list,
		client.InNamespace(u.GetNamespace()),
		client.MatchingFields{EventUIDIndex: string(u.GetUID())},
	)
	if err != nil {
		return []Event{}, fmt.Errorf("list events of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	out := make([]Event, 0, len(list.Items))
	for i := range list.Items {
		e := &list.Items[i]
		if e.InvolvedObject.UID != u.GetUID() {
			continue // a reader that ignores field selectors
		}
		seen := lastSeen(e)
		out = append(out, Event{
			Type:     e.Type,
			Reason:   e.Reason,
			Message:  e.Message,
			Count:    max(e.Count, 1),
			Source:   cmp.Or(e.ReportingController, e.Source.Component),
			LastSeen: seen.UTC(),
			Age:      s.age(seen),
		})
	}
	slices.SortStableFunc(out, func(a, b Event) int { return b.LastSeen.Compare(a.LastSeen) })
	if len(out) > RecentEvents {
		out = out[:RecentEvents]
	}
	return out, nil
}

// lastSeen is when an event was last seen, from whichever of its time fields is set.
func lastSeen(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.Time
	default:
		return e.CreationTimestamp.Time
	}
}

// age renders the time since t the way kubectl does (5m, 3d4h); "" for a zero time.
func (s *server) age(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return duration.HumanDuration(s.now().Sub(t))
}
