package apply

import (
	"reflect"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// applyWrite describes an apply of body: created when nothing existed before, otherwise
// configured (with the applied paths whose value changed) or unchanged (the same
// resourceVersion, or no applied path changed).
func applyWrite(gvk schema.GroupVersionKind, body *unstructured.Unstructured, before client.Object, after *unstructured.Unstructured) Write {
	w := Write{GVK: gvk, Key: client.ObjectKey{Namespace: after.GetNamespace(), Name: after.GetName()}}
	switch {
	case before == nil:
		w.Action = ActionCreated
	case before.GetResourceVersion() == after.GetResourceVersion():
		w.Action = ActionUnchanged
	default:
		// The resourceVersion also moves when someone else wrote in between (a
		// controller updating status): only a changed applied field makes it Configured.
		w.Action = ActionConfigured
		if prev, err := toUnstructured(before); err == nil {
			if w.Fields = changedPaths(body.Object, prev, after.Object, ""); len(w.Fields) == 0 {
				w.Action = ActionUnchanged
			}
		}
	}
	return w
}

func toUnstructured(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.UnstructuredContent(), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// changedPaths walks the applied body and returns the paths (under prefix) whose value
// differs between before and after; a list or a scalar is compared as a whole.
func changedPaths(body, before, after map[string]any, prefix string) []string {
	var out []string
	for k, v := range body {
		if prefix == "" && (k == "apiVersion" || k == "kind") {
			continue
		}
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		b, a := lookup(before, k), lookup(after, k)
		if sub, ok := v.(map[string]any); ok {
			bm, _ := b.(map[string]any)
			am, _ := a.(map[string]any)
			out = append(out, changedPaths(sub, bm, am, path)...)
			continue
		}
		if !reflect.DeepEqual(b, a) {
			out = append(out, path)
		}
	}
	if prefix == "" {
		sort.Strings(out)
	}
	return out
}

func lookup(m map[string]any, k string) any {
	if m == nil {
		return nil
	}
	return m[k]
}

// copyInto stores src (an object read into a fresh value of dst's type) into dst.
func copyInto(src, dst client.Object) error {
	if su, ok := src.(*unstructured.Unstructured); ok {
		return decodeInto(su, dst)
	}
	sv, dv := reflect.ValueOf(src), reflect.ValueOf(dst)
	if sv.Type() != dv.Type() {
		content, err := toUnstructured(src)
		if err != nil {
			return err
		}
		return decodeInto(&unstructured.Unstructured{Object: content}, dst)
	}
	dv.Elem().Set(sv.Elem())
	return nil
}
