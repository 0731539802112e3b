package apply

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultMaxTracked bounds how many applied objects an Applier remembers for its skip.
const DefaultMaxTracked = 100_000

// ApplierOptions configure an Applier.
type ApplierOptions struct {
	// FieldManager is the operator's own field-manager name. Every write the SDK's
	// helpers make through the Applier is made under it: where a helper names
	// FieldManager (the SDK's default) or no field manager at all, the Applier puts
	// this name instead. Empty means FieldManager.
	FieldManager string
	// DisableSkip turns the converged-apply skip off: every EnsureObject through the
	// Applier sends its apply (naive Server-Side Apply).
	DisableSkip bool
	// MaxTracked bounds the objects remembered for the skip; zero means
	// DefaultMaxTracked. When full, an arbitrary entry is forgotten (its next apply is
	// sent, then it is remembered again).
	MaxTracked int
	// APIReader (the manager's GetAPIReader()) confirms a not-found answer of the
	// wrapped client for the kinds CacheOptions caches by label only (Secrets and
	// ConfigMaps): such a cache does not hold an object without the label, so a Get it
	// cannot answer is read from the API server. EnsureObject reads through it only
	// once its create has found an object (package documentation, "Cache
	// memory that does not grow with the cluster"). Nil reads only through the client.
	APIReader client.Reader
	// Remote, when set, makes the Applier write to a target cluster whose owners live on
	// the management cluster Remote names: the helpers claim children with labels
	// instead of an owner reference ("Target clusters" in the package documentation).
	// Nil: controller owner references. An invalid one is refused before any API call.
	Remote *RemoteOwnership
	// OwnerLabels, when set, gives labels the Applier adds, next to ManagedByLabel, to
	// every object it writes for an owner: EnsureObject (and every helper built on it)
	// passes the owner's UID, Create the UID of the object's controller owner
	// reference. A sharded operator sets it to shard.OwnerLabels, the bucket label by
	// which each replica's informers may select the children of its own custom
	// resources. Nil adds none.
	OwnerLabels func(owner types.UID) map[string]string
	// SelectedCache declares that the manager's cache holds, of every kind the Applier
	// writes, only the objects carrying its labels (a sharded replica's children
	// informers, selected by shard's bucket label): a miss is then confirmed for every
	// kind as it is for Secrets and ConfigMaps under CacheOptions (a create,
	// a read through APIReader once it finds an object), so an object the cache does
	// not show is never taken for missing. It needs APIReader.
	SelectedCache bool
}

// DefaultApplierOptions returns the options NewApplier uses for a nil-valued field:
// FieldManager, the skip on, DefaultMaxTracked.
func DefaultApplierOptions() ApplierOptions {
	return ApplierOptions{FieldManager: FieldManager, MaxTracked: DefaultMaxTracked}
}

// Applier is a client.Client, built once per manager (or controller), that carries the
// operator's field manager and remembers what it applied, so that a converged EnsureObject
// sends no request at all. Pass it wherever the SDK takes a client.Client (package
// documentation, "The Applier"). It is safe for concurrent use.
type Applier struct {
	client.Client
	opts  ApplierOptions
	state *skipState
}

// NewApplier wraps c (normally the manager's client, so reads come from its informers)
// into an Applier. opts.Remote is copied: changing it afterwards does not change the
// Applier.
func NewApplier(c client.Client, opts ApplierOptions) *Applier {
	def := DefaultApplierOptions()
	if opts.FieldManager == "" {
		opts.FieldManager = def.FieldManager
	}
	if opts.MaxTracked <= 0 {
		opts.MaxTracked = def.MaxTracked
	}
	if opts.Remote != nil {
		remote := *opts.Remote
		opts.Remote = &remote
	}
	return &Applier{Client: c, opts: opts, state: &skipState{max: opts.MaxTracked, entries: map[skipKey]skipEntry{}}}
}

// FieldManager returns the field-manager name the Applier writes under.
func (a *Applier) FieldManager() string { return a.opts.FieldManager }

// Remote returns a copy of the Applier's remote ownership (ApplierOptions.Remote), nil
// when children get a controller owner reference.
func (a *Applier) Remote() *RemoteOwnership {
	if a.opts.Remote == nil {
		return nil
	}
	remote := *a.opts.Remote
	return &remote
}

// Tracked returns how many applied objects the Applier remembers for its skip.
func (a *Applier) Tracked() int { return a.state.len() }

