package conformance

import (
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
)

// checkOwnership is [CheckOwnership]: every child is controlled or claimed by a CR, and
// (unless declared) nothing is written outside the CR's namespace.
func (w *world) checkOwnership() error {
	var before map[types.UID]string
	if !w.opts.OtherNamespaces {
		var err error
		if before, err = w.outside(); err != nil {
			return err
		}
	}
	if _, err := w.startAndConverge(nil); err != nil {
		return err
	}
	children, err := w.children(true)
	if err != nil {
		return err
	}
	var errs []error
	if len(children) == 0 {
		errs = append(errs, w.violation("", "Options.FieldManager",
			"set Options.FieldManager to the field manager your operator writes under (its apply.ApplierOptions.FieldManager)",
			"no object of namespace %s lists field manager %q in its managedFields, so the suite finds no child", w.ns, w.opts.FieldManager))
	}
	for _, c := range children {
		if w.ownerOf(c) != nil {
			continue
		}
		refs := "none"
		if len(c.obj.OwnerReferences) > 0 {
			refs = fmt.Sprintf("%v", c.obj.OwnerReferences)
		}
		errs = append(errs, w.violation(c.String(), "metadata.ownerReferences",
			"set the CR as the child's controller (apply.EnsureObject does; or controllerutil.SetControllerReference), "+
				"or on a target cluster claim it with apply.ClaimLabels",
			"written by %q but neither controlled by a sample CR nor claimed for one (owner references: %s)", w.opts.FieldManager, refs))
	}
	if !w.opts.OtherNamespaces {
		after, err := w.outside()
		if err != nil {
			return err
		}
		var created []string
		for uid, o := range after {
			if _, ok := before[uid]; !ok {
				created = append(created, o)
			}
		}
		slices.Sort(created)
		for _, o := range created {
			errs = append(errs, w.violation(o, "metadata.namespace",
				"create children in the CR's namespace, or declare Options.OtherNamespaces when the operator writes elsewhere by design",
				"written by %q outside the CR's namespace %s during the check", w.opts.FieldManager, w.ns))
		}
	}
	return errors.Join(errs...)
}

// outside lists, by UID, the objects of other namespaces (and cluster-scoped ones) that
// the operator's field manager wrote.
func (w *world) outside() (map[types.UID]string, error) {
	kinds, err := w.resourceKinds(true)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(w.adminConfig())
	if err != nil {
		return nil, err
	}
	out := map[types.UID]string{}
	for _, k := range kinds {
		list, err := mc.Resource(k.gvr).List(w.ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, item := range list.Items {
			if item.Namespace == w.ns || !writtenBy(&item, w.opts.FieldManager) {
				continue
			}
			out[item.UID] = child{kind: k, obj: item}.String()
		}
	}
	return out, nil
}
