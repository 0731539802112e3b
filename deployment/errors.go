package deployment

import "errors"

// Sentinel errors of the package. Test for them with errors.Is; the error texts that
// wrap them name the object and the field.
var (
	// ErrImmutableField reports a desired object that pins a server-assigned, immutable
	// field (a Service's clusterIP, clusterIPs, ipFamilies or a port's nodePort) to a
	// value other than the one the API server assigned. It is returned before any
	// write: delete the object to change such a field.
	ErrImmutableField = errors.New("immutable server-assigned field conflicts")
	// ErrKeyMismatch reports a desired object whose namespace/name differs from the key
	// the flow was called with.
	ErrKeyMismatch = errors.New("object key does not match the flow's key")
	// ErrInvalidVPASet reports a desired VerticalPodAutoscaler set that cannot be
	// applied: a nil entry, an entry without a name, or two entries with one name.
	ErrInvalidVPASet = errors.New("invalid VerticalPodAutoscaler set")
)
