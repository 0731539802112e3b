package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// metaZero is the zero creationTimestamp.
var metaZero = metav1.Time{}

// conditionsOf reads status.conditions of a CR.
func conditionsOf(u *unstructured.Unstructured) ([]metav1.Condition, error) {
	raw, found, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil || !found {
		return nil, err
	}
	out := make([]metav1.Condition, 0, len(raw))
	for i, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("status.conditions[%d] is a %T, not an object", i, r)
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
			return nil, fmt.Errorf("status.conditions[%d]: %w", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// ready tells whether a CR has converged, and says why not otherwise. Two readings
// must agree. kstatus (status.Compute of sigs.k8s.io/cli-utils/pkg/kstatus/status) must
// read it as Current: not being deleted, status.observedGeneration (when the CR has
// it) equal to metadata.generation, no Reconciling or Stalled condition True, and no
// Ready condition False or Unknown. And its Ready condition must be True with
// observedGeneration equal to metadata.generation: kstatus alone calls a CR Current
// before any Ready condition is written, and reads no condition's observedGeneration.
func ready(u *unstructured.Unstructured) (bool, string) {
	res, err := status.Compute(u)
	if err != nil {
		return false, fmt.Sprintf("kstatus cannot read it: %v", err)
	}
	if res.Status != status.CurrentStatus {
		return false, fmt.Sprintf("kstatus says %s (%q)", res.Status, res.Message)
	}
	conds, err := conditionsOf(u)
	if err != nil {
		return false, err.Error()
	}
	gen := u.GetGeneration()
	c := meta.FindStatusCondition(conds, reconcile.ConditionReady)
	switch {
	case c == nil || c.Status != metav1.ConditionTrue:
		return false, fmt.Sprintf("kstatus says Current (%q) but status.conditions holds no Ready condition that is True", res.Message)
	case c.ObservedGeneration != gen:
		return false, fmt.Sprintf("kstatus says Current (%q) but Ready is True for observedGeneration %d, metadata.generation is %d",
			res.Message, c.ObservedGeneration, gen)
	}
	return true, ""
}

// resourceKind is a listable resource the children may be of.
type resourceKind struct {
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaced bool
}

// child is an object the operator wrote, as its metadata.
type child struct {
	kind resourceKind
	obj  metav1.PartialObjectMetadata
}

// String renders the child as "Kind namespace/name".
func (c child) String() string {
	if c.obj.Namespace == "" {
		return c.kind.gvk.Kind + " " + c.obj.Name
	}
	return c.kind.gvk.Kind + " " + c.obj.Namespace + "/" + c.obj.Name
}

// id identifies a child across deletion and re-creation: kind, namespace and name.
func (c child) id() string { return c.kind.gvr.String() + "|" + c.obj.Namespace + "/" + c.obj.Name }

// resourceKinds returns every listable resource the API server serves, namespaced ones
// only unless all is set. Events and Leases are left out.
func (w *world) resourceKinds(all bool) ([]resourceKind, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(w.adminConfig())
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("conformance: discovery: %w", err)
	}
	var out []resourceKind
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || (!all && !r.Namespaced) ||
				r.Name == "events" || r.Name == "leases" {
				continue
			}
			out = append(out, resourceKind{gvr: gv.WithResource(r.Name), gvk: gv.WithKind(r.Kind), namespaced: r.Namespaced})
		}
	}
	return out, nil
}

// writtenBy reports whether the manager named fm wrote obj (its main resource),
// creating it included (apply.WrittenBy).
func writtenBy(obj *metav1.PartialObjectMetadata, fm string) bool {
	for _, mf := range obj.ManagedFields {
		if apply.WrittenBy(mf, fm) && mf.Subresource == "" {
			return true
		}
	}
	return false
}

