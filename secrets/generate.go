package secrets

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/credential"
)

// Bounds of GeneratedSecret.Length.
const (
	// DefaultGeneratedLength is the length of a generated credential when
	// GeneratedSecret.Length is zero: 32 alphanumeric characters, about 190 bits.
	DefaultGeneratedLength = 32
	// MinGeneratedLength is the shortest credential EnsureGeneratedSecret generates.
	MinGeneratedLength = 16
	// MaxGeneratedLength is the longest credential EnsureGeneratedSecret generates.
	MaxGeneratedLength = 4096
)

// alphabet is the character set of generated credentials: alphanumeric, so a value is
// safe in a DSN, a URL, an INI file and a shell without quoting.
const alphabet = credential.Alphabet

// GeneratedSecret describes a credential Secret that [EnsureGeneratedSecret] creates
// once with a random value and never regenerates.
type GeneratedSecret struct {
	// Key is the namespace and name of the Secret.
	Key client.ObjectKey
	// DataKey is the key in .data the credential is stored under.
	DataKey string
	// Length is the number of characters of the credential; zero means
	// [DefaultGeneratedLength]. It must lie between [MinGeneratedLength] and
	// [MaxGeneratedLength].
	Length int
	// RestoreFrom optionally names the Secret an ExternalSecret syncs from the backend
	// the credential was pushed to: a lost credential is restored from it, and nothing is
	// generated while it may still be ([SecretRestorePending]).
	RestoreFrom *client.ObjectKey
	// Labels are set on the Secret when it is created.
	Labels map[string]string
}

// DefaultGeneratedSecret returns a GeneratedSecret for the Secret at key holding a
// credential of [DefaultGeneratedLength] characters under dataKey.
func DefaultGeneratedSecret(key client.ObjectKey, dataKey string) GeneratedSecret {
	return GeneratedSecret{Key: key, DataKey: dataKey, Length: DefaultGeneratedLength}
}

// GenerateOutcome says what EnsureGeneratedSecret did.
type GenerateOutcome int

const (
	// SecretKept means the Secret already held the credential; nothing was written.
	SecretKept GenerateOutcome = iota
	// SecretGenerated means a new random credential was written.
	SecretGenerated
	// SecretRestored means the credential was copied from GeneratedSecret.RestoreFrom.
	SecretRestored
	// SecretRestorePending means nothing was written: the Secret lacks the credential,
	// GeneratedSecret.RestoreFrom does not hold it yet, and an ExternalSecret that
	// writes RestoreFrom has not yet answered whether the backend holds it. The
	// caller is not ready: it sets its condition (reason [ReasonRestorePending],
	// message [MessageRestorePending]) and requeues after [PollInterval].
	SecretRestorePending
)

// Ready reports whether the Secret holds the credential after the call: true for
// every outcome but [SecretRestorePending].
func (o GenerateOutcome) Ready() bool { return o != SecretRestorePending }

// String returns "Kept", "Generated", "Restored" or "RestorePending".
func (o GenerateOutcome) String() string {
	switch o {
	case SecretKept:
		return "Kept"
	case SecretGenerated:
		return "Generated"
	case SecretRestored:
		return "Restored"
	case SecretRestorePending:
		return "RestorePending"
	default:
		return fmt.Sprintf("GenerateOutcome(%d)", int(o))
	}
}

