package keystone

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// The condition types of the two key repository steps.
const (
	// ConditionFernetKeysReady is the condition of the FernetKeys step.
	ConditionFernetKeysReady = "FernetKeysReady"
	// ConditionCredentialKeysReady is the condition of the CredentialKeys step.
	ConditionCredentialKeysReady = "CredentialKeysReady"
)

// The reasons the key repository steps write.
const (
	// ReasonKeysReady (True): the Secret holds a valid key repository, its backup
	// PushSecret and its rotation CronJob are in place.
	ReasonKeysReady = "KeysReady"
	// ReasonKeysInvalid (False): the Secret, or the restore copy synced from the
	// backend, holds data that is not a valid key repository. Nothing is overwritten
	// and nothing generated; the message names the Secret and the offending indices or
	// data keys. Terminal for the Keystone's Secret (the next change of the Secret or
	// the Keystone retries); polled every 15 s for the restore copy, which External
	// Secrets Operator rewrites from the backend.
	ReasonKeysInvalid = "KeysInvalid"
	// ReasonWaitingForKeyRestore (False): the Secret is missing, and an ExternalSecret
	// that writes the restore copy has not yet told whether the backend holds a
	// repository. Nothing is generated meanwhile; the step requeues after 15 s.
	ReasonWaitingForKeyRestore = "WaitingForKeyRestore"
	// ReasonUnsafeRotation (False, terminal): the rotation settings would remove a key
	// that a valid token may still need (keys.CheckRotationSafety); the message names
	// the numbers and the smallest safe maxActiveKeys. Nothing is created or changed.
	ReasonUnsafeRotation = "UnsafeRotation"
	// ReasonInvalidRotationSettings (False, terminal): a rotation setting makes no
	// sense on its own, such as a rotation interval that is not positive. Nothing is
	// created or changed.
	ReasonInvalidRotationSettings = "InvalidRotationSettings"
	// ReasonKeysNotControlled (False): the Secret, the restore ExternalSecret, the
	// PushSecret or the rotation CronJob exists but the Keystone does not control it
	// (made by someone else), or it is being deleted. It is left untouched; the error
	// is returned, so the pass is retried with backoff.
	ReasonKeysNotControlled = "KeysNotControlled"
	// ReasonKeysLabelsNotRestored (False): another client changed a label of the
	// Secret and the patch that sets it back failed; the keys are untouched. The error
	// is returned, so the pass is retried with backoff.
	ReasonKeysLabelsNotRestored = "KeysLabelsNotRestored"
)

// KeyRotationSchedule is the schedule of the rotation CronJobs: hourly, at minute 17.
// The rotation itself happens only once the rotation interval has passed since
// [rotation.RotatedAtAnnotation], so a rotation is at most an hour late.
const KeyRotationSchedule = "17 * * * *"

// Defaults of the rotation settings, the same as the Keystone CRD's, for a Keystone
// whose fields were not defaulted by the API server.
const (
	// DefaultMaxActiveKeys is spec.fernet.maxActiveKeys and
	// spec.credential.maxActiveKeys when zero.
	DefaultMaxActiveKeys = 3
	// DefaultRotationInterval is spec.fernet.rotationInterval and
	// spec.credential.rotationInterval when unset: a week.
	DefaultRotationInterval = 168 * time.Hour
	// DefaultTokenExpiration is spec.token.expiration when unset.
	DefaultTokenExpiration = time.Hour
	// DefaultAllowExpiredWindow is spec.token.allowExpiredWindow when unset.
	DefaultAllowExpiredWindow = 48 * time.Hour
	// DefaultBackupRefreshInterval is how often External Secrets Operator pushes a
	// key repository to the backend and syncs the restore copy back, when
	// KeyStepOptions.BackupRefreshInterval is zero.
	DefaultBackupRefreshInterval = 5 * time.Minute
)

// ErrInvalidKeyStepOptions is wrapped by the error of [KeyStepOptions.Validate] and
// returned (terminal) by a step built with such options.
var ErrInvalidKeyStepOptions = errors.New("invalid key step options")

// ErrNoTarget is returned by a key repository step run with a context that carries no
// multicluster.Target (multicluster.WithTarget).
var ErrNoTarget = errors.New("no target cluster in the context")

