package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the field manager Apply writes under and the one whose applies
// Delete recognises as its own.
const FieldManager = "reconciler-sdk-deploy"

// DefaultPollInterval is how often Apply reads the CRDs until they are Established,
// and Delete the objects until they are gone, when the options leave it zero.
const DefaultPollInterval = 250 * time.Millisecond

// ErrConflict is wrapped by the error of [Apply] for a field another field manager
// owns (without ApplyOptions.ForceConflicts).
var ErrConflict = errors.New("deploy: conflict with another field manager")

// ApplyOptions configure [Apply].
type ApplyOptions struct {
	// ForceConflicts takes over the fields another field manager owns, as kubectl apply
	// --server-side --force-conflicts does. Off (the default), such a field is a
	// conflict: Apply stops with an [ErrConflict] naming the object.
	ForceConflicts bool
	// PollInterval is how often the CRDs are read until Established;
	// zero means [DefaultPollInterval]. ctx bounds the wait.
	PollInterval time.Duration
}

// Apply applies objs server-side under [FieldManager], Namespaces first, then
// CustomResourceDefinitions, then (once every CRD of objs is Established and c's
// RESTMapper finds its kind, so that the custom resources after it find their API) the
// others in their order; objs are not
// changed. The first failure stops it, with an
// error naming the object; a conflict wraps [ErrConflict] and names the field managers
// the server reported.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, opts ApplyOptions) error {
	applyOpts := []client.ApplyOption{client.FieldOwner(FieldManager)}
	if opts.ForceConflicts {
		applyOpts = append(applyOpts, client.ForceOwnership)
	}
	var crds []*unstructured.Unstructured
	for _, obj := range Ordered(objs) {
		if !isFirst(obj) && len(crds) > 0 {
			if err := waitEstablished(ctx, c, crds, opts.PollInterval); err != nil {
				return err
			}
			crds = nil
		}
		// A copy: the client writes the server's answer (resourceVersion, managedFields)
		// into what it applies, and objs must stay appliable again.
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj.DeepCopy()), applyOpts...); err != nil {
			if apierrors.IsConflict(err) {
				return fmt.Errorf("%w: applying %s as %q (ForceConflicts takes the fields over): %w", ErrConflict, Describe(obj), FieldManager, err)
			}
			return fmt.Errorf("deploy: applying %s: %w", Describe(obj), err)
		}
		if isCRD(obj) {
			crds = append(crds, obj)
		}
	}
	if len(crds) > 0 {
		return waitEstablished(ctx, c, crds, opts.PollInterval)
	}
	return nil
}

// Ordered returns objs in the order [Apply] applies them: Namespaces, then
// CustomResourceDefinitions, then the others, each group in the order of objs. [Delete]
// deletes in the reverse of this order.
func Ordered(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := slices.Clone(objs)
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int { return rank(a) - rank(b) })
	return out
}

func rank(obj *unstructured.Unstructured) int {
	switch {
	case isNamespace(obj):
		return 0
	case isCRD(obj):
		return 1
	default:
		return 2
	}
}

func isFirst(obj *unstructured.Unstructured) bool { return rank(obj) < 2 }

func isNamespace(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == "" && gvk.Kind == "Namespace"
}

func isCRD(obj *unstructured.Unstructured) bool {
	gvk := obj.GroupVersionKind()
	return gvk.Group == apiextensionsv1.GroupName && gvk.Kind == "CustomResourceDefinition"
}

// Describe names obj in errors and reports: its kind, API group and namespace/name.
func Describe(obj *unstructured.Unstructured) string {
	gvk := obj.GroupVersionKind()
	kind := gvk.Kind
	if gvk.Group != "" {
		kind += "." + gvk.Group
	}
	if ns := obj.GetNamespace(); ns != "" {
		return kind + " " + ns + "/" + obj.GetName()
	}
	return kind + " " + obj.GetName()
}

// waitEstablished waits until every CRD of crds has the condition Established True.
func waitEstablished(ctx context.Context, c client.Client, crds []*unstructured.Unstructured, interval time.Duration) error {
	if interval <= 0 {
		interval = DefaultPollInterval
	}
	for _, obj := range crds {
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, client.ObjectKey{Name: obj.GetName()}, crd); err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				if m, ok := cond.(map[string]any); ok && m["type"] == string(apiextensionsv1.Established) &&
					m["status"] == string(apiextensionsv1.ConditionTrue) {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("deploy: waiting for %s to be Established: %w", Describe(obj), err)
		}
		// Discovery serves a new API a moment after Established: wait until the
		// client's RESTMapper finds the kind, or its custom resources are "no match".
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		err = wait.PollUntilContextCancel(ctx, interval, true, func(context.Context) (bool, error) {
			_, err := c.RESTMapper().RESTMapping(schema.GroupKind{Group: group, Kind: kind})
			if meta.IsNoMatchError(err) {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			return fmt.Errorf("deploy: waiting for the API of %s: %w", Describe(obj), err)
		}
	}
	return nil
}

// isNoMatch reports whether err says the API server does not serve the kind (its CRD
// is gone): for Delete, the object is gone with it.
func isNoMatch(err error) bool {
	return meta.IsNoMatchError(err)
}
