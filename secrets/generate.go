package secrets

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
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
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

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
	// DataKey) and the Secret at RestoreFrom holds DataKey, that value is adopted
	// instead of a new one being generated, so losing the generated Secret never
	// rotates a credential the backend still holds.
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
)

// String returns "Kept", "Generated" or "Restored".
func (o GenerateOutcome) String() string {
	switch o {
	case SecretKept:
		return "Kept"
	case SecretGenerated:
		return "Generated"
	case SecretRestored:
		return "Restored"
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
//     owner as controller reference when owner is not nil and the credential from
//     gs.RestoreFrom ([SecretRestored]) or freshly generated ([SecretGenerated]).
//   - When the Secret exists without gs.DataKey, that key alone is added with an
//     optimistic-lock patch; the Secret's other keys are kept.
//
// Two passes racing to create the Secret both end with the winner's value: the loser
// sees AlreadyExists, reads the Secret again and keeps it. A failed read of
// gs.RestoreFrom other than NotFound is returned as an error, never answered with a
// new credential.
//
// Keep the generated Secret out of any ExternalSecret's target: an ExternalSecret with
// creationPolicy Owner deletes its target with it. The usual layout is generated
// Secret → PushSecret → backend → ExternalSecret → a second Secret, named by
// gs.RestoreFrom, that consumers mount.
//
// Invalid input returns an error wrapping [ErrInvalidGeneratedSecret] that names the
// Secret and the field. Neither errors nor log lines carry the credential.
func EnsureGeneratedSecret(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	gs GeneratedSecret,
) (GenerateOutcome, error) {
	length, err := gs.validate()
	if err != nil {
		return SecretKept, err
	}
	logger := log.FromContext(ctx).WithValues("secret", gs.Key.String(), "dataKey", gs.DataKey)

	var outcome GenerateOutcome
	err = retry.OnError(retry.DefaultRetry, retriable, func() error {
		outcome = SecretKept
		current := &corev1.Secret{}
		err := c.Get(ctx, gs.Key, current)
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("get Secret %s: %w", gs.Key, err)
		}
		found := err == nil
		if found && len(current.Data[gs.DataKey]) > 0 {
			return nil
		}
		value, source, err := gs.credential(ctx, c, length)
		if err != nil {
			return err
		}
		if found {
			err = addKey(ctx, c, current, gs, value)
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
// else a new random one.
func (gs GeneratedSecret) credential(ctx context.Context, c client.Client, length int) ([]byte, GenerateOutcome, error) {
	if gs.RestoreFrom != nil {
		synced := &corev1.Secret{}
		err := c.Get(ctx, *gs.RestoreFrom, synced)
		switch {
		case err == nil && len(synced.Data[gs.DataKey]) > 0:
			return synced.Data[gs.DataKey], SecretRestored, nil
		case err != nil && !apierrors.IsNotFound(err):
			return nil, SecretKept, fmt.Errorf("read synced copy Secret %s of %s: %w", gs.RestoreFrom, gs.Key, err)
		}
	}
	value, err := randomAlphanumeric(length)
	if err != nil {
		return nil, SecretKept, fmt.Errorf("generate credential for Secret %s: %w", gs.Key, err)
	}
	return value, SecretGenerated, nil
}

// errRaced marks a write that lost a race; the loop reads again.
var errRaced = errors.New("secret changed concurrently")

func retriable(err error) bool { return errors.Is(err, errRaced) }

// createSecret creates the Secret; AlreadyExists means another writer won.
func createSecret(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, gs GeneratedSecret, value []byte) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: gs.Key.Name, Namespace: gs.Key.Namespace, Labels: maps.Clone(gs.Labels)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{gs.DataKey: value},
	}
	if owner != nil {
		if err := controllerutil.SetControllerReference(owner, secret, scheme); err != nil {
			return fmt.Errorf("create Secret %s: set controller reference: %w", gs.Key, err)
		}
	}
	if err := c.Create(ctx, secret); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create Secret %s: %w", gs.Key, errRaced)
		}
		return fmt.Errorf("create Secret %s: %w", gs.Key, err)
	}
	return nil
}

// addKey adds DataKey to an existing Secret, guarded by its resourceVersion.
func addKey(ctx context.Context, c client.Client, current *corev1.Secret, gs GeneratedSecret, value []byte) error {
	base := current.DeepCopy()
	if current.Data == nil {
		current.Data = map[string][]byte{}
	}
	current.Data[gs.DataKey] = value
	if err := c.Patch(ctx, current, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return fmt.Errorf("add key %q to Secret %s: %w", gs.DataKey, gs.Key, errRaced)
		}
		return fmt.Errorf("add key %q to Secret %s: %w", gs.DataKey, gs.Key, err)
	}
	return nil
}

// randomAlphanumeric returns n characters drawn uniformly from alphabet with
// crypto/rand (rejection sampling, so no character is more likely than another).
func randomAlphanumeric(n int) ([]byte, error) {
	const limit = 256 - 256%len(alphabet) // largest multiple of len(alphabet) <= 256
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/4+8)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			return nil, err
		}
		for _, b := range buf {
			if int(b) >= limit {
				continue
			}
			out = append(out, alphabet[int(b)%len(alphabet)])
			if len(out) == n {
				break
			}
		}
	}
	return out, nil
}