// KeyStepOptions configure the key repository steps.
type KeyStepOptions struct {
	// FieldManager is the operator's field manager; the children carry it as their
	// app.kubernetes.io/managed-by label, so the operator's label-filtered cache sees
	// them. Required.
	FieldManager string
	// OperatorImage is the operator's own image; the rotation CronJobs run its
	// rotate-keys command ([rotation.RunRotateKeys]). Required.
	OperatorImage string
	// ServiceAccountName runs the rotation pods; empty means the namespace's default
	// ServiceAccount. It needs get and update on the repository Secrets
	// ([rotation.SecretRules]).
	ServiceAccountName string
	// ServiceAccountOf, when set, returns the ServiceAccount of a Keystone's rotation
	// pods and takes the place of ServiceAccountName; an empty answer means the
	// namespace's default ServiceAccount. The Keystone reconciler sets it to
	// [rotation.ServiceAccountName] unless Options.RotationServiceAccount is set.
	ServiceAccountOf func(*v1alpha1.Keystone) string
	// BackupRefreshInterval is the refreshInterval of the backup PushSecrets and of
	// the restore ExternalSecrets; zero means [DefaultBackupRefreshInterval].
	BackupRefreshInterval time.Duration
	// Now returns the current time, stamped into [rotation.RotatedAtAnnotation] when a
	// repository is generated, restored or adopted; nil means time.Now.
	Now func() time.Time
}

// Validate reports missing or contradicting options with an error wrapping
// [ErrInvalidKeyStepOptions] that names the field.
func (o KeyStepOptions) Validate() error {
	switch {
	case o.FieldManager == "":
		return fmt.Errorf("%w: KeyStepOptions.FieldManager is empty", ErrInvalidKeyStepOptions)
	case o.OperatorImage == "":
		return fmt.Errorf("%w: KeyStepOptions.OperatorImage is empty", ErrInvalidKeyStepOptions)
	case o.BackupRefreshInterval < 0:
		return fmt.Errorf("%w: KeyStepOptions.BackupRefreshInterval %s is negative", ErrInvalidKeyStepOptions, o.BackupRefreshInterval)
	}
	return nil
}

// repositoryKind is what tells the fernet and the credential step apart.
type repositoryKind struct {
	name       string // "fernet" or "credential", in messages
	field      string // the Keystone field, "spec.fernet" or "spec.credential"
	condition  string
	suffix     string // of the remote key: "fernet-keys" or "credential-keys"
	secretName func(*v1alpha1.Keystone) string
	spec       func(*v1alpha1.Keystone) v1alpha1.KeyRepositorySpec
}

var (
	fernetKind = repositoryKind{
		name: "fernet", field: "spec.fernet", condition: ConditionFernetKeysReady, suffix: "fernet-keys",
		secretName: names.FernetKeysSecretName,
		spec:       func(k *v1alpha1.Keystone) v1alpha1.KeyRepositorySpec { return k.Spec.Fernet },
	}
	credentialKind = repositoryKind{
		name: "credential", field: "spec.credential", condition: ConditionCredentialKeysReady, suffix: "credential-keys",
		secretName: names.CredentialKeysSecretName,
		spec:       func(k *v1alpha1.Keystone) v1alpha1.KeyRepositorySpec { return k.Spec.Credential },
	}
)

// KeyRepositoryStep is the FernetKeys or the CredentialKeys row of the Keystone
// pipeline. One pass of it, on the cluster of multicluster.TargetFrom(ctx):
//
//  1. checks the rotation settings with keys.CheckRotationSafety and refuses unsafe
//     ones (UnsafeRotation, terminal) before it writes anything;
//  2. applies the restore ExternalSecret [KeyRepositoryStep.RestoreName], which syncs
//     the backup at [KeyRepositoryStep.RemoteKey] into the Secret of the same name;
//  3. makes sure the Secret [KeyRepositoryStep.SecretName] holds a valid repository:
//     kept when it does; when it is missing, restored from the restore copy, or, when
//     the restore ExternalSecrets have answered that the backend holds nothing,
//     generated with keys.Setup and created (never applied over, never regenerated);
//     while the answer is pending, WaitingForKeyRestore and a requeue after 15 s;
//  4. applies the PushSecret that backs the Secret up to the remote key;
//  5. applies the rotation CronJob [KeyRepositoryStep.CronJobName];
//  6. sets its condition True (KeysReady).
//
// The restore decision follows the rules of secrets.EnsureGeneratedSecret's
// RestoreFrom (see package secrets, "First install or pending restore"); that function
// itself stores one generated value under one data key, so it cannot hold a
// repository whose data keys change with every rotation, and the step applies the same
// rules to the whole repository.
type KeyRepositoryStep struct {
	kind repositoryKind
	opts KeyStepOptions
}

