package satellite

import "errors"

// ErrInvalidParams reports parameters a helper of this package refuses before it makes
// any API call: a nil client, parent object or conditions pointer, or an empty
// condition type, volume name or data key. The error text that wraps it names the
// field. Test for it with errors.Is.
var ErrInvalidParams = errors.New("invalid satellite params")
