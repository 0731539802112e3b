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
	// RestoreFrom optionally names the Secret an ExternalSecret syncs from the secret
	// backend the credential was pushed to. When the Secret at Key is missing (or lacks
	// DataKey) and the Secret at RestoreFrom holds DataKey, that value is taken instead
	// of a new one being generated, so losing the generated Secret never rotates a
	// credential the backend still holds. While an ExternalSecret that writes
	// RestoreFrom has not yet told whether the backend holds the credential, nothing is
	// generated: see [SecretRestorePending] and the package documentation.
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

// EnsureGeneratedSecret makes sure the Secret gs.Key holds a credential under
// gs.DataKey, generating a random one with crypto/rand the first time and never again.
//
//   - When the Secret holds a non-empty gs.DataKey it is left alone: no write,
//     [SecretKept]. This holds on every later pass and after a controller restart,
//     because the decision is read from the API server, not from memory.
//   - When the Secret is missing it is created (never applied or updated over), with
//     owner as its owner when owner is not nil (apply.SetOwnership: its controller
//     reference, or through an apply.Applier with ApplierOptions.Remote its claim
//     labels) and the credential from
//     gs.RestoreFrom ([SecretRestored]) or freshly generated ([SecretGenerated]).
//   - When the Secret exists without gs.DataKey, that key alone is added with an
//     optimistic-lock patch; the Secret's other keys are kept.
//   - When neither the Secret nor gs.RestoreFrom holds the credential and an
//     ExternalSecret that writes gs.RestoreFrom may still deliver it, nothing is
//     written and the outcome is [SecretRestorePending] with a nil error: the caller
//     is not ready and requeues after [PollInterval]. The package documentation says
//     how a pending restore is told apart from a first install.
//
// An existing Secret is used only when owner controls it (apply.IsControlled). One
// without a controller or claim (apply.Unclaimed: made by kubectl or Helm) is refused
// with an *apply.NotControlledError (errors.Is apply.ErrNotControlled) and left
// untouched, unless it carries the annotation apply.AdoptAnnotation="true": then owner
// becomes its owner, in the same optimistic-lock patch that adds a missing key. A
// Secret controlled or claimed by another object is always refused, and the error
// names its controller or claim. A Secret that is being deleted is refused with an
// error wrapping apply.ErrBeingDeleted and nothing is created over it until it is
// gone. With a nil owner the Secret is created without an owner reference or claim,
// an existing unclaimed Secret is used and one with a controller or claim is refused.
//
// Two passes racing to create the Secret both end with the winner's value: the loser
// sees AlreadyExists, reads the Secret again and keeps it. Every read after a lost race
// (AlreadyExists, or a Conflict of the patch) goes past the cache, as unstructured,
// which a manager's client sends to the API server: a cache that has not seen the
// Secret yet cannot make the call fail or generate twice. A failed read (of the
// Secret, of gs.RestoreFrom or of the ExternalSecrets that write it) other than
// NotFound is returned as an error, never answered with a new credential.
//
// Keep the generated Secret out of any ExternalSecret's target: an ExternalSecret with
// creationPolicy Owner deletes its target with it. The usual layout is generated
// Secret → PushSecret ([GeneratedPushSecret]) → backend → ExternalSecret → a second
// Secret, named by gs.RestoreFrom, that consumers mount.
//
// The create and the patch are reported through apply.Record: apply.ActionCreated, and
// apply.ActionConfigured with the fields data.<DataKey> (a key added) and
// the ownership fields of apply.OwnershipFields (an adoption). A pass that keeps the Secret writes and
// records nothing, and costs one GET of the Secret: none when the client serves Secrets
// from a cache, so that such a pass through an apply.Applier over a manager's cached
// client sends no request at all. With Secrets read past the cache, as
// reconcile.UncachedObjects recommends, it costs exactly that one GET. Writes through an
// apply.Applier carry the operator's field manager.
//
// A nil scheme returns an error wrapping apply.ErrNilScheme, invalid input one
// wrapping [ErrInvalidGeneratedSecret] that names the Secret and the field; neither
// makes an API call. Neither errors nor log lines carry the credential.
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