// NewFernetKeysStep returns the FernetKeys step: the fernet key repository in the
// Secret names.FernetKeysSecretName(k), configured by spec.fernet, condition
// [ConditionFernetKeysReady].
func NewFernetKeysStep(opts KeyStepOptions) *KeyRepositoryStep {
	return &KeyRepositoryStep{kind: fernetKind, opts: opts}
}

// NewCredentialKeysStep returns the CredentialKeys step: the credential key
// repository in the Secret names.CredentialKeysSecretName(k), configured by
// spec.credential, condition [ConditionCredentialKeysReady].
//
// Its rotation is checked against the token settings too (spec.token.expiration and
// allowExpiredWindow): credentials do not expire, but the check keeps a credential key
// for at least as long as a fernet key, which leaves that time for the
// credential_migrate that re-encrypts the credentials with the new primary.
func NewCredentialKeysStep(opts KeyStepOptions) *KeyRepositoryStep {
	return &KeyRepositoryStep{kind: credentialKind, opts: opts}
}

// Condition returns the condition type the step owns: "FernetKeysReady" or
// "CredentialKeysReady".
func (s *KeyRepositoryStep) Condition() string { return s.kind.condition }

// SecretName returns the name of the Secret holding k's repository.
func (s *KeyRepositoryStep) SecretName(k *v1alpha1.Keystone) string { return s.kind.secretName(k) }

// RestoreName returns the name of the restore ExternalSecret and of the Secret it
// writes, the restore copy: the repository Secret's name followed by "-restore".
func (s *KeyRepositoryStep) RestoreName(k *v1alpha1.Keystone) string {
	return s.kind.secretName(k) + "-restore"
}

// PushSecretName returns the name of the PushSecret that backs the repository up: the
// repository Secret's name.
func (s *KeyRepositoryStep) PushSecretName(k *v1alpha1.Keystone) string { return s.kind.secretName(k) }

// CronJobName returns the name of the rotation CronJob: k's name followed by
// "-fernet-rotate" or "-credential-rotate".
func (s *KeyRepositoryStep) CronJobName(k *v1alpha1.Keystone) string {
	return k.Name + "-" + s.kind.name + "-rotate"
}

// RemoteKey returns the backend key the repository is backed up to:
// openstack/keystone/<namespace>/<name>/fernet-keys (or credential-keys).
func (s *KeyRepositoryStep) RemoteKey(k *v1alpha1.Keystone) string {
	return "openstack/keystone/" + k.Namespace + "/" + k.Name + "/" + s.kind.suffix
}

// KeyRotationSettings are the numbers one key repository rotates with, defaults
// applied: what a key repository step checks with keys.CheckRotationSafety before it
// writes anything, and what its rotation CronJob runs with.
type KeyRotationSettings struct {
	// MaxActiveKeys is spec.fernet.maxActiveKeys or spec.credential.maxActiveKeys,
	// DefaultMaxActiveKeys when zero.
	MaxActiveKeys int
	// RotationInterval is the repository's rotationInterval, DefaultRotationInterval
	// when unset.
	RotationInterval time.Duration
	// TokenExpiration is spec.token.expiration, DefaultTokenExpiration when unset.
	TokenExpiration time.Duration
	// AllowExpiredWindow is spec.token.allowExpiredWindow, DefaultAllowExpiredWindow
	// when unset.
	AllowExpiredWindow time.Duration
}

