package katalog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/outbound"
	sdkreconcile "github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/shard"
)

// Labels and the finalizer the engine puts on what it manages.
const (
	// OwnerLabel carries the name of the custom resource a child was made for (shortened
	// with apply.ClaimLabelValue when it is not a valid label value).
	OwnerLabel = "katalog.orkspace.io/owner"
	// CRDLabel carries the short name of the CRD entry whose custom resource made the child.
	CRDLabel = "katalog.orkspace.io/crd"
	// AppLabel selects the pods of a declared Deployment: its pod template carries it with
	// the Deployment's name, and a declared Service selects it by default.
	AppLabel = "katalog.orkspace.io/app"
	// Finalizer holds a custom resource whose CRD declares onDelete until the onDelete
	// objects were created and its Jobs finished, or until onDelete was given up
	// (EngineOptions.OnDeleteGiveUpAfter) or skipped in a namespace being deleted.
	Finalizer = "katalog.orkspace.io/finalizer"
	// OnDeleteJobAnnotation marks a Job written by onDelete: its value is the UID of the
	// custom resource whose deletion it cleans up after. Only a Job that carries it with
	// that UID ends the wait for an onDelete Job; a Job of the same name without it (an
	// onCreate Job of that name, say) is never taken for the cleanup.
	OnDeleteJobAnnotation = "katalog.orkspace.io/ondelete-of"
)

// Bounds of the engine; EngineOptions changes them.
const (
	// DefaultMaxForEachElements is how many elements one forEach expands to for one
	// custom resource, at most: a list or map field with more gives Ready False naming
	// the declaration and the field, and none of that declaration's repetitions is
	// written.
	DefaultMaxForEachElements = 256
	// DefaultOnDeleteGiveUpAfter is how long onDelete keeps trying after a custom
	// resource's deletion started (its deletionTimestamp) before it gives up and removes
	// Finalizer: 10 minutes.
	DefaultOnDeleteGiveUpAfter = 10 * time.Minute
)

// Condition types and reasons the engine writes on every custom resource.
const (
	// ReasonReconciled: the pass created, updated and read back everything declared.
	ReasonReconciled = "Reconciled"
	// ReasonReconcileFailed: a step of the pass failed; the message names it.
	ReasonReconcileFailed = "ReconcileFailed"
	// ReasonValidationFailed: a deny validation rule does not hold; the message names the field.
	ReasonValidationFailed = "ValidationFailed"
	// ReasonWaitingForDependency: a CRD of dependsOn has not reached its state yet for the
	// custom resource's namespace; the message names it (and the namespace). Nothing else
	// is done until it has.
	ReasonWaitingForDependency = "WaitingForDependency"
	// ReasonDeleting: the onDelete Jobs are still running; the message says when onDelete
	// gives up.
	ReasonDeleting = "Deleting"
	// ReasonValidationWarning is the reason of the Warning event of a failed warn rule.
	ReasonValidationWarning = "ValidationWarning"
	// ReasonOnDeleteJobFailed is the reason of the Warning event on a custom resource whose
	// onDelete Job failed for good; the event names the Job (namespace/name) and relates to
	// it. The finalizer is removed all the same, so that a cleanup that cannot succeed does
	// not block the deletion forever; the event is how the failure is seen.
	ReasonOnDeleteJobFailed = "OnDeleteJobFailed"
	// ReasonOnDeleteAbandoned is the reason of the Warning event on a custom resource
	// whose onDelete did not succeed within EngineOptions.OnDeleteGiveUpAfter of its
	// deletion (a call that keeps failing, a Job that never finishes): the event names
	// the custom resource and the last reason, and Finalizer is removed, so the cleanup
	// onDelete does may not have happened.
	ReasonOnDeleteAbandoned = "OnDeleteAbandoned"
	// ReasonOnDeleteSkipped is the reason of the Warning event on a custom resource being
	// deleted in a namespace that is being deleted itself: nothing can be created there,
	// so onDelete is not run at all (no call made, no object or Job written) and
	// Finalizer is removed at once. The API server may refuse the event in such a
	// namespace; the engine logs it as well.
	ReasonOnDeleteSkipped = "OnDeleteSkipped"
)

