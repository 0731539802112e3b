package credential

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/apply"
)

// Bounds of Secret.Length.
const (
	// DefaultLength is the length of a generated credential when Secret.Length is
	// zero: 32 characters of [Alphabet], about 190 bits.
	DefaultLength = 32
	// MinLength is the shortest credential [Ensure] generates.
	MinLength = 16
	// MaxLength is the longest credential [Ensure] generates.
	MaxLength = 4096
)

// Alphabet is the character set of generated credentials: alphanumeric, so a value
// needs no quoting in a connection URL, an INI file or a shell.
const Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// The reasons of the Events [Ensure] records (Secret.Recorder) when it creates a
// credential Secret. Each Event regards the owner, relates the Secret and names the
// Secret and its data key in its note; none carries the credential.
const (
	// ReasonGenerated (Normal): the Secret did not exist, no backup held the credential
	// and nothing reported it in use: a new random credential was stored, as on a first
	// install.
	ReasonGenerated = "CredentialGenerated"
	// ReasonRegenerated (Warning): the Secret was missing, no backup held the
	// credential, and Secret.InUse reported that something still holds the lost one:
	// a new random credential replaced it, and whatever used the old one needs the new
	// one.
	ReasonRegenerated = "CredentialRegenerated"
	// ReasonRestored (Normal): the Secret was missing and was created again with the
	// credential its backup holds (Secret.Restore): the value did not change.
	ReasonRestored = "CredentialRestored"
)

// ErrInvalidSecret reports a [Secret] Ensure cannot create: no name or namespace, no or
// an invalid data key, a length outside [MinLength, MaxLength]. The error text names
// the Secret and the field.
var ErrInvalidSecret = errors.New("invalid credential Secret")

// Random returns n characters drawn uniformly from [Alphabet] with crypto/rand
// (rejection sampling: no character is more likely than another). A non-positive n
// returns an empty value. The error is crypto/rand's.
func Random(n int) ([]byte, error) {
	if n <= 0 {
		return []byte{}, nil
	}
	const limit = 256 - 256%len(Alphabet) // largest multiple of len(Alphabet) <= 256
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
			out = append(out, Alphabet[int(b)%len(Alphabet)])
			if len(out) == n {
				break
			}
		}
	}
	clear(buf)
	return out, nil
}

// Backup is what a [Restorer] found for a credential whose Secret is missing.
type Backup struct {
	// Value is the credential the backup holds; empty when it holds none.
	Value []byte
	// From names where Value came from, for the log line and the Event ("Secret
	// ns/name synced from the secret store"); never the value itself.
	From string
	// Pending, when not empty, says that a backup may still deliver the credential and
	// what it waits for ("ExternalSecret ns/name has not synced yet"): nothing is
	// generated meanwhile. Ignored when Value is set.
	Pending string
}

// A Restorer tells [Ensure] whether a backup holds the credential of a Secret that is
// missing, so that losing the Secret restores the credential instead of replacing it.
// It is asked only on a pass that finds the Secret missing. An error is returned by
// Ensure as it is (wrapped), and nothing is written.
type Restorer interface {
	Restore(ctx context.Context, c client.Client, key client.ObjectKey, dataKey string) (Backup, error)
}

// RestorerFunc adapts a function to a [Restorer].
type RestorerFunc func(ctx context.Context, c client.Client, key client.ObjectKey, dataKey string) (Backup, error)

// Restore calls f.
func (f RestorerFunc) Restore(ctx context.Context, c client.Client, key client.ObjectKey, dataKey string) (Backup, error) {
	return f(ctx, c, key, dataKey)
}

// Secret describes a credential Secret [Ensure] creates once.
type Secret struct {
	// Key is the namespace and name of the Secret. Required.
	Key client.ObjectKey
	// DataKey is the key in .data the credential is stored under. Required; a valid
	// Secret key.
	DataKey string
	// Length is the number of characters of a generated credential; zero means
	// [DefaultLength]. It must lie between [MinLength] and [MaxLength].
	Length int
	// Labels are set on the Secret when it is created.
	Labels map[string]string
	// Restore, when set, is asked for the credential before a new one is generated
	// (see [Restorer]). Nil: no backup exists, and a missing Secret gets a new value.
	Restore Restorer
	// InUse, when set, is asked right before a new credential is generated for a
	// missing Secret. A non-empty answer says what still holds the lost credential
	// ("User ns/app exists: its password changes to the new one") and makes the
	// generation a regeneration, with a Warning Event quoting it ([ReasonRegenerated]).
	// An error is returned and nothing is generated.
	InUse func(ctx context.Context) (string, error)
	// For names what the credential is for in the log line and the Event ("password
	// of User ns/app"); empty leaves it out.
	For string
	// Recorder records an Event for every Secret Ensure creates (the reasons above).
	// Nil records none; the log line is written either way.
	Recorder events.EventRecorder
}