// Check is keys.CheckRotationSafety of r: nil when the rotation never removes a key a
// valid token may still need; otherwise an error wrapping keys.ErrUnsafeRotation, or
// keys.ErrInvalidRotationSettings for a number that makes no sense on its own. A key
// repository step refuses the Keystone (terminal) exactly when Check fails.
func (r KeyRotationSettings) Check() error {
	return keys.CheckRotationSafety(r.MaxActiveKeys, r.RotationInterval, r.TokenExpiration, r.AllowExpiredWindow)
}

// FernetRotationSettings returns the rotation settings of k's fernet key repository:
// spec.fernet with spec.token, defaults applied.
func FernetRotationSettings(k *v1alpha1.Keystone) KeyRotationSettings {
	return rotationSettingsOf(fernetKind, k)
}

// CredentialRotationSettings returns the rotation settings of k's credential key
// repository: spec.credential with spec.token, defaults applied (see
// [NewCredentialKeysStep] for why the token settings bound it too).
func CredentialRotationSettings(k *v1alpha1.Keystone) KeyRotationSettings {
	return rotationSettingsOf(credentialKind, k)
}

func rotationSettingsOf(kind repositoryKind, k *v1alpha1.Keystone) KeyRotationSettings {
	spec := kind.spec(k)
	r := KeyRotationSettings{MaxActiveKeys: int(spec.MaxActiveKeys), RotationInterval: DefaultRotationInterval,
		TokenExpiration: DefaultTokenExpiration, AllowExpiredWindow: DefaultAllowExpiredWindow}
	if r.MaxActiveKeys == 0 {
		r.MaxActiveKeys = DefaultMaxActiveKeys
	}
	if spec.RotationInterval != nil {
		r.RotationInterval = spec.RotationInterval.Duration
	}
	if k.Spec.Token.Expiration != nil {
		r.TokenExpiration = k.Spec.Token.Expiration.Duration
	}
	if k.Spec.Token.AllowExpiredWindow != nil {
		r.AllowExpiredWindow = k.Spec.Token.AllowExpiredWindow.Duration
	}
	return r
}

// Reconcile runs one pass of the step for k (see [KeyRepositoryStep]), its outcome
// handed over with reconcile.Settle. No condition message, error or log line it writes
// contains a key.
func (s *KeyRepositoryStep) Reconcile(ctx context.Context, k *v1alpha1.Keystone) (ctrl.Result, error) {
	out, err := s.flow(ctx, k)
	return reconcile.Settle(k, out, err)
}

func (s *KeyRepositoryStep) flow(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	if err := s.opts.Validate(); err != nil {
		return reconcile.Outcome{}, crreconcile.TerminalError(err)
	}
	target := multicluster.TargetFrom(ctx)
	if target == nil || target.Client == nil {
		return reconcile.Outcome{}, fmt.Errorf("%s keys of Keystone %s/%s: %w", s.kind.name, k.Namespace, k.Name, ErrNoTarget)
	}
	c := target.Client

	rs := rotationSettingsOf(s.kind, k)
	if err := rs.Check(); err != nil {
		reason := ReasonUnsafeRotation
		if !errors.Is(err, keys.ErrUnsafeRotation) {
			reason = ReasonInvalidRotationSettings
		}
		return reconcile.Done(reconcile.FalseCondition(s.kind.condition, reason, fmt.Sprintf(
				"%s key rotation refused (%s.maxActiveKeys, %s.rotationInterval, spec.token): %v; nothing was created or changed",
				s.kind.name, s.kind.field, s.kind.field, err))),
			crreconcile.TerminalError(fmt.Errorf("%s keys of Keystone %s/%s: %s: %w", s.kind.name, k.Namespace, k.Name, s.kind.field, err))
	}

	if err := apply.EnsureObject(ctx, c, c.Scheme(), k, s.desiredRestoreExternalSecret(k), apply.FieldManager); err != nil {
		return s.fail(k, err)
	}
	repo, out, err := s.ensureRepository(ctx, c, k)
	if repo == nil {
		return out, err
	}
	if err := secrets.EnsurePushSecret(ctx, c, c.Scheme(), k, s.desiredPushSecret(k)); err != nil {
		return s.fail(k, err)
	}
	if err := job.EnsureCronJob(ctx, c, c.Scheme(), k, s.desiredCronJob(k, rs)); err != nil {
		return s.fail(k, err)
	}
	return reconcile.Done(reconcile.TrueCondition(s.kind.condition, ReasonKeysReady, fmt.Sprintf(
		"Secret %s/%s holds %d active %s keys (%s), backed up to remote key %q; CronJob %s rotates them at most every %s, keeping at most %d",
		k.Namespace, s.SecretName(k), len(repo), s.kind.name, describe(repo), s.RemoteKey(k),
		s.CronJobName(k), rotation.FormatInterval(rs.RotationInterval), rs.MaxActiveKeys))), nil
}