// Errors of the engine. Test for them with errors.Is.
var (
	// ErrEngine reports a Katalog the engine cannot run, or an EngineOptions it refuses.
	ErrEngine = errors.New("cannot start Katalog engine")
	// ErrUnknownCRD reports a CRD name that no enabled entry of the engine's Katalogs has.
	ErrUnknownCRD = errors.New("unknown CRD")
	// ErrExternalCall reports an external call that failed or answered another status
	// than expected, without continueOnError.
	ErrExternalCall = errors.New("external call failed")
	// ErrRender reports a template or value of a declaration that cannot be used for the
	// custom resource at hand (a template error, a port that is no number).
	ErrRender = errors.New("cannot render declaration")
	// ErrForEachTooLarge reports a forEach whose list or map field holds more elements
	// than EngineOptions.MaxForEachElements; it comes wrapped together with ErrRender.
	ErrForEachTooLarge = errors.New("forEach has too many elements")
	// ErrOnDeleteJobConflict reports an onDelete Job whose name is taken by a Job that
	// this deletion's onDelete did not write (it lacks OnDeleteJobAnnotation with the
	// custom resource's UID): the onDelete Job cannot be created, and the other Job is
	// not taken for the cleanup.
	ErrOnDeleteJobConflict = errors.New("onDelete Job name taken by another Job")
	// ErrCrossNamespace reports a cross selector that names another namespace than the
	// reading custom resource's own, when the Katalog's cross entry does not set
	// allowCrossNamespace or the target CRD does not operate that namespace; nothing is
	// read, and the pass fails with Ready False naming the cross entry and the field.
	ErrCrossNamespace = errors.New("cross reference outside the custom resource's namespace")
)

// EngineOptions configure NewEngine.
type EngineOptions struct {
	// FieldManager is the field manager of every write (children, mutation defaults,
	// finalizers, status) and the name of the event recorder; default "katalog".
	FieldManager string
	// Shard, when set, makes this engine one of N active replicas: each CRD's controller
	// reconciles only the custom resources of the member's ranges (shard.Gate) and
	// requeues those of the ranges it gains (shard.Requeue). Its caches hold every
	// custom resource, as cross references read them. katalog --sharded sets it.
	Shard *shard.Member
	// HealthWindow is the number N of most recent reconciles a CRD's health looks at:
	// the CRD is healthy when its informer has synced and none of them failed. dependsOn
	// healthy looks at the last N reconciles in the waiting custom resource's namespace.
	// Default 3.
	HealthWindow int
	// DependencyRetry is how soon a custom resource whose CRD waits for a dependsOn target
	// is reconciled again; default 5s.
	DependencyRetry time.Duration
	// DeletionPoll is how soon a custom resource being deleted is reconciled again while
	// its onDelete Jobs run; default 5s.
	DeletionPoll time.Duration
	// OnDeleteGiveUpAfter bounds how long onDelete keeps trying, counted from the custom
	// resource's deletionTimestamp: the first pass after it that finds onDelete not done
	// records a Warning event (ReasonOnDeleteAbandoned) and removes Finalizer. Zero
	// means DefaultOnDeleteGiveUpAfter. A pass that fails with an error is retried with
	// the controller's backoff, so the finalizer goes at the first retry after the bound.
	OnDeleteGiveUpAfter time.Duration
	// MaxForEachElements bounds the elements one forEach expands to for one custom
	// resource; above it the declaration is not written and Ready is False naming it
	// (ErrForEachTooLarge). Zero means DefaultMaxForEachElements.
	MaxForEachElements int
	// Outbound says where external calls may connect and which redirects they follow.
	// The zero value, the default, refuses destinations that are loopback (127.0.0.0/8,
	// ::1), link-local (169.254.0.0/16 with the cloud metadata services, fe80::/10),
	// unspecified or multicast, judged on the address being dialled after name
	// resolution ("localhost" included), and every redirect to another host or from
	// https to http; such a call is not sent, and the pass fails with Ready False, reason
	// ReasonExternalCallRefused, naming the call and the refused host and address.
	// AllowCIDRs, AllowHosts and AllowCrossHostRedirects open those doors (the katalog
	// command's --outbound-allow and --outbound-allow-cross-host-redirects).
	Outbound outbound.Policy
	// HTTPClient makes the external calls; default nil: a client built from Outbound
	// (Outbound.Client), without a timeout of its own (each call has its declared
	// timeout, 10s by default) and without a proxy. A client given here connects through
	// its own Transport: Outbound's address rules apply to it only when that Transport
	// comes from Outbound.Transport or Outbound.GuardTransport. Its redirects are checked
	// by Outbound all the same: the engine calls through a copy whose CheckRedirect is
	// Outbound.CheckRedirect(HTTPClient.CheckRedirect), so a redirect to another host is
	// not followed unless Outbound.AllowCrossHostRedirects is set.
	HTTPClient *http.Client
	// ExternalCallsPerPass bounds the external calls one pass makes, its groups
	// (onCreate, onReconcile, onDelete) together: the call past it is not made, and the
	// pass fails with Ready False, reason ReasonExternalCallBudgetExceeded, naming the call
	// and the budget (continueOnError does not apply). Zero means
	// DefaultExternalCallsPerPass.
	ExternalCallsPerPass int
	// Recorder emits the Warning events of warn validation rules and of failed onDelete
	// Jobs; default the manager's recorder named FieldManager.
	Recorder events.EventRecorder
	// Metrics records the duration and errors of every step of every pass, under the
	// sub_reconciler label "<crd>/<step>"; nil records none. Build it with
	// reconcile.NewMetrics(reconcile.DefaultMetricsOptions(MetricsPrefix)).
	Metrics *sdkreconcile.Metrics
}