// label stamps ManagedByLabel, and the OwnerLabels of owner when it is not empty, on
// an object the Applier writes (ManagedByLabel wins over an OwnerLabels key of its name).
// The object's labels map is never written to: a builder may share it with a selector
// or a pod template. When a label is missing or differs, obj gets a copy with them.
func (a *Applier) label(obj metav1.Object, owner types.UID) {
	var extra map[string]string
	if a.opts.OwnerLabels != nil && owner != "" {
		extra = a.opts.OwnerLabels(owner)
	}
	labels := obj.GetLabels()
	missing := labels[ManagedByLabel] != a.opts.FieldManager
	for k, v := range extra {
		if got, ok := labels[k]; k != ManagedByLabel && (!ok || got != v) {
			missing = true
		}
	}
	if !missing {
		return
	}
	out := make(map[string]string, len(labels)+len(extra)+1)
	maps.Copy(out, labels)
	for k, v := range extra {
		out[k] = v
	}
	out[ManagedByLabel] = a.opts.FieldManager // OwnerLabels never replace it
	obj.SetLabels(out)
}

// controllerUID is the UID of obj's controller owner reference, "" without one.
func controllerUID(obj metav1.Object) types.UID {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return ref.UID
	}
	return ""
}

// confirmsMisses reports whether a cache miss of obj's kind must be confirmed: its
// cache holds only labelled objects (CacheOptions' Secrets and ConfigMaps, or every
// kind with SelectedCache).
func (a *Applier) confirmsMisses(obj client.Object) bool {
	return a.opts.SelectedCache || labelFiltered(obj)
}

// FieldManagerFor returns the field manager the SDK's helpers write under through c:
// the name of the Applier c carries ([ApplierOf]), else FieldManager.
func FieldManagerFor(c client.Client) string {
	if a := ApplierOf(c); a != nil {
		return a.opts.FieldManager
	}
	return FieldManager
}

// fieldManagerFor resolves the field manager a write through c uses: an Applier's own
// name replaces the SDK's default.
func fieldManagerFor(c client.Client, requested string) string {
	if requested == FieldManager || requested == "" {
		return FieldManagerFor(c)
	}
	return requested
}

// owner returns the field-owner option to use for a write that asked for opts.
func (a *Applier) owner(requested string) client.FieldOwner {
	if requested == FieldManager || requested == "" {
		return client.FieldOwner(a.opts.FieldManager)
	}
	return client.FieldOwner(requested)
}

// Create creates obj under the Applier's field manager (see ApplierOptions.FieldManager).
func (a *Applier) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	a.label(obj, controllerUID(obj))
	co := (&client.CreateOptions{}).ApplyOptions(opts)
	co.FieldManager = string(a.owner(co.FieldManager))
	return a.Client.Create(ctx, obj, co)
}

// Update updates obj under the Applier's field manager.
func (a *Applier) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	uo := (&client.UpdateOptions{}).ApplyOptions(opts)
	uo.FieldManager = string(a.owner(uo.FieldManager))
	return a.Client.Update(ctx, obj, uo)
}

// Patch patches obj under the Applier's field manager.
func (a *Applier) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	po := (&client.PatchOptions{}).ApplyOptions(opts)
	po.FieldManager = string(a.owner(po.FieldManager))
	return a.Client.Patch(ctx, obj, patch, po)
}

// Apply applies obj under the Applier's field manager.
func (a *Applier) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	ao := (&client.ApplyOptions{}).ApplyOptions(opts)
	ao.FieldManager = string(a.owner(ao.FieldManager))
	return a.Client.Apply(ctx, obj, ao)
}

// Get reads through the wrapped client; for a label-filtered kind (see CacheOptions, and
// every kind with ApplierOptions.SelectedCache) a not-found answer is confirmed through ApplierOptions.APIReader, so an object the
// operator did not label (a user's Secret, an override ConfigMap) is still found.
func (a *Applier) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := a.Client.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) && a.opts.APIReader != nil && a.confirmsMisses(obj) && !unconfirmed(ctx) {
		return a.opts.APIReader.Get(ctx, key, obj, opts...)
	}
	return err
}

// unconfirmedKey marks a context whose Gets through an Applier answer a miss of a
// label-filtered cache with the cache's not-found, without reading through the
// APIReader.
type unconfirmedKey struct{}

func withUnconfirmed(ctx context.Context) context.Context {
	return context.WithValue(ctx, unconfirmedKey{}, true)
}

func unconfirmed(ctx context.Context) bool {
	v, _ := ctx.Value(unconfirmedKey{}).(bool)
	return v
}

// createsUnconfirmed reports whether EnsureObject of obj (at key) through a may take a
// miss of the label-filtered cache for missing and send its create ("Creating" in the
// package documentation) instead of confirming the miss through the APIReader first: the
// kind is label-filtered, an APIReader is set, and the Applier does not remember
// applying the object (a remembered one missing from the cache is more likely an
// informer that has not caught up than a missing object).
func (a *Applier) createsUnconfirmed(obj client.Object, k skipKey) bool {
	if a == nil || a.opts.APIReader == nil || !a.confirmsMisses(obj) {
		return false
	}
	_, known := a.state.get(k)
	return !known
}

// Delete deletes obj and forgets what the Applier remembered of it.
func (a *Applier) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	err := a.Client.Delete(ctx, obj, opts...)
	if err == nil {
		a.state.forgetObject(obj)
	}
	return err
}