// fail returns err for the pass; an object the Keystone does not control, or one being
// deleted, also sets the condition False (KeysNotControlled) with the error's text.
func (s *KeyRepositoryStep) fail(k *v1alpha1.Keystone, err error) (reconcile.Outcome, error) {
	err = fmt.Errorf("%s keys of Keystone %s/%s: %w", s.kind.name, k.Namespace, k.Name, err)
	if errors.Is(err, apply.ErrNotControlled) || errors.Is(err, apply.ErrBeingDeleted) {
		return reconcile.Done(reconcile.FalseCondition(s.kind.condition, ReasonKeysNotControlled, err.Error())), err
	}
	return reconcile.Outcome{}, err
}

// failed is fail for the helpers that hand a repository back: no repository.
func (s *KeyRepositoryStep) failed(k *v1alpha1.Keystone, err error) (keys.Repository, reconcile.Outcome, error) {
	out, err := s.fail(k, err)
	return nil, out, err
}

// describe names the roles of a repository's indices, never a key: "staged 0, primary
// 2, secondaries [1]".
func describe(repo keys.Repository) string {
	return strings.TrimPrefix(repo.String(), "key repository: ")
}

// ensureRepository returns the repository the Secret holds after it made sure the
// Secret exists: kept, adopted, restored or generated. Without a repository, the
// outcome and error end the pass.
func (s *KeyRepositoryStep) ensureRepository(ctx context.Context, c client.Client, k *v1alpha1.Keystone) (keys.Repository, reconcile.Outcome, error) {
	key := client.ObjectKey{Namespace: k.Namespace, Name: s.SecretName(k)}
	current := &corev1.Secret{}
	err := c.Get(ctx, key, current)
	switch {
	case apierrors.IsNotFound(err):
		created, exists, out, err := s.createRepository(ctx, c, k, key)
		if !exists {
			return created, out, err
		}
		// Another writer created the Secret first (or the cache had not seen it):
		// read it past the cache and use it like any existing Secret.
		if err := apply.GetUncached(ctx, c, key, current); err != nil {
			return s.failed(k, fmt.Errorf("get Secret %s after it already existed: %w", key, err))
		}
	case err != nil:
		return s.failed(k, fmt.Errorf("get Secret %s: %w", key, err))
	}
	return s.useExisting(ctx, c, k, current)
}

// useExisting checks the existing Secret: it must be controlled by k (or unclaimed and
// marked for adoption) and hold a valid repository. Its data is never written; its
// metadata only for an adoption or to restore the labels another client changed.
func (s *KeyRepositoryStep) useExisting(ctx context.Context, c client.Client, k *v1alpha1.Keystone, current *corev1.Secret) (keys.Repository, reconcile.Outcome, error) {
	key := client.ObjectKeyFromObject(current)
	if current.DeletionTimestamp != nil {
		return s.failed(k, fmt.Errorf("existing Secret %s: %w: retry once it is gone", key, apply.ErrBeingDeleted))
	}
	adopt := false
	if !apply.IsControlled(c, k, current) {
		if !apply.Unclaimed(c, current) || current.Annotations[apply.AdoptAnnotation] != "true" {
			return s.failed(k, apply.CheckControlled(c, k, current, corev1.SchemeGroupVersion.WithKind("Secret")))
		}
		adopt = true
	}
	repo, err := keys.FromSecretData(current.Data)
	if err != nil {
		return nil, reconcile.Done(reconcile.FalseCondition(s.kind.condition, ReasonKeysInvalid, fmt.Sprintf(
				"Secret %s does not hold a valid %s key repository and is never overwritten: %v; repair or delete it",
				key, s.kind.name, err))),
			crreconcile.TerminalError(fmt.Errorf("%s keys of Keystone %s/%s: Secret %s: %w", s.kind.name, k.Namespace, k.Name, key, err))
	}
	if adopt {
		if err := s.adopt(ctx, c, k, current); err != nil {
			return s.failed(k, err)
		}
	} else if err := s.restoreLabels(ctx, c, k, current); err != nil {
		_, err = s.fail(k, err)
		return nil, reconcile.Done(reconcile.FalseCondition(s.kind.condition, ReasonKeysLabelsNotRestored, err.Error())), err
	}
	return repo, reconcile.Outcome{}, nil
}

