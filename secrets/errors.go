package secrets

import "errors"

// Sentinel errors of the package. Test for them with errors.Is; the error texts that
// wrap them name the object and the field, never a secret value.
var (
	// ErrKeyNotFound reports a data key absent from a Secret. GetSecretValue wraps it
	// as `key not found in Secret: key "<dataKey>" in Secret <namespace>/<name>`.
	ErrKeyNotFound = errors.New("key not found in Secret")
	// ErrUnknownStoreKind reports a secret store reference whose kind is neither
	// ClusterSecretStore nor SecretStore.
	ErrUnknownStoreKind = errors.New("unknown secret store kind")
	// ErrMissingStoreName reports a secret store reference without a name.
	ErrMissingStoreName = errors.New("secret store reference has no name")
	// ErrNilPushSecret reports a nil PushSecret passed to EnsurePushSecret.
	ErrNilPushSecret = errors.New("PushSecret is nil")
	// ErrNilConditions reports a nil condition slice pointer passed to GateStoreReady.
	ErrNilConditions = errors.New("conditions pointer is nil")
	// ErrNilObject reports a nil object passed to StoreGate.
	ErrNilObject = errors.New("object is nil")
	// ErrInvalidGeneratedSecret reports a GeneratedSecret that cannot be created: no
	// name or namespace, no data key, or a length outside the allowed range.
	ErrInvalidGeneratedSecret = errors.New("invalid generated secret")
	// ErrInvalidPushSource reports a source Secret ConfirmPush cannot stamp a PushSecret
	// with: nil, without a resourceVersion, in another namespace, or not the Secret the
	// PushSecret selects by name.
	ErrInvalidPushSource = errors.New("invalid PushSecret source")
	// ErrInvalidSyncParams reports SyncParams or an owner that Sync cannot run with.
	ErrInvalidSyncParams = errors.New("invalid Secret sync parameters")
)