// EnsureGeneratedSecret makes the Secret gs.Key hold a credential under gs.DataKey,
// generated with crypto/rand the first time and never again, or restored from
// gs.RestoreFrom ("Generated credentials" and "First install or pending restore" in the
// package documentation). Invalid input wraps [ErrInvalidGeneratedSecret], a nil scheme
// apply.ErrNilScheme, both before any call; no error or log line carries the credential.
func EnsureGeneratedSecret(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	gs GeneratedSecret,
) (GenerateOutcome, error) {
	if err := apply.CheckScheme(scheme); err != nil {
		return SecretKept, fmt.Errorf("generated Secret %s: %w", gs.Key, err)
	}
	length, err := gs.validate()
	if err != nil {
		return SecretKept, err
	}
	if isNil(owner) {
		owner = nil
	} else if err := apply.ValidateOwner(owner); err != nil {
		return SecretKept, fmt.Errorf("generated Secret %s: %w", gs.Key, err)
	}
	logger := log.FromContext(ctx).WithValues("secret", gs.Key.String(), "dataKey", gs.DataKey)

	var outcome GenerateOutcome
	var pending *RestoreCheck
	raced := false
	err = retry.OnError(retry.DefaultRetry, retriable, func() error {
		outcome, pending = SecretKept, nil
		current := &corev1.Secret{}
		var err error
		if raced {
			// A write lost a race, or the read came from a cache that lags behind
			// the server: read past the cache.
			err = apply.GetUncached(ctx, c, gs.Key, current)
		} else {
			err = c.Get(ctx, gs.Key, current)
		}
		raced = true
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("get Secret %s: %w", gs.Key, err)
		}
		found := err == nil
		adopt := false
		if found {
			if adopt, err = checkGeneratedSecret(c, owner, current); err != nil {
				return err
			}
			if len(current.Data[gs.DataKey]) > 0 {
				if adopt {
					return patchSecret(ctx, c, scheme, owner, current, gs, nil, true)
				}
				return nil
			}
		}
		value, source, p, err := gs.credential(ctx, c, length)
		if err != nil {
			return err
		}
		if p != nil {
			outcome, pending = SecretRestorePending, p
			return nil
		}
		if found {
			err = patchSecret(ctx, c, scheme, owner, current, gs, value, adopt)
		} else {
			err = createSecret(ctx, c, scheme, owner, gs, value)
		}
		if err != nil {
			return err
		}
		outcome = source
		return nil
	})
	if err != nil {
		return SecretKept, err
	}
	switch outcome {
	case SecretGenerated:
		logger.Info("generated credential Secret")
	case SecretRestored:
		logger.Info("restored credential Secret from synced copy", "restoredFrom", gs.RestoreFrom.String())
	case SecretRestorePending:
		logger.Info("credential not generated: waiting for an ExternalSecret that may restore it",
			"restoreFrom", gs.RestoreFrom.String(), "externalSecret", pending.Pending.String(),
			"state", pending.Why, "requeueAfter", PollInterval)
	}
	return outcome, nil
}

// validate checks gs and returns the effective length.
func (gs GeneratedSecret) validate() (int, error) {
	fail := func(field, problem string) (int, error) {
		return 0, fmt.Errorf("generated Secret %s: %s: %w: %s", gs.Key, field, ErrInvalidGeneratedSecret, problem)
	}
	if gs.Key.Name == "" {
		return fail("Key.Name", "empty")
	}
	if gs.Key.Namespace == "" {
		return fail("Key.Namespace", "empty")
	}
	if gs.DataKey == "" {
		return fail("DataKey", "empty")
	}
	if errs := validation.IsConfigMapKey(gs.DataKey); len(errs) > 0 {
		return fail("DataKey", fmt.Sprintf("%q is not a valid Secret key: %s", gs.DataKey, strings.Join(errs, "; ")))
	}
	if gs.RestoreFrom != nil && (gs.RestoreFrom.Name == "" || gs.RestoreFrom.Namespace == "") {
		return fail("RestoreFrom", fmt.Sprintf("%q needs a namespace and a name", gs.RestoreFrom.String()))
	}
	length := gs.Length
	if length == 0 {
		length = DefaultGeneratedLength
	}
	if length < MinGeneratedLength || length > MaxGeneratedLength {
		return fail("Length", fmt.Sprintf("%d is outside [%d, %d]", gs.Length, MinGeneratedLength, MaxGeneratedLength))
	}
	return length, nil
}

// credential returns the value to store: the one at RestoreFrom when it holds DataKey,
// nothing (a RestoreCheck with Pending set) while an ExternalSecret may still restore it, else
// a new random one.
func (gs GeneratedSecret) credential(ctx context.Context, c client.Client, length int) ([]byte, GenerateOutcome, *RestoreCheck, error) {
	if gs.RestoreFrom != nil {
		check, err := CheckRestore(ctx, c, *gs.RestoreFrom)
		if err != nil {
			return nil, SecretKept, nil, fmt.Errorf("restore Secret %s: %w", gs.Key, err)
		}
		if check.Secret != nil && len(check.Secret.Data[gs.DataKey]) > 0 {
			return check.Secret.Data[gs.DataKey], SecretRestored, nil, nil
		}
		if check.Pending != nil {
			return nil, SecretRestorePending, &check, nil
		}
	}
	value, err := randomAlphanumeric(length)
	if err != nil {
		return nil, SecretKept, nil, fmt.Errorf("generate credential for Secret %s: %w", gs.Key, err)
	}
	return value, SecretGenerated, nil, nil
}