// restoreLabels sets the labels of the repository Secret back to those the step
// writes, when another client changed or removed one, in a patch of the labels alone
// guarded by its resourceVersion (the rotation Job may write the data meanwhile). It
// writes nothing when they match.
func (s *KeyRepositoryStep) restoreLabels(ctx context.Context, c client.Client, k *v1alpha1.Keystone, current *corev1.Secret) error {
	want := s.labels(k)
	drifted := false
	for name, value := range want {
		if got, ok := current.Labels[name]; !ok || got != value {
			drifted = true
		}
	}
	if !drifted {
		return nil
	}
	key := client.ObjectKeyFromObject(current)
	base := current.DeepCopy()
	if current.Labels == nil {
		current.Labels = map[string]string{}
	}
	maps.Copy(current.Labels, want)
	if err := c.Patch(ctx, current, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("restore labels of Secret %s: %w", key, err)
	}
	apply.Record(ctx, apply.Write{Action: apply.ActionConfigured, GVK: corev1.SchemeGroupVersion.WithKind("Secret"), Key: key,
		Fields: []string{"metadata.labels"}})
	log.FromContext(ctx).Info("restored the labels of key repository Secret", "secret", key.String(), "repository", s.kind.name)
	return nil
}

// adopt makes k the owner of an unclaimed Secret marked with apply.AdoptAnnotation, in
// one patch guarded by its resourceVersion that also adds the managed-by label and,
// when the Secret has none, [rotation.RotatedAtAnnotation] at now (the repository may have been
// rotated just before; a late rotation only makes keys live longer). Its data is kept.
func (s *KeyRepositoryStep) adopt(ctx context.Context, c client.Client, k *v1alpha1.Keystone, current *corev1.Secret) error {
	key := client.ObjectKeyFromObject(current)
	base := current.DeepCopy()
	if err := apply.SetOwnership(c, c.Scheme(), k, current); err != nil {
		return fmt.Errorf("adopt Secret %s: %w", key, err)
	}
	if current.Labels == nil {
		current.Labels = map[string]string{}
	}
	maps.Copy(current.Labels, s.labels(k))
	fields := append(apply.OwnershipFields(c), "metadata.labels")
	if _, ok := current.Annotations[rotation.RotatedAtAnnotation]; !ok {
		if current.Annotations == nil {
			current.Annotations = map[string]string{}
		}
		current.Annotations[rotation.RotatedAtAnnotation] = s.now().UTC().Format(time.RFC3339)
		fields = append(fields, "metadata.annotations")
	}
	if err := c.Patch(ctx, current, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("adopt Secret %s: %w", key, err)
	}
	apply.Record(ctx, apply.Write{Action: apply.ActionConfigured, GVK: corev1.SchemeGroupVersion.WithKind("Secret"), Key: key, Fields: fields})
	log.FromContext(ctx).Info("adopted key repository Secret", "secret", key.String(), "repository", s.kind.name)
	return nil
}