// MetricsPrefix starts the names of the step metrics the katalog command records:
// katalog_reconcile_duration_seconds and katalog_reconcile_errors_total.
const MetricsPrefix = "katalog"

// DefaultEngineOptions returns the defaults described on EngineOptions.
func DefaultEngineOptions() EngineOptions {
	return EngineOptions{
		FieldManager:    "katalog",
		HealthWindow:    3,
		DependencyRetry: 5 * time.Second,
		DeletionPoll:    5 * time.Second,

		OnDeleteGiveUpAfter: DefaultOnDeleteGiveUpAfter,
		MaxForEachElements:  DefaultMaxForEachElements,

		ExternalCallsPerPass: DefaultExternalCallsPerPass,
	}
}

// Engine runs Katalogs on a controller-runtime manager: one controller per enabled CRD
// entry, reconciling its custom resources as unstructured objects.
type Engine struct {
	mgr     manager.Manager
	opts    EngineOptions
	applier *apply.Applier
	// reader serves the custom resources and cross references: the manager's cache.
	reader client.Reader
	// apiReader reads past the cache, for a status write that conflicted.
	apiReader client.Reader
	scheme    *runtime.Scheme
	crds      map[string]*CRD
	health    map[string]*health
	recs      map[string]*crdReconciler
}