// children lists the objects of the world's namespace that the operator wrote (its
// field manager is in their managedFields), the CRs themselves left out. full scans
// every namespaced kind and remembers the kinds children were found of; otherwise
// only those kinds are listed.
func (w *world) children(full bool) ([]child, error) {
	mc, err := metadata.NewForConfig(w.adminConfig())
	if err != nil {
		return nil, err
	}
	kinds := w.childKinds
	if full || kinds == nil {
		if kinds, err = w.resourceKinds(false); err != nil {
			return nil, err
		}
	}
	crs := map[types.UID]bool{}
	for _, cr := range w.crs {
		crs[cr.GetUID()] = true
	}
	var out []child
	var found []resourceKind
	for _, k := range kinds {
		list, err := mc.Resource(k.gvr).Namespace(w.ns).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			continue // a kind removed or not readable: not the operator's child
		}
		n := len(out)
		for _, item := range list.Items {
			if crs[item.UID] || !writtenBy(&item, w.opts.FieldManager) {
				continue
			}
			item.SetGroupVersionKind(k.gvk)
			out = append(out, child{kind: k, obj: item})
		}
		if len(out) > n {
			found = append(found, k)
		}
	}
	if full {
		w.childKinds = found
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// ownerOf returns the CR that controls c (controller owner reference) or claims it
// (apply.ClaimLabels), nil for none.
func (w *world) ownerOf(c child) *unstructured.Unstructured {
	ref := metav1.GetControllerOfNoCopy(&c.obj)
	for _, cr := range w.crs {
		if ref != nil && ref.UID == cr.GetUID() {
			return cr
		}
		if claim, ok := apply.ClaimOf(&c.obj); ok && claim.Name == cr.GetName() && claim.Namespace == cr.GetNamespace() &&
			claim.GroupKind == cr.GroupVersionKind().GroupKind() {
			return cr
		}
	}
	return nil
}

// ownedLabel returns a label of c that the operator's field manager owns (see
// operatorLabel) and its value, for a child the operator restores; a write-once child
// (see writeOnceReason) has none.
func (w *world) ownedLabel(c child) (key, value string, ok bool) {
	if w.writeOnce(c) != "" {
		return "", "", false
	}
	return w.operatorLabel(c)
}

// operatorLabel returns a label of c that the operator's field manager owns, found
// from managedFields, and its value. The labels that select the operator's cache
// (apply.ManagedByLabel) and the claim labels are left out: changing them hides the
// object from the operator instead of drifting it.
func (w *world) operatorLabel(c child) (key, value string, ok bool) {
	skip := []string{apply.ManagedByLabel, apply.OwnerClusterLabel, apply.OwnerKindLabel, apply.OwnerNamespaceLabel, apply.OwnerNameLabel}
	var keys []string
	for _, mf := range c.obj.ManagedFields {
		if !apply.WrittenBy(mf, w.opts.FieldManager) || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]map[string]any
		if json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields) != nil {
			continue
		}
		for k := range fields["f:metadata"]["f:labels"] {
			if name, ok := strings.CutPrefix(k, "f:"); ok && !slices.Contains(skip, name) {
				if _, present := c.obj.Labels[name]; present {
					keys = append(keys, name)
				}
			}
		}
	}
	if len(keys) == 0 {
		return "", "", false
	}
	slices.Sort(keys)
	return keys[0], c.obj.Labels[keys[0]], true
}

// The reasons a child is write-once, as writeOnceReason reports them.
const (
	writeOnceJob       = "a Job of job.RunJob (its re-run key annotation " + job.PodSpecHashAnnotation + ")"
	writeOnceImmutable = "immutable"
	writeOnceDeclared  = "declared write-once by Options.WriteOnce"
)

// writeOnceReason says why obj, a child as stored, is one the operator creates once and
// never writes again, "" when it is not: a Job carrying job.PodSpecHashAnnotation
// (job.RunJob creates it and never updates it in place), a ConfigMap or Secret with
// immutable: true (config.CreateImmutableConfigMap and CreateImmutableSecret), or one
// declared (Options.WriteOnce; a generated credential of secrets.EnsureGeneratedSecret
// carries no mark of its own).
func writeOnceReason(obj *unstructured.Unstructured, declared func(client.Object) bool) string {
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "batch" && gvk.Kind == "Job" && obj.GetAnnotations()[job.PodSpecHashAnnotation] != "":
		return writeOnceJob
	case gvk.Group == "" && (gvk.Kind == "ConfigMap" || gvk.Kind == "Secret"):
		if im, _, _ := unstructured.NestedBool(obj.Object, "immutable"); im {
			return writeOnceImmutable
		}
	}
	if declared != nil && declared(obj) {
		return writeOnceDeclared
	}
	return ""
}

// writeOnce returns writeOnceReason of c as stored, remembered by UID; "" for a child
// that cannot be read.
func (w *world) writeOnce(c child) string {
	w.mu.Lock()
	reason, ok := w.writeOnceByUID[c.obj.UID]
	w.mu.Unlock()
	if ok {
		return reason
	}
	u, err := w.fullChild(c)
	if err != nil || u == nil {
		return ""
	}
	reason = writeOnceReason(u, w.opts.WriteOnce)
	w.mu.Lock()
	if w.writeOnceByUID == nil {
		w.writeOnceByUID = map[types.UID]string{}
	}
	w.writeOnceByUID[c.obj.UID] = reason
	w.mu.Unlock()
	return reason
}

// fullChild reads c as stored, every field; nil when it does not exist.
func (w *world) fullChild(c child) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(c.kind.gvk)
	err := w.c.Get(w.ctx, client.ObjectKey{Namespace: c.obj.Namespace, Name: c.obj.Name}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("conformance: read %s: %w", c, err)
	}
	u.SetGroupVersionKind(c.kind.gvk)
	return u, nil
}

// operatorEntries renders the managedFields entries of the operator's field manager
// (its create's included, apply.WrittenBy), the status subresource's included: they
// change exactly when the operator's writes change the object.
func (w *world) operatorEntries(entries []metav1.ManagedFieldsEntry) string {
	var b strings.Builder
	for _, mf := range entries {
		if !apply.WrittenBy(mf, w.opts.FieldManager) {
			continue
		}
		raw := ""
		if mf.FieldsV1 != nil {
			raw = mf.FieldsV1.GetRawString()
		}
		t := ""
		if mf.Time != nil {
			t = mf.Time.UTC().String()
		}
		fmt.Fprintf(&b, "%s/%s/%s@%s:%s;", mf.Manager, mf.Operation, mf.Subresource, t, raw)
	}
	return b.String()
}