// createRepository creates the missing Secret with the repository restored from the
// restore copy or, when nothing can restore one, generated. exists reports that the
// Secret already existed (Create answered AlreadyExists); otherwise, without a
// repository, the outcome and error end the pass.
func (s *KeyRepositoryStep) createRepository(ctx context.Context, c client.Client, k *v1alpha1.Keystone,
	key client.ObjectKey) (repo keys.Repository, exists bool, out reconcile.Outcome, err error) {
	repo, restored, out, err := s.restoreOrGenerate(ctx, c, k)
	if repo == nil {
		return nil, false, out, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: key.Name, Namespace: key.Namespace, Labels: s.labels(k),
			Annotations: map[string]string{rotation.RotatedAtAnnotation: s.now().UTC().Format(time.RFC3339)},
		},
		Type: corev1.SecretTypeOpaque,
		Data: repo.SecretData(),
	}
	if err := apply.SetOwnership(c, c.Scheme(), k, secret); err != nil {
		out, err = s.fail(k, fmt.Errorf("create Secret %s: %w", key, err))
		return nil, false, out, err
	}
	if err := c.Create(ctx, secret); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, true, reconcile.Outcome{}, nil
		}
		out, err = s.fail(k, fmt.Errorf("create Secret %s: %w", key, err))
		return nil, false, out, err
	}
	apply.Record(ctx, apply.Write{Action: apply.ActionCreated, GVK: corev1.SchemeGroupVersion.WithKind("Secret"), Key: key})
	if restored {
		log.FromContext(ctx).Info("restored key repository from the backend", "secret", key.String(),
			"repository", s.kind.name, "restoredFrom", s.RestoreName(k))
	} else {
		log.FromContext(ctx).Info("generated key repository", "secret", key.String(), "repository", s.kind.name)
	}
	return repo, false, reconcile.Outcome{}, nil
}

// restoreOrGenerate decides what a missing Secret is created with, by the rules of
// secrets.EnsureGeneratedSecret's RestoreFrom applied to the whole repository:
//
//   - the restore copy holds data: it is the repository (restored); data that is not a
//     valid repository is refused (KeysInvalid) and nothing is generated, since the
//     backend holds something;
//   - otherwise, while an ExternalSecret that writes the restore copy has not answered,
//     for its current generation and since it was created, that the backend holds nothing:
//     WaitingForKeyRestore and a requeue after secrets.PollInterval;
//   - otherwise a new repository is generated with keys.Setup.
//
// secrets.CheckRestore reads both past the informer cache: the restore ExternalSecret
// the step applied earlier in the same pass counts even before the cache has seen it.
func (s *KeyRepositoryStep) restoreOrGenerate(ctx context.Context, c client.Client, k *v1alpha1.Keystone) (repo keys.Repository, restored bool, out reconcile.Outcome, err error) {
	restoreKey := client.ObjectKey{Namespace: k.Namespace, Name: s.RestoreName(k)}
	check, err := secrets.CheckRestore(ctx, c, restoreKey)
	if err != nil {
		out, err = s.fail(k, err)
		return nil, false, out, err
	}
	switch {
	case check.Secret != nil && len(check.Secret.Data) > 0:
		repo, err := keys.FromSecretData(check.Secret.Data)
		if err != nil {
			return nil, false, reconcile.Requeue(reconcile.FalseCondition(s.kind.condition, ReasonKeysInvalid, fmt.Sprintf(
				"restore copy Secret %s, synced from remote key %q, does not hold a valid %s key repository: %v; "+
					"no new repository is generated while the backend holds one; repair the backup",
				restoreKey, s.RemoteKey(k), s.kind.name, err)), secrets.PollInterval), nil
		}
		return repo, true, reconcile.Outcome{}, nil
	case check.Pending != nil:
		return nil, false, reconcile.Requeue(reconcile.FalseCondition(s.kind.condition, ReasonWaitingForKeyRestore, fmt.Sprintf(
			"waiting for ExternalSecret %s, which %s, to tell whether remote key %q holds a %s key repository "+
				"to restore into Secret %s; no new repository is generated while the backend may still hold one",
			check.Pending, check.Why, s.RemoteKey(k), s.kind.name, restoreKey)), secrets.PollInterval), nil
	}
	repo, err = keys.Setup(nil)
	if err != nil {
		out, err = s.fail(k, fmt.Errorf("generate %s key repository: %w", s.kind.name, err))
		return nil, false, out, err
	}
	return repo, false, reconcile.Outcome{}, nil
}

// labels are the labels of the step's children.
func (s *KeyRepositoryStep) labels(k *v1alpha1.Keystone) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "keystone",
		"app.kubernetes.io/instance":  k.Name,
		"app.kubernetes.io/component": s.kind.suffix,
		apply.ManagedByLabel:          s.opts.FieldManager,
	}
}

