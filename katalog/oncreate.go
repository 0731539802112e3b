package katalog

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// onCreateGroup is the name of the onCreate resource group, in paths and errors.
const onCreateGroup = "onCreate"

// onCreateCalls makes the external calls of the onCreate group g, unless g has created
// everything it declares for cr already: then the calls are not made again, and
// onCreateCalls reports done with the objects g wants added to want, so that the pass
// neither writes nor prunes them.
//
// g has created everything when it declares at least one object and every object it
// declares exists (read from the cache) and is left alone by the pass: controlled by cr
// and not being deleted, or a once Secret. An object counts as declared when its when and
// anyOf conditions hold, a condition that reads .external counting as holding (the
// object exists, so the calls' results admitted it when it was created). A declaration
// whose name or forEach field reads .external cannot be known before the calls: its
// group's calls are made. In a pass that does not make them, each of g's calls records
// called "false".
func (r *crdReconciler) onCreateCalls(ctx context.Context, cr *unstructured.Unstructured, g *ResourceGroup, d passData, want map[childKey]bool) (done bool, err error) {
	if keys, ok := r.createdAlready(ctx, cr, g, d); ok {
		results := d["external"].(map[string]any)
		for _, call := range g.External {
			results[call.Name] = map[string]any{"called": "false"}
		}
		for _, k := range keys {
			want[k] = true
		}
		log.FromContext(ctx).V(1).Info("every onCreate object exists: onCreate's external calls are not made again")
		return true, nil
	}
	return false, r.engine.runExternal(ctx, g.External, d)
}

// createdAlready returns the objects the onCreate group g declares for cr, and whether
// each of them exists and is left alone (see onCreateCalls). Anything it cannot tell
// (a render error, a read that fails) answers false: the pass then makes the calls and
// reports the error where it always does.
func (r *crdReconciler) createdAlready(ctx context.Context, cr *unstructured.Unstructured, g *ResourceGroup, d passData) ([]childKey, bool) {
	if len(g.External) == 0 {
		return nil, false
	}
	decls := objectDecls(onCreateGroup, g, true)
	if len(decls) == 0 {
		return nil, false
	}
	a := r.engine.applier
	var keys []childKey
	for _, decl := range decls {
		if strings.Contains(decl.res.Name.Text, "external") ||
			(decl.res.ForEach != nil && strings.HasPrefix(decl.res.ForEach.Field, "external")) {
			return nil, false
		}
		reps, err := expandBounded(decl.res.ForEach, d, r.engine.opts.MaxForEachElements)
		if err != nil {
			return nil, false
		}
		for _, rd := range reps {
			name, err := render(decl.res.Name, rd, decl.where+".name")
			if err != nil || name == "" {
				return nil, false
			}
			ok, err := createdGate(decl.res.When, decl.res.AnyOf, rd)
			if err != nil {
				return nil, false
			}
			if !ok {
				continue
			}
			existing := kindByKey(decl.kind).newObj()
			if err := a.Get(ctx, client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}, existing); err != nil {
				return nil, false
			}
			if !decl.once && !leftAlone(a, cr, existing) {
				return nil, false
			}
			keys = append(keys, childKey{decl.kind, name})
		}
	}
	return keys, true
}

// createdGate is gate for an object that exists, with the calls that admitted it not
// made again: a when condition that reads .external holds, and so does an anyOf with
// such a condition; the others are evaluated.
func createdGate(when, anyOf []Condition, d passData) (bool, error) {
	var w []Condition
	for _, c := range when {
		if !readsExternal(c) {
			w = append(w, c)
		}
	}
	if slices.ContainsFunc(anyOf, readsExternal) {
		anyOf = nil
	}
	return gate(w, anyOf, d)
}

// readsExternal reports whether c may read .external: its field is a dot path below
// external, or its field or value is a template that mentions it. Erring on the side of
// yes keeps an existing object rather than deleting it.
func readsExternal(c Condition) bool {
	if c.Field.IsLiteral() {
		if c.Field.Text == "external" || strings.HasPrefix(c.Field.Text, "external.") {
			return true
		}
	} else if strings.Contains(c.Field.Text, "external") {
		return true
	}
	return strings.Contains(c.Value.Text, "external")
}