// Status returns the status writer of the wrapped client, writing under the Applier's
// field manager.
func (a *Applier) Status() client.SubResourceWriter {
	return &applierStatus{SubResourceWriter: a.Client.Status(), a: a}
}

type applierStatus struct {
	client.SubResourceWriter
	a *Applier
}

func (s *applierStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	uo := (&client.SubResourceUpdateOptions{}).ApplyOptions(opts)
	uo.FieldManager = string(s.a.owner(uo.FieldManager))
	return s.SubResourceWriter.Update(ctx, obj, uo)
}

func (s *applierStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	po := (&client.SubResourcePatchOptions{}).ApplyOptions(opts)
	po.FieldManager = string(s.a.owner(po.FieldManager))
	return s.SubResourceWriter.Patch(ctx, obj, patch, po)
}

// skipKey names one applied object.
type skipKey struct {
	gvk       schema.GroupVersionKind
	namespace string
	name      string
}

// skipEntry is what the Applier remembers of its last apply of one object.
type skipEntry struct {
	uid types.UID
	// desired is the digest of the body applied (the desired object after stripping,
	// owner reference included) and the field manager.
	desired [sha256.Size]byte
	// managed is the digest of the field manager's Apply entry of managedFields in the
	// server's answer: it changes when anyone takes or removes one of our fields.
	managed [sha256.Size]byte
}

type skipState struct {
	mu      sync.Mutex
	max     int
	entries map[skipKey]skipEntry
}

func (s *skipState) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

func (s *skipState) get(k skipKey) (skipEntry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[k]
	return e, ok
}

func (s *skipState) put(k skipKey, e skipEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[k]; !ok && len(s.entries) >= s.max {
		for old := range s.entries {
			delete(s.entries, old)
			break
		}
	}
	s.entries[k] = e
}

func (s *skipState) forget(k skipKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, k)
}

// forgetObject drops every entry for obj's namespace/name (of any kind: the Delete
// caller's object may carry no GVK).
func (s *skipState) forgetObject(obj client.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.entries {
		if k.namespace == obj.GetNamespace() && k.name == obj.GetName() &&
			(obj.GetUID() == "" || obj.GetUID() == e.uid) {
			delete(s.entries, k)
		}
	}
}

// digestDesired digests the desired object as the caller built it, its server-owned
// metadata left out (a copy is digested), and the field manager.
func digestDesired(obj client.Object, fieldManager string) ([sha256.Size]byte, error) {
	c := obj
	if hasServerMetadata(obj) {
		copied, ok := obj.DeepCopyObject().(client.Object)
		if !ok {
			return [sha256.Size]byte{}, fmt.Errorf("%T copies into a type that is no client.Object", obj)
		}
		clearServerMetadata(copied)
		c = copied
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	h := sha256.New()
	h.Write([]byte(fieldManager))
	h.Write([]byte{0})
	h.Write(raw)
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out, nil
}

// digestManaged digests fieldManager's Apply entry of obj's managedFields, or, when it
// has none, the Update entry of CreateFieldManager(fieldManager) that EnsureObject's
// create left; ok is false when there is neither.
func digestManaged(obj metav1.Object, fieldManager string) ([sha256.Size]byte, bool) {
	entry, ok := appliedEntry(obj, fieldManager)
	if !ok {
		if entry, ok = CreatedEntry(obj, fieldManager); !ok {
			return [sha256.Size]byte{}, false
		}
	}
	h := sha256.New()
	h.Write([]byte(entry.Operation))
	h.Write([]byte{0})
	h.Write([]byte(entry.APIVersion))
	h.Write([]byte{0})
	if entry.FieldsV1 != nil {
		h.Write(entry.FieldsV1.GetRawBytes())
	}
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out, true
}

// appliedEntry returns fieldManager's Apply entry of obj's managedFields (not of a
// subresource), if any.
func appliedEntry(obj metav1.Object, fieldManager string) (metav1.ManagedFieldsEntry, bool) {
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "" {
			return mf, true
		}
	}
	return metav1.ManagedFieldsEntry{}, false
}

// converged reports whether the Applier's last apply of key sent the same desired body
// to this very object (same UID) and the object's managedFields still hold our entry as
// that apply left it: nobody took, removed or changed one of our fields since.
func (s *skipState) converged(k skipKey, existing client.Object, desired [sha256.Size]byte, fieldManager string) bool {
	e, ok := s.get(k)
	if !ok || e.uid != existing.GetUID() || e.desired != desired {
		return false
	}
	managed, ok := digestManaged(existing, fieldManager)
	return ok && managed == e.managed
}

// remember records the server's answer u to an apply of the desired body.
func (s *skipState) remember(k skipKey, u *unstructured.Unstructured, desired [sha256.Size]byte, fieldManager string) {
	managed, ok := digestManaged(u, fieldManager)
	if !ok {
		s.forget(k)
		return
	}
	s.put(k, skipEntry{uid: u.GetUID(), desired: desired, managed: managed})
}
