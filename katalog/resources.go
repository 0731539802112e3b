package katalog

import (
	"context"
	"errors"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// childKind is one kind of object a Katalog declares: its key under .children, and how
// to make an empty object and list of it.
type childKind struct {
	key     string
	plural  string
	newObj  func() client.Object
	newList func() client.ObjectList
}

// childKinds are the kinds a Katalog declares, in the order a group writes them.
var childKinds = []childKind{
	{"serviceaccount", "serviceaccounts", func() client.Object { return &corev1.ServiceAccount{} }, func() client.ObjectList { return &corev1.ServiceAccountList{} }},
	{"secret", "secrets", func() client.Object { return &corev1.Secret{} }, func() client.ObjectList { return &corev1.SecretList{} }},
	{"configmap", "configmaps", func() client.Object { return &corev1.ConfigMap{} }, func() client.ObjectList { return &corev1.ConfigMapList{} }},
	{"service", "services", func() client.Object { return &corev1.Service{} }, func() client.ObjectList { return &corev1.ServiceList{} }},
	{"deployment", "deployments", func() client.Object { return &appsv1.Deployment{} }, func() client.ObjectList { return &appsv1.DeploymentList{} }},
	{"job", "jobs", func() client.Object { return &batchv1.Job{} }, func() client.ObjectList { return &batchv1.JobList{} }},
	{"cronjob", "cronjobs", func() client.Object { return &batchv1.CronJob{} }, func() client.ObjectList { return &batchv1.CronJobList{} }},
}

func kindByKey(key string) childKind {
	for _, k := range childKinds {
		if k.key == key {
			return k
		}
	}
	panic("katalog: unknown child kind " + key)
}

// objectDecl is one entry of a resource group, of any kind.
type objectDecl struct {
	kind  string // a childKind key
	where string // its path in the Katalog, for errors
	res   Resource
	// once: a Secret created a single time and never rendered again while it exists.
	once bool
	// createOnly: created when missing and left alone when present (onCreate, Jobs).
	createOnly bool
	build      func(r *renderer, meta metav1.ObjectMeta) (client.Object, error)
}

// declarations lists g's entries in the order of childKinds.
func objectDecls(group string, g *ResourceGroup, createOnly bool) []objectDecl {
	var out []objectDecl
	add := func(kind, field string, i int, res Resource, once, co bool, b func(*renderer, metav1.ObjectMeta) (client.Object, error)) {
		out = append(out, objectDecl{kind: kind, where: fmt.Sprintf("%s.%s[%d]", group, field, i), res: res, once: once, createOnly: co, build: b})
	}
	for i, x := range g.ServiceAccounts {
		add("serviceaccount", "serviceAccounts", i, x.Resource, false, createOnly, func(r *renderer, m metav1.ObjectMeta) (client.Object, error) { return buildServiceAccount(x, r, m) })
	}
	for i, x := range g.Secrets {
		add("secret", "secrets", i, x.Resource, x.Once, createOnly, func(r *renderer, m metav1.ObjectMeta) (client.Object, error) { return buildSecret(x, r, m) })
	}
	for i, x := range g.ConfigMaps {
		add("configmap", "configMaps", i, x.Resource, false, createOnly, func(r *renderer, m metav1.ObjectMeta) (client.Object, error) { return buildConfigMap(x, r, m) })
	}
	for i, x := range g.Services {
		add("service", "services", i, x.Resource, false, createOnly, func(r *renderer, m metav1.ObjectMeta) (client.Object, error) { return buildService(x, r, m) })
	}
	for i, x := range g.Deployments {
		add("deployment", "deployments", i, x.Resource, false, createOnly, func(r *renderer, m metav1.ObjectMeta) (client.Object, error) { return buildDeployment(x, r, m) })
	}
	for i, x := range g.Jobs {
		add("job", "jobs", i, x.Resource, false, true, func(r *renderer, m metav1.ObjectMeta) (client.Object, error) { return buildJob(x, r, m) })
	}
	for i, x := range g.CronJobs {
		add("cronjob", "cronJobs", i, x.Resource, false, createOnly, func(r *renderer, m metav1.ObjectMeta) (client.Object, error) { return buildCronJob(x, r, m) })
	}
	return out
}

// childKey names one child: its kind key and name (in the custom resource's namespace).
type childKey struct{ kind, name string }

// runGroup makes g's external calls, then writes every objectDecl whose conditions hold
// for each of its repetitions, adding what it wants to want. A objectDecl that fails is
// reported in the joined error and does not stop the others; one whose forEach holds
// more than EngineOptions.MaxForEachElements elements writes no repetition at all.
// onDelete's Jobs carry OnDeleteJobAnnotation.
func (r *crdReconciler) runGroup(ctx context.Context, cr *unstructured.Unstructured, group string, g *ResourceGroup, createOnly bool, d passData, want map[childKey]bool) error {
	if g == nil {
		return nil
	}
	if group == onCreateGroup {
		// onCreate's calls are made only until its objects exist (onCreateCalls).
		done, err := r.onCreateCalls(ctx, cr, g, d, want)
		if err != nil {
			return fmt.Errorf("%s: %w", group, err)
		}
		if done {
			return nil
		}
	} else if err := r.engine.runExternal(ctx, g.External, d); err != nil {
		return fmt.Errorf("%s: %w", group, err)
	}
	var errs []error
	decls := objectDecls(group, g, createOnly)
	if group == onDeleteGroup {
		markOnDeleteJobs(decls, cr)
	}
	for _, decl := range decls {
		reps, err := expandBounded(decl.res.ForEach, d, r.engine.opts.MaxForEachElements)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", decl.where, err))
			continue
		}
		for _, rd := range reps {
			if err := r.writeDeclaration(ctx, cr, decl, rd, want); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// writeDeclaration writes one repetition of decl when its conditions hold.
func (r *crdReconciler) writeDeclaration(ctx context.Context, cr *unstructured.Unstructured, decl objectDecl, d passData, want map[childKey]bool) error {
	name, err := render(decl.res.Name, d, decl.where+".name")
	if err != nil {
		return err
	}
	ok, err := gate(decl.res.When, decl.res.AnyOf, d)
	if err != nil {
		return fmt.Errorf("%s %s: %w", decl.where, name, err)
	}
	if !ok {
		return nil
	}
	want[childKey{decl.kind, name}] = true
	kind := kindByKey(decl.kind)
	key := client.ObjectKey{Namespace: cr.GetNamespace(), Name: name}
	a := r.engine.applier
	if decl.createOnly || decl.once {
		existing := kind.newObj()
		err := a.Get(ctx, key, existing)
		switch {
		case err == nil && (decl.once || leftAlone(a, cr, existing)):
			// Present: left alone, and a once Secret is never rendered again.
			return nil
		case err == nil:
			// Present but not the custom resource's to leave alone: EnsureObject below
			// refuses it, writing nothing, with an error naming it (someone else's, without
			// a controller, being deleted), or adopts it on consent (apply.AdoptAnnotation).
		case !apierrors.IsNotFound(err):
			return fmt.Errorf("get %s %s: %w", decl.kind, key, err)
		}
	}
	obj, err := decl.build(&renderer{d: d, where: decl.where}, objectMeta(name, cr.GetNamespace(), cr.GetName(), r.crd.Name))
	if err != nil {
		return err
	}
	scheme := r.engine.scheme
	if decl.once {
		// Created, never applied: a lost race keeps the winner's values.
		if err := apply.SetOwnership(a, scheme, cr, obj); err != nil {
			return fmt.Errorf("%s %s: %w", decl.kind, key, err)
		}
		switch err := a.Create(ctx, obj); {
		case apierrors.IsAlreadyExists(err):
			return nil
		case err != nil:
			return fmt.Errorf("create %s %s: %w", decl.kind, key, err)
		}
		apply.Record(ctx, apply.Write{Action: apply.ActionCreated, GVK: obj.GetObjectKind().GroupVersionKind(), Key: key})
		return nil
	}
	if err := apply.EnsureObject(ctx, a, scheme, cr, obj, r.engine.opts.FieldManager); err != nil {
		return fmt.Errorf("%s: %w", decl.where, err)
	}
	return nil
}

// leftAlone reports whether an existing onCreate object is one the pass leaves as it is:
// cr controls it and it is not being deleted.
func leftAlone(c client.Client, cr, existing client.Object) bool {
	return existing.GetDeletionTimestamp() == nil && apply.IsControlled(c, cr, existing)
}

// ownedChildren lists the children of kind in cr's namespace that carry cr's labels and
// that cr controls, sorted by name, from the manager's cache.
func (r *crdReconciler) ownedChildren(ctx context.Context, cr *unstructured.Unstructured, kind childKind) ([]client.Object, error) {
	list := kind.newList()
	if err := r.engine.applier.List(ctx, list, client.InNamespace(cr.GetNamespace()),
		client.MatchingLabels(childLabels(cr.GetName(), r.crd.Name))); err != nil {
		return nil, fmt.Errorf("list %s of %s %s/%s: %w", kind.plural, cr.GetKind(), cr.GetNamespace(), cr.GetName(), err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", kind.plural, err)
	}
	var out []client.Object
	for _, it := range items {
		obj, ok := it.(client.Object)
		if ok && apply.IsControlled(r.engine.applier, cr, obj) {
			out = append(out, obj)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}

// kept returns the children that prune leaves alone whatever their conditions say: every
// object that a create-only declaration of onCreate or onReconcile (an onCreate object, a
// Job, a once Secret) names for one of its forEach elements. Such an object cannot be
// made again as it was (a generated password, a Job that ran), so a when or anyOf
// condition that stops holding only keeps it from being created; it is deleted once no
// declaration names it any more (the declaration, or its forEach element, is gone). A
// name that cannot be rendered is an error: the pass then deletes nothing.
func (r *crdReconciler) kept(d passData) (map[childKey]bool, error) {
	keep := map[childKey]bool{}
	for _, grp := range []struct {
		name       string
		g          *ResourceGroup
		createOnly bool
	}{{"onCreate", r.box.OnCreate, true}, {"onReconcile", r.box.OnReconcile, false}} {
		if grp.g == nil {
			continue
		}
		for _, decl := range objectDecls(grp.name, grp.g, grp.createOnly) {
			if !decl.createOnly && !decl.once {
				continue
			}
			reps, err := expandBounded(decl.res.ForEach, d, r.engine.opts.MaxForEachElements)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", decl.where, err)
			}
			for _, rd := range reps {
				name, err := render(decl.res.Name, rd, decl.where+".name")
				if err != nil {
					return nil, err
				}
				keep[childKey{decl.kind, name}] = true
			}
		}
	}
	return keep, nil
}

// prune deletes the children cr controls that are not in want: those no declaration
// wants any more (their conditions stopped holding, their forEach element is gone) and
// that kept does not protect. Objects cr does not control are never touched, whatever
// their name.
func (r *crdReconciler) prune(ctx context.Context, cr *unstructured.Unstructured, want map[childKey]bool) error {
	var errs []error
	for _, kind := range childKinds {
		children, err := r.ownedChildren(ctx, cr, kind)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, child := range children {
			if want[childKey{kind.key, child.GetName()}] {
				continue
			}
			if _, err := apply.DeleteControlled(ctx, r.engine.applier, cr, kind.newObj(), client.ObjectKeyFromObject(child)); err != nil {
				errs = append(errs, fmt.Errorf("delete %s %s/%s: %w", kind.key, child.GetNamespace(), child.GetName(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// readChildren returns .children: for each kind, <kind> the first child in name order
// and <kind>s all of them, as unstructured maps. Secrets carry their metadata only.
func (r *crdReconciler) readChildren(ctx context.Context, cr *unstructured.Unstructured) (map[string]any, error) {
	out := map[string]any{}
	var errs []error
	for _, kind := range childKinds {
		children, err := r.ownedChildren(ctx, cr, kind)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		all := make([]any, 0, len(children))
		for _, child := range children {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(child)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %w", kind.key, child.GetName(), err))
				continue
			}
			if kind.key == "secret" {
				m = map[string]any{"metadata": m["metadata"], "type": m["type"]}
			}
			delete(m, "managedFields")
			if md, ok := m["metadata"].(map[string]any); ok {
				delete(md, "managedFields")
			}
			all = append(all, m)
		}
		out[kind.plural] = all
		if len(all) > 0 {
			out[kind.key] = all[0]
		}
	}
	return out, errors.Join(errs...)
}
