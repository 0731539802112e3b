package satellite

import (
	"cmp"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CollectParams are the inputs of [Collect]: T is the satellite's Go type and PT its
// pointer. Build Items from a List with &list.Items[i] for each i.
type CollectParams[T any, PT interface {
	*T
	client.Object
}] struct {
	// Items are the satellites that name the parent, in any order. Nil entries are
	// skipped.
	Items []PT
	// Gate reports whether a satellite may be projected: usually that its gate
	// condition (CredentialsReady, DomainReady) is True for its current generation.
	// Nil passes every satellite.
	Gate func(PT) bool
	// IsDefault reports whether a satellite is marked as the parent's default (for
	// example spec.default). Nil means the parent kind has no default rule.
	IsDefault func(PT) bool
}

// Collection is what [Collect] returns. Each slice is sorted by name, then namespace;
// an empty slice is nil.
type Collection[T any, PT interface {
	*T
	client.Object
}] struct {
	// Attached are the satellites that name the parent and are not being deleted.
	Attached []PT
	// Gated are the Attached satellites that pass the gate: the ones to render.
	Gated []PT
	// DefaultCandidates are the Gated satellites IsDefault marks.
	DefaultCandidates []PT
	// Valid reports whether the default rule holds: always with no IsDefault, and
	// otherwise when exactly one gated satellite is marked as the default.
	Valid bool
}

// Collect sorts and filters the satellites of one parent for its aggregation step (see
// [Collection]): one being deleted drops out at once, so its section is de-projected
// without waiting for it to go. Gate reads the gate condition, never Ready (which waits
// for this very projection). The order is by name, then namespace, so the rendered
// configuration and its hash are stable; the pointers are the caller's Items. No API call.
func Collect[T any, PT interface {
	*T
	client.Object
}](p CollectParams[T, PT]) Collection[T, PT] {
	var out Collection[T, PT]
	for _, it := range p.Items {
		if it == nil || it.GetDeletionTimestamp() != nil {
			continue
		}
		out.Attached = append(out.Attached, it)
	}
	slices.SortStableFunc(out.Attached, func(a, b PT) int {
		return cmp.Or(cmp.Compare(a.GetName(), b.GetName()), cmp.Compare(a.GetNamespace(), b.GetNamespace()))
	})
	for _, it := range out.Attached {
		if p.Gate != nil && !p.Gate(it) {
			continue
		}
		out.Gated = append(out.Gated, it)
		if p.IsDefault != nil && p.IsDefault(it) {
			out.DefaultCandidates = append(out.DefaultCandidates, it)
		}
	}
	out.Valid = p.IsDefault == nil || len(out.DefaultCandidates) == 1
	return out
}