// NewEngine registers, on mgr, one controller per enabled CRD entry of kats. Each
// controller watches the entry's custom resources (For, as unstructured objects of its
// group, version and kind) and the Deployments, Services, Secrets, ConfigMaps,
// ServiceAccounts, Jobs and CronJobs they control (Owns), and runs Workers concurrent
// reconciles. Every write goes through an apply.Applier over mgr's client under
// opts.FieldManager. The controllers start with the manager.
//
// Custom resources, cross references and children are read from mgr's cache. A CRD entry
// with allowedNamespaces or restrictedNamespaces reconciles only the custom resources its
// namespaces admit: its controller drops the events of other namespaces, and the pass
// checks the namespace again; give mgr's cache the options of CacheOptions too, so that a
// CRD with exactly one allowed namespace is watched in that namespace only.
//
// kats must come from Load, Parse or LoadAll (they are checked there); a Katalog whose
// CRDs collide with each other's is refused with an error wrapping ErrEngine.
func NewEngine(mgr manager.Manager, kats []*Katalog, opts EngineOptions) (*Engine, error) {
	def := DefaultEngineOptions()
	if opts.FieldManager == "" {
		opts.FieldManager = def.FieldManager
	}
	if opts.HealthWindow <= 0 {
		opts.HealthWindow = def.HealthWindow
	}
	if opts.DependencyRetry <= 0 {
		opts.DependencyRetry = def.DependencyRetry
	}
	if opts.DeletionPoll <= 0 {
		opts.DeletionPoll = def.DeletionPoll
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = opts.Outbound.Client(0) // one Transport, its connections reused
	}
	if opts.ExternalCallsPerPass <= 0 {
		opts.ExternalCallsPerPass = def.ExternalCallsPerPass
	}
	if opts.OnDeleteGiveUpAfter <= 0 {
		opts.OnDeleteGiveUpAfter = def.OnDeleteGiveUpAfter
	}
	if opts.MaxForEachElements <= 0 {
		opts.MaxForEachElements = def.MaxForEachElements
	}
	if opts.Recorder == nil {
		opts.Recorder = mgr.GetEventRecorder(opts.FieldManager)
	}
	e := &Engine{
		mgr:  mgr,
		opts: opts,
		applier: apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{
			FieldManager: opts.FieldManager, APIReader: mgr.GetAPIReader(),
		}),
		reader:    mgr.GetCache(),
		apiReader: mgr.GetAPIReader(),
		scheme:    mgr.GetScheme(),
		crds:      map[string]*CRD{},
		health:    map[string]*health{},
		recs:      map[string]*crdReconciler{},
	}
	for _, k := range kats {
		if k == nil {
			return nil, fmt.Errorf("%w: nil Katalog", ErrEngine)
		}
		for name, c := range k.Spec.CRDs {
			if !c.IsEnabled() {
				continue
			}
			if _, dup := e.crds[name]; dup {
				return nil, fmt.Errorf("%w: CRD %s is declared twice (load the Katalogs together with LoadAll)", ErrEngine, name)
			}
			e.crds[name] = c
		}
	}
	if len(e.crds) == 0 {
		return nil, fmt.Errorf("%w: no enabled CRD", ErrEngine)
	}
	for _, name := range e.CRDs() {
		c := e.crds[name]
		for dep := range c.DependsOn {
			if _, ok := e.crds[dep]; !ok {
				return nil, fmt.Errorf("%w: CRD %s depends on %s, which is not enabled", ErrEngine, name, dep)
			}
		}
		if c.OperatorBox != nil {
			for _, x := range c.OperatorBox.Cross {
				if _, ok := e.crds[x.CRD]; !ok {
					return nil, fmt.Errorf("%w: CRD %s reads cross %s, which is not enabled", ErrEngine, name, x.CRD)
				}
			}
		}
		e.health[name] = newHealth(opts.HealthWindow)
		r, err := newCRDReconciler(e, c)
		if err != nil {
			return nil, fmt.Errorf("%w: steps of CRD %s: %w", ErrEngine, name, err)
		}
		e.recs[name] = r
		ns := namespaceFilter{allowed: c.AllowedNamespaces, restricted: c.RestrictedNamespaces}
		b := ctrl.NewControllerManagedBy(mgr).
			Named("katalog-"+name).
			For(newCR(c), builderForPredicate(ns)).
			WithOptions(controller.Options{MaxConcurrentReconciles: c.WorkerCount()})
		for _, owned := range []client.Object{
			&appsv1.Deployment{}, &corev1.Service{}, &corev1.Secret{}, &corev1.ConfigMap{},
			&corev1.ServiceAccount{}, &batchv1.Job{}, &batchv1.CronJob{},
		} {
			b = b.Owns(owned)
		}
		for _, other := range crossCRDs(c) {
			b = b.Watches(newCR(e.crds[other]), handler.EnqueueRequestsFromMapFunc(e.enqueueCrossReaders(c, other)))
		}
		var rec reconcile.Reconciler = r
		if m := opts.Shard; m != nil {
			rec = shard.Gate(m, mgr.GetClient(), func() *unstructured.Unstructured { return newCR(c) }, rec)
			b = b.WatchesRawSource(shard.Requeue(m, mgr.GetClient(), func() client.ObjectList {
				list := &unstructured.UnstructuredList{}
				list.SetGroupVersionKind(c.GroupVersionKind().GroupVersion().WithKind(c.APITypes.Kind + "List"))
				return list
			}))
		}
		if err := b.Complete(rec); err != nil {
			return nil, fmt.Errorf("%w: controller of CRD %s: %w", ErrEngine, name, err)
		}
	}
	return e, nil
}

// crossCRDs returns the CRDs c's cross references read, sorted and without duplicates.
func crossCRDs(c *CRD) []string {
	set := map[string]bool{}
	if c.OperatorBox != nil {
		for _, x := range c.OperatorBox.Cross {
			set[x.CRD] = true
		}
	}
	return sortedKeys(set)
}