// serviceAccount is the ServiceAccount of k's rotation pods: KeyStepOptions.ServiceAccountOf
// when set, else KeyStepOptions.ServiceAccountName.
func (s *KeyRepositoryStep) serviceAccount(k *v1alpha1.Keystone) string {
	if s.opts.ServiceAccountOf != nil {
		return s.opts.ServiceAccountOf(k)
	}
	return s.opts.ServiceAccountName
}

func (s *KeyRepositoryStep) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *KeyRepositoryStep) refresh() *metav1.Duration {
	d := s.opts.BackupRefreshInterval
	if d == 0 {
		d = DefaultBackupRefreshInterval
	}
	return &metav1.Duration{Duration: d}
}

// desiredRestoreExternalSecret is the ExternalSecret that syncs the backup at
// RemoteKey, every property of it, into the restore copy. Its deletionPolicy Delete
// makes ESO answer a backend that holds nothing with Ready=True, reason SecretDeleted,
// so a first install needs no manual step; a backend it cannot reach keeps the restore
// pending.
func (s *KeyRepositoryStep) desiredRestoreExternalSecret(k *v1alpha1.Keystone) *esov1.ExternalSecret {
	return &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: s.RestoreName(k), Namespace: k.Namespace, Labels: s.labels(k)},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef:  secrets.ESOSecretStoreRef(secrets.EffectiveStoreRef(k.Spec.SecretStoreRef)),
			RefreshInterval: s.refresh(),
			Target: esov1.ExternalSecretTarget{
				Name:           s.RestoreName(k),
				DeletionPolicy: esov1.DeletionPolicyDelete,
				Template: &esov1.ExternalSecretTemplate{Metadata: esov1.ExternalSecretTemplateMetadata{
					Labels: map[string]string{apply.ManagedByLabel: s.opts.FieldManager},
				}},
			},
			DataFrom: []esov1.ExternalSecretDataFromRemoteRef{{Extract: &esov1.ExternalSecretDataRemoteRef{Key: s.RemoteKey(k)}}},
		},
	}
}

// desiredPushSecret is the PushSecret that pushes the whole repository Secret (every
// index as a property) to RemoteKey. Its updatePolicy is Replace, unlike
// secrets.GeneratedPushSecret's IfNotExists: every rotation must reach the backup.
// That is safe because the step generates a repository only after the restore
// ExternalSecrets answered that the backend holds nothing. Its deletionPolicy None
// keeps the backup when the PushSecret, the Keystone or the namespace is deleted, for a
// later restore.
func (s *KeyRepositoryStep) desiredPushSecret(k *v1alpha1.Keystone) *esov1alpha1.PushSecret {
	return &esov1alpha1.PushSecret{
		ObjectMeta: metav1.ObjectMeta{Name: s.PushSecretName(k), Namespace: k.Namespace, Labels: s.labels(k)},
		Spec: esov1alpha1.PushSecretSpec{
			RefreshInterval: s.refresh(),
			SecretStoreRefs: secrets.PushSecretStoreRefs(secrets.EffectiveStoreRef(k.Spec.SecretStoreRef)),
			UpdatePolicy:    esov1alpha1.PushSecretUpdatePolicyReplace,
			DeletionPolicy:  esov1alpha1.PushSecretDeletionPolicyNone,
			Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: s.SecretName(k)}},
			Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{
				RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: s.RemoteKey(k)},
			}}},
		},
	}
}

// desiredCronJob is the rotation CronJob: hourly, the operator image with
// rotation.RotateKeysArgs, as the ServiceAccount of serviceAccount, which needs
// rotation.SecretRules on the repository Secret.
func (s *KeyRepositoryStep) desiredCronJob(k *v1alpha1.Keystone, rs KeyRotationSettings) *batchv1.CronJob {
	return rotation.NewCronJob(rotation.CronJobParams{
		Name: s.CronJobName(k), Namespace: k.Namespace, Labels: s.labels(k), Schedule: KeyRotationSchedule,
		Image: s.opts.OperatorImage, ServiceAccountName: s.serviceAccount(k),
		Args: rotation.RotateKeysArgs(client.ObjectKey{Namespace: k.Namespace, Name: s.SecretName(k)}, rs.MaxActiveKeys, rs.RotationInterval),
	})
}
