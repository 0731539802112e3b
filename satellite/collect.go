package satellite

import (
	"cmp"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CollectParams are the inputs of [Collect].
//
// T is the satellite's Go type (GlanceBackend) and PT its pointer (*GlanceBackend).
// Items is the caller's List result, usually read through an index on the parent name
// the satellites carry. A List holds values; turn it into a pointer slice with
//
//	items := make([]*v1.GlanceBackend, 0, len(list.Items))
//	for i := range list.Items {
//		items = append(items, &list.Items[i])
//	}
//
// (never &item of a range variable, which would make every pointer the same object).
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

// Collect sorts and filters the satellites of one parent for the parent's aggregation
// step, which then renders one section per Gated satellite.
//
// A satellite with a deletion timestamp drops out at once, so its section is removed
// from the rendered configuration without waiting for the object to go. The others
// are Attached; those passing Gate are Gated; those IsDefault marks among them are the
// DefaultCandidates. A satellite that is not gated is skipped, and the step goes on
// with the rest; Gate reads the satellite's gate condition, never its Ready (which
// waits for the projection this step makes). With a default rule, Valid is false when
// no gated satellite, or more than one, is marked as the default: the operator decides
// what that means (Glance refuses to render without exactly one default backend).
//
// The order is by name, then namespace, whatever the order of Items, so the rendered
// configuration, and the hash in its Secret's name, stay the same from one pass to the
// next. Collect makes no API call and returns no error; the returned pointers are the
// caller's Items, not copies.
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