// enqueueCrossReaders maps a change of a custom resource of the CRD other to the custom
// resources of c that read it: those with a cross declaration of other whose selector,
// rendered against their own data as the pass renders it, names the changed object
// (selector.namespace empty: the reader's own namespace). A declaration reads only in
// the reader's namespace unless it sets allowCrossNamespace and other operates the
// changed object's namespace (crossNamespaceAllowed), as in the pass: the readers are
// listed from the cache in the changed object's namespace, or in every namespace when
// one of those declarations sets allowCrossNamespace and selector.namespace. A reader
// whose selector cannot be rendered without the pass (a template error, or a selector
// that uses .cross, filled only while the pass reads the cross references in order) is
// enqueued anyway when the declaration may read the changed object's namespace: its
// pass reports the error or reads what it selects. Readers in namespaces c does not
// admit are left out.
func (e *Engine) enqueueCrossReaders(c *CRD, other string) handler.MapFunc {
	var decls []CrossRef
	anyNamespace := false
	for _, x := range c.OperatorBox.Cross {
		if x.CRD != other {
			continue
		}
		decls = append(decls, x)
		anyNamespace = anyNamespace || (x.AllowCrossNamespace && !x.Selector.Namespace.IsZero())
	}
	ns := namespaceFilter{allowed: c.AllowedNamespaces, restricted: c.RestrictedNamespaces}
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(c.GroupVersionKind().GroupVersion().WithKind(c.APITypes.Kind + "List"))
		var opts []client.ListOption
		if !anyNamespace {
			if !ns.admits(obj.GetNamespace()) {
				return nil // no reader there is reconciled (nor, with one allowed namespace, cached)
			}
			opts = append(opts, client.InNamespace(obj.GetNamespace()))
		}
		if err := e.reader.List(ctx, list, opts...); err != nil {
			log.FromContext(ctx).Error(err, "list custom resources to reconcile after a cross-referenced change", "crd", c.Name)
			return nil
		}
		var out []reconcile.Request
		for i := range list.Items {
			reader := &list.Items[i]
			if ns.admits(reader.GetNamespace()) && e.selectsAny(decls, reader, obj) {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(reader)})
			}
		}
		return out
	}
}

// selectsAny reports whether one of decls, rendered against reader's data, selects obj,
// or cannot be rendered without the pass (see enqueueCrossReaders). A declaration that
// may not read obj's namespace (crossNamespaceAllowed) selects nothing there.
func (e *Engine) selectsAny(decls []CrossRef, reader *unstructured.Unstructured, obj client.Object) bool {
	d := newPassData(reader)
	for _, x := range decls {
		if e.crossNamespaceAllowed(x, reader.GetNamespace(), obj.GetNamespace()) != nil {
			continue
		}
		if usesCross(x.Selector.Name) || usesCross(x.Selector.Namespace) {
			return true
		}
		key, err := x.selected(d, reader)
		if err != nil || key == client.ObjectKeyFromObject(obj) {
			return true
		}
	}
	return false
}

// usesCross reports whether t refers to .cross, which holds only what the pass has read.
func usesCross(t Template) bool { return strings.Contains(t.Text, ".cross") }

// CRDs returns the names of the enabled CRD entries the engine runs, sorted.
func (e *Engine) CRDs() []string {
	out := make([]string, 0, len(e.crds))
	for name := range e.crds {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// CRD returns the enabled entry called name, or nil.
func (e *Engine) CRD(name string) *CRD { return e.crds[name] }

// FieldManager is the field manager the engine writes under.
func (e *Engine) FieldManager() string { return e.opts.FieldManager }

// newCR returns an empty unstructured custom resource of c's kind.
func newCR(c *CRD) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(c.GroupVersionKind())
	return u
}

// CacheOptions returns base with one cache.ByObject entry added for every enabled CRD
// entry of kats that allows exactly one namespace: its custom resources are then listed
// and watched in that namespace only, so the manager never holds the others. Pass the
// result as ctrl.Options.Cache of the manager given to NewEngine.
func CacheOptions(base cache.Options, kats ...*Katalog) cache.Options {
	for _, k := range kats {
		for _, c := range k.Spec.CRDs {
			if !c.IsEnabled() || len(c.AllowedNamespaces) != 1 {
				continue
			}
			if base.ByObject == nil {
				base.ByObject = map[client.Object]cache.ByObject{}
			}
			base.ByObject[newCR(c)] = cache.ByObject{
				Namespaces: map[string]cache.Config{c.AllowedNamespaces[0]: {}},
			}
		}
	}
	return base
}

// namespaceFilter admits the namespaces of allowedNamespaces (all when empty) that are
// not in restrictedNamespaces.
type namespaceFilter struct {
	allowed, restricted []string
}

func (f namespaceFilter) admits(ns string) bool {
	if len(f.allowed) > 0 && !slices.Contains(f.allowed, ns) {
		return false
	}
	return !slices.Contains(f.restricted, ns)
}

func (f namespaceFilter) empty() bool { return len(f.allowed) == 0 && len(f.restricted) == 0 }

// builderForPredicate drops the events of custom resources in namespaces f does not admit.
func builderForPredicate(f namespaceFilter) builder.ForOption {
	if f.empty() {
		return builder.WithPredicates()
	}
	return builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return f.admits(o.GetNamespace()) }))
}
