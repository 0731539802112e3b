package capability

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Condition reasons shared by the flows that probe an optional API.
const (
	// ReasonCapabilityProbeFailed is the False reason of a flow whose capability probe
	// could not tell whether the kind is served because discovery itself failed.
	ReasonCapabilityProbeFailed = "CapabilityProbeFailed"
)

// ErrProbeFailed reports that discovery failed, so whether the kind is served is not
// known. Errors returned by [IsKindServed] and [Probe.IsKindServed] wrap it together with
// the mapper's error.
var ErrProbeFailed = errors.New("capability probe failed")

// ErrNilMapper reports a nil RESTMapper passed to [IsKindServed] or [NewProbe].
var ErrNilMapper = errors.New("capability: RESTMapper is nil")

// ErrIncompleteGVK reports a GroupVersionKind without version or kind: a probe needs
// both (the core group is the empty group and is allowed).
var ErrIncompleteGVK = errors.New("capability: GroupVersionKind needs a version and a kind")

// IsKindServed reports whether the cluster behind mapper serves gvk.
//
// It returns (true, nil) when mapper maps gvk, (false, nil) when the group, version or
// kind is not served, and (false, err) with err wrapping [ErrProbeFailed] when discovery
// failed. See the package documentation for what the mapper caches.
func IsKindServed(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (bool, error) {
	if mapper == nil {
		return false, ErrNilMapper
	}
	if gvk.Version == "" || gvk.Kind == "" {
		return false, fmt.Errorf("%w: got %q", ErrIncompleteGVK, gvk.String())
	}
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		return true, nil
	case notServed(err):
		return false, nil
	default:
		return false, fmt.Errorf("%w: is %s served: %w", ErrProbeFailed, describe(gvk), err)
	}
}

// notServed reports whether err says the kind is absent, as opposed to discovery
// having failed. controller-runtime's dynamic mapper reports an absent group/version
// as meta.NoKindMatchError or NoResourceMatchError, or as apiutil.ErrResourceDiscoveryFailed
// whose every entry is a 404 (or already a no-match error). An ErrResourceDiscoveryFailed
// that holds any other error (a 503 of an aggregated API, a network error) is a failed
// probe even if it also holds a no-match entry.
func notServed(err error) bool {
	if failed, ok := errors.AsType[*apiutil.ErrResourceDiscoveryFailed](err); ok && failed != nil {
		if len(*failed) == 0 {
			return false
		}
		for _, sub := range *failed {
			if !apierrors.IsNotFound(sub) && !meta.IsNoMatchError(sub) {
				return false
			}
		}
		return true
	}
	return meta.IsNoMatchError(err)
}

// describe names a kind in messages as "Kind.group/version" ("Kind/v1" for the core group).
func describe(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Kind + "/" + gvk.Version
	}
	return gvk.Kind + "." + gvk.Group + "/" + gvk.Version
}