// errRaced marks a write that lost a race; the loop reads again.
var errRaced = errors.New("secret changed concurrently")

func retriable(err error) bool { return errors.Is(err, errRaced) }

// secretGVK names Secrets in ownership errors.
var secretGVK = corev1.SchemeGroupVersion.WithKind("Secret")

// checkGeneratedSecret refuses an existing Secret that EnsureGeneratedSecret must not
// use: one being deleted, or one owner does not control (with a nil owner: one with a
// controller or claim). It reports adopt when the Secret is unclaimed and carries
// apply.AdoptAnnotation="true", so owner becomes its owner.
func checkGeneratedSecret(c client.Client, owner client.Object, existing *corev1.Secret) (adopt bool, err error) {
	key := client.ObjectKeyFromObject(existing)
	if existing.DeletionTimestamp != nil {
		return false, fmt.Errorf("existing Secret %s: %w: retry once it is gone", key, apply.ErrBeingDeleted)
	}
	unclaimed := apply.Unclaimed(c, existing)
	if owner == nil {
		if unclaimed {
			return false, nil
		}
		return false, apply.CheckControlled(c, nil, existing, secretGVK)
	}
	if apply.IsControlled(c, owner, existing) {
		return false, nil
	}
	if unclaimed && existing.Annotations[apply.AdoptAnnotation] == "true" {
		return true, nil
	}
	return false, apply.CheckControlled(c, owner, existing, secretGVK)
}

// createSecret creates the Secret; AlreadyExists means another writer won.
func createSecret(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, gs GeneratedSecret, value []byte) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: gs.Key.Name, Namespace: gs.Key.Namespace, Labels: maps.Clone(gs.Labels)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{gs.DataKey: value},
	}
	if owner != nil {
		if err := apply.SetOwnership(c, scheme, owner, secret); err != nil {
			return fmt.Errorf("create Secret %s: set ownership: %w", gs.Key, err)
		}
	}
	if err := c.Create(ctx, secret); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create Secret %s: %w", gs.Key, errRaced)
		}
		return fmt.Errorf("create Secret %s: %w", gs.Key, err)
	}
	apply.Record(ctx, apply.Write{Action: apply.ActionCreated, GVK: secretGVK, Key: gs.Key})
	return nil
}

// patchSecret writes, guarded by the Secret's resourceVersion, DataKey (when value is
// not nil) and, with adopt set, owner as its owner (apply.SetOwnership). A conflict or a Secret
// gone meanwhile is a lost race: the loop reads again.
func patchSecret(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object,
	current *corev1.Secret, gs GeneratedSecret, value []byte, adopt bool) error {
	what := fmt.Sprintf("add key %q to Secret %s", gs.DataKey, gs.Key)
	if value == nil {
		what = "adopt Secret " + gs.Key.String()
	}
	base := current.DeepCopy()
	if value != nil {
		if current.Data == nil {
			current.Data = map[string][]byte{}
		}
		current.Data[gs.DataKey] = value
	}
	if adopt {
		if err := apply.SetOwnership(c, scheme, owner, current); err != nil {
			return fmt.Errorf("%s: set ownership: %w", what, err)
		}
	}
	if err := c.Patch(ctx, current, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: %w", what, errRaced)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	var fields []string
	if value != nil {
		fields = append(fields, "data."+gs.DataKey)
	}
	if adopt {
		fields = append(fields, apply.OwnershipFields(c)...)
	}
	apply.Record(ctx, apply.Write{Action: apply.ActionConfigured, GVK: secretGVK, Key: gs.Key, Fields: fields})
	return nil
}

// isNil reports whether v is nil or a typed nil pointer inside an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// randomAlphanumeric returns n characters drawn uniformly from alphabet with
// crypto/rand: the SDK's one generator, credential.Random.
func randomAlphanumeric(n int) ([]byte, error) { return credential.Random(n) }