// Outcome says what [Ensure] found or did.
type Outcome int

const (
	// OutcomeExisting means the Secret exists; Ensure did not write it, whatever it
	// holds and whoever controls it. Result.Secret is the Secret as read.
	OutcomeExisting Outcome = iota
	// OutcomeGenerated means the Secret was missing and was created with a new random
	// credential ([ReasonGenerated]).
	OutcomeGenerated
	// OutcomeRegenerated means the Secret was missing, was created with a new random
	// credential, and Secret.InUse reported the lost one in use ([ReasonRegenerated]).
	OutcomeRegenerated
	// OutcomeRestored means the Secret was missing and was created with the credential
	// of its backup ([ReasonRestored]).
	OutcomeRestored
	// OutcomeRestorePending means the Secret is missing and nothing was written: a
	// backup may still deliver the credential (Backup.Pending). The caller is not
	// ready, says so in its condition and polls.
	OutcomeRestorePending
)

// String returns "Existing", "Generated", "Regenerated", "Restored" or
// "RestorePending".
func (o Outcome) String() string {
	switch o {
	case OutcomeExisting:
		return "Existing"
	case OutcomeGenerated:
		return "Generated"
	case OutcomeRegenerated:
		return "Regenerated"
	case OutcomeRestored:
		return "Restored"
	case OutcomeRestorePending:
		return "RestorePending"
	default:
		return fmt.Sprintf("Outcome(%d)", int(o))
	}
}

// Result is what [Ensure] found or did. It never holds a credential Ensure wrote.
type Result struct {
	Outcome Outcome
	// Secret is the Secret as read when Outcome is OutcomeExisting (a Secret created
	// by another writer between Ensure's read and its create included); nil otherwise.
	Secret *corev1.Secret
	// From is Backup.From for OutcomeRestored.
	From string
	// Pending is Backup.Pending for OutcomeRestorePending.
	Pending string
	// InUse is Secret.InUse's answer for OutcomeRegenerated.
	InUse string
}

// Ensure makes sure the Secret s.Key exists, creating it once, and never writes an
// existing Secret ([OutcomeExisting]). A missing one is created from its backup
// ([OutcomeRestored]), not at all while the backup may still deliver it
// ([OutcomeRestorePending]), or with a new random credential ([OutcomeGenerated],
// [OutcomeRegenerated]), never silently (the package documentation, "Once, and never
// silently"). No error, log line, Event or Result carries the credential.
func Ensure(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, s Secret) (Result, error) {
	if err := apply.CheckScheme(scheme); err != nil {
		return Result{}, fmt.Errorf("credential Secret %s: %w", s.Key, err)
	}
	length, err := s.validate()
	if err != nil {
		return Result{}, err
	}
	if isNil(owner) {
		owner = nil
	} else if err := apply.ValidateOwner(owner); err != nil {
		return Result{}, fmt.Errorf("credential Secret %s: %w", s.Key, err)
	}
	logger := log.FromContext(ctx).WithValues("secret", s.Key.String(), "dataKey", s.DataKey)
	if s.For != "" {
		logger = logger.WithValues("for", s.For)
	}

	existing := &corev1.Secret{}
	switch err := c.Get(ctx, s.Key, existing); {
	case err == nil:
		return Result{Outcome: OutcomeExisting, Secret: existing}, nil
	case !apierrors.IsNotFound(err):
		return Result{}, fmt.Errorf("get Secret %s: %w", s.Key, err)
	}

	res, value, err := s.credential(ctx, c, length)
	if err != nil {
		return Result{}, err
	}
	if res.Outcome == OutcomeRestorePending {
		logger.Info("credential not generated: waiting for a backup that may restore it", "pending", res.Pending)
		return res, nil
	}
	created, err := create(ctx, c, scheme, owner, s, value)
	if res.Outcome != OutcomeRestored {
		clear(value) // ours: the random value; a backup's value belongs to the Restorer
	}
	if err != nil {
		return Result{}, err
	}
	if !created {
		if err := apply.GetUncached(ctx, c, s.Key, existing); err != nil {
			return Result{}, fmt.Errorf("get Secret %s: %w", s.Key, err)
		}
		return Result{Outcome: OutcomeExisting, Secret: existing}, nil
	}
	s.report(logger, owner, res)
	return res, nil
}

