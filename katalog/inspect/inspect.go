package inspect

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/katalog"
)

// DefaultRefresh is how often the HTML pages reload themselves when Options.Refresh is 0.
const DefaultRefresh = 10 * time.Second

// RecentEvents is the largest number of events the detail of a custom resource shows,
// newest first.
const RecentEvents = 20

// ReadTimeout bounds the reads of one request: the cache reads and the event list.
const ReadTimeout = 3 * time.Second

// EventUIDIndex is the field index of Events on involvedObject.uid that IndexEvents
// registers and the detail of a custom resource lists its events by.
const EventUIDIndex = "involvedObject.uid"

// ErrInvalidOptions is wrapped by the error New returns for options it cannot serve
// with, naming the field.
var ErrInvalidOptions = errors.New("invalid inspector options")

// Health is what the engine reports about one CRD of a Katalog. The health endpoint
// answers 200 when Healthy is true and 503 otherwise.
type Health struct {
	// Healthy: the CRD's cache has synced and its recent reconciles succeed.
	Healthy bool `json:"healthy"`
	// Synced: the CRD's cache of custom resources has synced.
	Synced bool `json:"synced"`
	// LastError is the error of the last failed reconcile, empty when the last one
	// succeeded.
	LastError string `json:"lastError,omitempty"`
	// LastReconcile is when the last reconcile ended; zero before the first.
	LastReconcile time.Time `json:"lastReconcile,omitzero"`
	// Reconciles counts the reconciles since the engine started.
	Reconciles int64 `json:"reconciles"`
	// Failures counts the reconciles that returned an error.
	Failures int64 `json:"failures"`
}

// HealthSource reports the health of a CRD by its name in the Katalog. The engine
// implements it; it is called on every request that shows health, so it must be cheap
// and safe for concurrent use.
type HealthSource interface {
	Health(crd string) Health
}

// Options configure New.
type Options struct {
	// Reader reads custom resources and their children: the manager's cache,
	// mgr.GetCache(), so that showing them sends no request to the API server. Do not
	// pass mgr.GetClient(): unless its client.Options.Cache.Unstructured is true, it
	// reads unstructured objects, and so every custom resource, from the API server.
	// Required.
	Reader client.Reader
	// Events lists the events of a custom resource with the field selector
	// EventUIDIndex, in the resource's namespace; nil means Reader. Give the manager's
	// cache with the index of IndexEvents (or leave it nil), so that a page view sends
	// no request to the API server: an API reader here would LIST events on every view
	// of a custom resource.
	Events client.Reader
	// CRDs are the Katalog entries to show (for example katalog.StartOrder(kats...)).
	// Names must be unique.
	CRDs []*katalog.CRD
	// Health reports each CRD's health. Required.
	Health HealthSource
	// ChildKinds are the kinds searched for a custom resource's children: objects in
	// its namespace whose controller is the custom resource. Empty means the defaults
	// of DefaultOptions.
	ChildKinds []schema.GroupVersionKind
	// Refresh is the period after which the HTML pages reload themselves; 0 means
	// DefaultRefresh and a negative value turns reloading off.
	Refresh time.Duration
}

// DefaultChildKinds are the kinds a Katalog creates for a custom resource: Deployment,
// Service, Secret, ConfigMap, ServiceAccount, Job and CronJob.
func DefaultChildKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Version: "v1", Kind: "Service"},
		{Version: "v1", Kind: "Secret"},
		{Version: "v1", Kind: "ConfigMap"},
		{Version: "v1", Kind: "ServiceAccount"},
		{Group: "batch", Version: "v1", Kind: "Job"},
		{Group: "batch", Version: "v1", Kind: "CronJob"},
	}
}

// DefaultOptions returns Options with the default child kinds and refresh period; set
// Reader, Events, CRDs and Health before passing them to New.
func DefaultOptions() Options {
	return Options{ChildKinds: DefaultChildKinds(), Refresh: DefaultRefresh}
}

// IndexEvents registers EventUIDIndex, the index of Events on involvedObject.uid, on
// a manager's cache (mgr.GetFieldIndexer()), which starts its informer of Events: the
// cache then holds the Events of its namespaces (CacheOptions drops their managed
// fields) and serves a custom resource's events from memory. Call it once, in the
// operator's setup.
func IndexEvents(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &corev1.Event{}, EventUIDIndex, func(o client.Object) []string {
		e, ok := o.(*corev1.Event)
		if !ok || e.InvolvedObject.UID == "" {
			return nil
		}
		return []string{string(e.InvolvedObject.UID)}
	})
	if err != nil {
		return fmt.Errorf("index Events on %s: %w", EventUIDIndex, err)
	}
	return nil
}

// CacheOptions returns base with Events cached without their managed fields, the
// memory the inspector's event lists cost; the namespaces are base's. The other
// entries of base.ByObject are kept (the map is copied, not changed).
func CacheOptions(base cache.Options) cache.Options {
	byObject := maps.Clone(base.ByObject)
	if byObject == nil {
		byObject = map[client.Object]cache.ByObject{}
	}
	var by cache.ByObject
	for obj, b := range byObject { // keys are pointers: find an Events entry by type
		if _, ok := obj.(*corev1.Event); ok {
			by = b
			delete(byObject, obj)
		}
	}
	by.Transform = cache.TransformStripManagedFields()
	byObject[&corev1.Event{}] = by
	base.ByObject = byObject
	return base
}

// New returns the handler of the inspector's JSON and HTML routes (see the package
// documentation). Mount it at the root of a mux for the paths /katalog/ and
// /controlcenter/, or serve it with NewServer. New fails with ErrInvalidOptions when
// Reader or Health is nil, or when a CRD entry is nil, has an invalid name or repeats
// a name.
func New(opts Options) (http.Handler, error) {
	return newHandler(opts, time.Now)
}

// newHandler is New with the clock that ages are measured against.
func newHandler(opts Options, now func() time.Time) (http.Handler, error) {
	switch {
	case opts.Reader == nil:
		return nil, fmt.Errorf("%w: Reader is nil", ErrInvalidOptions)
	case opts.Health == nil:
		return nil, fmt.Errorf("%w: Health is nil", ErrInvalidOptions)
	}
	s := &server{opts: opts, byName: make(map[string]*katalog.CRD, len(opts.CRDs)), now: now}
	for i, crd := range opts.CRDs {
		if crd == nil {
			return nil, fmt.Errorf("%w: CRDs[%d] is nil", ErrInvalidOptions, i)
		}
		if errs := validation.IsDNS1123Label(crd.Name); len(errs) > 0 {
			return nil, fmt.Errorf("%w: CRDs[%d].Name %q: %s", ErrInvalidOptions, i, crd.Name, errs[0])
		}
		if _, dup := s.byName[crd.Name]; dup {
			return nil, fmt.Errorf("%w: CRDs[%d].Name %q is given twice", ErrInvalidOptions, i, crd.Name)
		}
		s.byName[crd.Name] = crd
	}
	if len(s.opts.ChildKinds) == 0 {
		s.opts.ChildKinds = DefaultChildKinds()
	}
	if s.opts.Refresh == 0 {
		s.opts.Refresh = DefaultRefresh
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	s.pages = pages
	return s.routes(), nil
}

// server holds what every request reads; it is immutable after New.
type server struct {
	opts   Options
	byName map[string]*katalog.CRD
	pages  pages
	now    func() time.Time
}
