package deployment

import (
	"errors"

	"github.com/c5c3/reconciler-sdk/child"
)

// Sentinel errors of the package. Test for them with errors.Is; the error texts that
// wrap them name the object and the field.
var (
	// ErrImmutableField reports a desired object that pins a server-assigned, immutable
	// field (a Service's clusterIP, clusterIPs, ipFamilies or a port's nodePort) to a
	// value other than the one the API server assigned. It is returned before any
	// write: delete the object to change such a field.
	ErrImmutableField = errors.New("immutable server-assigned field conflicts")
	// ErrKeyMismatch is [child.ErrKeyMismatch]: a desired object whose namespace/name
	// differs from the key the flow was called with.
	ErrKeyMismatch = child.ErrKeyMismatch
	// ErrInvalidVPASet is [child.ErrInvalidSet]: a desired VerticalPodAutoscaler set
	// with a nil entry, an entry without a name, or two entries with one name.
	ErrInvalidVPASet = child.ErrInvalidSet
)