// validate checks s and returns the effective length.
func (s Secret) validate() (int, error) {
	fail := func(field, problem string) (int, error) {
		return 0, fmt.Errorf("credential Secret %s: %s: %w: %s", s.Key, field, ErrInvalidSecret, problem)
	}
	switch {
	case s.Key.Name == "":
		return fail("Key.Name", "empty")
	case s.Key.Namespace == "":
		return fail("Key.Namespace", "empty")
	case s.DataKey == "":
		return fail("DataKey", "empty")
	}
	if errs := validation.IsConfigMapKey(s.DataKey); len(errs) > 0 {
		return fail("DataKey", fmt.Sprintf("%q is not a valid Secret key: %s", s.DataKey, strings.Join(errs, "; ")))
	}
	length := s.Length
	if length == 0 {
		length = DefaultLength
	}
	if length < MinLength || length > MaxLength {
		return fail("Length", fmt.Sprintf("%d is outside [%d, %d]", s.Length, MinLength, MaxLength))
	}
	return length, nil
}

// credential decides the value of a missing Secret: the backup's, none while a restore
// is pending, else a new random one.
func (s Secret) credential(ctx context.Context, c client.Client, length int) (Result, []byte, error) {
	if s.Restore != nil {
		b, err := s.Restore.Restore(ctx, c, s.Key, s.DataKey)
		switch {
		case err != nil:
			return Result{}, nil, fmt.Errorf("restore Secret %s: %w", s.Key, err)
		case len(b.Value) > 0:
			return Result{Outcome: OutcomeRestored, From: b.From}, b.Value, nil
		case b.Pending != "":
			return Result{Outcome: OutcomeRestorePending, Pending: b.Pending}, nil, nil
		}
	}
	res := Result{Outcome: OutcomeGenerated}
	if s.InUse != nil {
		inUse, err := s.InUse(ctx)
		if err != nil {
			return Result{}, nil, fmt.Errorf("check what uses the credential of missing Secret %s: %w", s.Key, err)
		}
		if inUse != "" {
			res = Result{Outcome: OutcomeRegenerated, InUse: inUse}
		}
	}
	value, err := Random(length)
	if err != nil {
		return Result{}, nil, fmt.Errorf("generate credential for Secret %s: %w", s.Key, err)
	}
	return res, value, nil
}

// create creates the Secret with value; false when one of that name exists already
// (it is not touched).
func create(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, s Secret, value []byte) (bool, error) {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: s.Key.Name, Namespace: s.Key.Namespace, Labels: maps.Clone(s.Labels)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{s.DataKey: value},
	}
	if owner != nil {
		if err := apply.SetOwnership(c, scheme, owner, secret); err != nil {
			return false, fmt.Errorf("create Secret %s: set ownership: %w", s.Key, err)
		}
	}
	err := c.Create(ctx, secret, client.FieldOwner(apply.FieldManager))
	switch {
	case apierrors.IsAlreadyExists(err):
		return false, nil
	case err != nil:
		// The API server's error text never quotes a Secret's data; ours names the
		// object only.
		return false, fmt.Errorf("create Secret %s: %w", s.Key, err)
	}
	apply.Record(ctx, apply.Write{Action: apply.ActionCreated, GVK: secretGVK, Key: s.Key})
	return true, nil
}

// report logs the Secret Ensure created and records its Event.
func (s Secret) report(logger logr.Logger, owner client.Object, res Result) {
	what := fmt.Sprintf("Secret %s (key %q)", s.Key, s.DataKey)
	if s.For != "" {
		what = fmt.Sprintf("Secret %s (key %q, the %s)", s.Key, s.DataKey, s.For)
	}
	var eventType, reason, action, note string
	switch res.Outcome {
	case OutcomeGenerated:
		logger.Info("generated credential Secret")
		eventType, reason, action = corev1.EventTypeNormal, ReasonGenerated, "Generate"
		note = "created " + what + " with a new random credential"
	case OutcomeRegenerated:
		logger.Info("regenerated credential Secret: it was missing, no backup restored it, and the lost credential is in use",
			"inUse", res.InUse)
		eventType, reason, action = corev1.EventTypeWarning, ReasonRegenerated, "Regenerate"
		note = what + " was missing and no backup restored it: created it with a new random credential; " + res.InUse
	case OutcomeRestored:
		logger.Info("restored credential Secret from its backup", "restoredFrom", res.From)
		eventType, reason, action = corev1.EventTypeNormal, ReasonRestored, "Restore"
		note = what + " was missing: created it again with the credential of its backup, " + res.From
	default:
		return
	}
	if s.Recorder == nil {
		return
	}
	related := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: s.Key.Name, Namespace: s.Key.Namespace},
	}
	var regarding runtime.Object = related
	if owner != nil {
		regarding = owner
	}
	s.Recorder.Eventf(regarding, related, eventType, reason, action, "%s", note)
}

// secretGVK names Secrets in the writes reported through apply.Record.
var secretGVK = corev1.SchemeGroupVersion.WithKind("Secret")

// isNil reports whether v is nil or a typed nil pointer inside an interface.
func isNil(v client.Object) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
