package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// ErrSecretBackendUnsupported is returned by [SecretBackend.Push] and
// [SecretBackend.Sync] for a PushSecret or ExternalSecret that uses a feature the
// backend does not play (a PushSecret selecting no Secret, a dataFrom entry other than
// extract).
var ErrSecretBackendUnsupported = errors.New("not played by the test secret backend")

// Messages [SecretBackend.Sync] writes on an ExternalSecret's Ready condition, as
// External Secrets Operator (v0.20) does.
const (
	// SecretBackendSyncedMessage is the message of a successful sync.
	SecretBackendSyncedMessage = "secret synced"
	// SecretBackendDeletedMessage is the message of a sync that deleted the target
	// Secret under deletionPolicy Delete.
	SecretBackendDeletedMessage = "secret deleted due to DeletionPolicy"
	// SecretBackendNotOwnedMessage is the message of a sync under deletionPolicy Delete
	// that left the target Secret alone because the ExternalSecret does not control it.
	SecretBackendNotOwnedMessage = "target Secret is not owned by the ExternalSecret; not deleted"
)

// SecretBackend is an in-memory secret backend (OpenBao, say) played behind External
// Secrets Operator v0.20, which envtest does not run. [SecretBackend.Push] and
// [SecretBackend.Sync] do what ESO's PushSecret and ExternalSecret controllers do with
// the objects stored on the API server, including the parts credential safety rests
// on: updatePolicy IfNotExists, and how a value missing from the backend is reported
// for each deletionPolicy.
//
// The backend holds provider secrets: a remote key (for OpenBao, its path) maps to a
// set of properties. A PushSecret data entry with match.secretKey writes one property;
// an entry without it writes the whole source Secret, every data key a property.
//
// Push writes no PushSecret status; use [MarkPushSecretSynced] or [MarkPushSecretFailed]
// for that. Values are compared and stored as strings; they never appear in errors. A
// SecretBackend is safe for concurrent use.
type SecretBackend struct {
	c client.Client
	s *backendStore
}

// backendStore is what a SecretBackend holds, shared by the views of [SecretBackend.On].
type backendStore struct {
	mu     sync.Mutex
	values map[string]map[string]string // remote key -> property -> value
	writes int
}

// NewSecretBackend returns an empty backend that reads and writes the objects of ESO
// through c.
func NewSecretBackend(c client.Client) *SecretBackend {
	return &SecretBackend{c: c, s: &backendStore{values: map[string]map[string]string{}}}
}

// On returns the backend seen through c: the same provider secrets and write count,
// with the objects of ESO read and written through c (a target cluster's client, a
// fault-injecting one).
func (b *SecretBackend) On(c client.Client) *SecretBackend {
	return &SecretBackend{c: c, s: b.s}
}

// Get returns a copy of the provider secret at remoteKey (its properties) and whether
// the backend holds it.
func (b *SecretBackend) Get(remoteKey string) (map[string]string, bool) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	v, ok := b.s.values[remoteKey]
	return maps.Clone(v), ok
}

// Property returns one property of the provider secret at remoteKey and whether the
// backend holds it.
func (b *SecretBackend) Property(remoteKey, property string) (string, bool) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	v, ok := b.s.values[remoteKey][property]
	return v, ok
}

// Set stores data as the provider secret at remoteKey, replacing what the backend holds
// there, as a backup made before the test. It does not count as a write.
func (b *SecretBackend) Set(remoteKey string, data map[string][]byte) {
	v := make(map[string]string, len(data))
	for k, d := range data {
		v[k] = string(d)
	}
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	b.s.values[remoteKey] = v
}

// Values returns a copy of every provider secret the backend holds, by remote key.
func (b *SecretBackend) Values() map[string]map[string]string {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	out := make(map[string]map[string]string, len(b.s.values))
	for k, v := range b.s.values {
		out[k] = maps.Clone(v)
	}
	return out
}

// Writes returns how many values (a property, or a whole Secret) [SecretBackend.Push]
// has written.
func (b *SecretBackend) Writes() int {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	return b.s.writes
}

// Push runs ESO's PushSecret reconcile for the PushSecret at key against the backend:
//   - a data entry with match.secretKey writes that key of the source Secret
//     (spec.selector.secret.name) as the property remoteRef.property of the provider
//     secret remoteRef.remoteKey;
//   - a data entry without match.secretKey writes the whole source Secret as the
//     provider secret remoteRef.remoteKey (every data key a property), replacing what
//     the backend holds there;
//   - under updatePolicy IfNotExists an entry that would overwrite an existing
//     property (with secretKey) or an existing provider secret (without) is skipped;
//   - a source Secret or a source key that does not exist pushes nothing at all (ESO
//     reports the PushSecret Errored); a PushSecret that does not exist pushes nothing.
//
// It returns an error when the API server cannot be read, and one wrapping
// [ErrSecretBackendUnsupported] for a PushSecret that selects no Secret.
func (b *SecretBackend) Push(ctx context.Context, key client.ObjectKey) error {
	ps := &esov1alpha1.PushSecret{}
	if err := b.c.Get(ctx, key, ps); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("simulate: secret backend: push PushSecret %s: %w", key, err)
	}
	sel := ps.Spec.Selector.Secret
	if sel == nil || sel.Name == "" {
		return fmt.Errorf("simulate: secret backend: push PushSecret %s: spec.selector.secret: %w", key, ErrSecretBackendUnsupported)
	}
	srcKey := client.ObjectKey{Namespace: key.Namespace, Name: sel.Name}
	src := &corev1.Secret{}
	if err := b.c.Get(ctx, srcKey, src); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("simulate: secret backend: push PushSecret %s: get source Secret %s: %w", key, srcKey, err)
	}
	for _, d := range ps.Spec.Data {
		if k := d.Match.SecretKey; k != "" {
			if _, ok := src.Data[k]; !ok {
				return nil
			}
		}
	}
	ifNotExists := ps.Spec.UpdatePolicy == esov1alpha1.PushSecretUpdatePolicyIfNotExists
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	for _, d := range ps.Spec.Data {
		ref := d.Match.RemoteRef
		if d.Match.SecretKey == "" {
			if _, exists := b.s.values[ref.RemoteKey]; exists && ifNotExists {
				continue
			}
			v := make(map[string]string, len(src.Data))
			for k, s := range src.Data {
				v[k] = string(s)
			}
			b.s.values[ref.RemoteKey] = v
			b.s.writes++
			continue
		}
		props, ok := b.s.values[ref.RemoteKey]
		if _, exists := props[ref.Property]; exists && ifNotExists {
			continue
		}
		if !ok {
			props = map[string]string{}
			b.s.values[ref.RemoteKey] = props
		}
		props[ref.Property] = string(src.Data[d.Match.SecretKey])
		b.s.writes++
	}
	return nil
}

// Sync runs ESO's ExternalSecret reconcile for the ExternalSecret at key against the
// backend. A spec.data entry reads the property remoteRef.property of the provider
// secret remoteRef.key (with no property, the whole provider secret as a JSON object);
// a spec.dataFrom extract entry copies every property of the provider secret at
// extract.key.
//
// With every value present it writes the target Secret as [MarkExternalSecretSynced]
// does and sets Ready=True with reason SecretSynced. A value missing from the backend
// is, as in ESO v0.20 (GetProviderSecretData with NoSecretErr):
//   - deletionPolicy Retain (ESO's default): a failed sync, Ready=False with reason
//     SecretSyncedError and the message "could not get secret data from provider" (the
//     same condition as an unreachable backend); the target Secret is left alone;
//   - deletionPolicy Delete: the value is skipped; with no data left the target Secret
//     is deleted and Ready=True with reason SecretDeleted. ESO deletes only a Secret it
//     owns: a target that exists without this ExternalSecret as its controller, or a
//     creationPolicy other than Owner, is left alone and Ready=False with reason
//     SecretSyncedError;
//   - deletionPolicy Merge: the value is skipped and the target is written with what
//     remains, Ready=True with reason SecretSynced.
//
// Ready=True records refreshTime, binding and syncedResourceVersion in ESO's form,
// "<generation>-<hex SHA3-224 of the annotations and labels>". It returns an error
// when the ExternalSecret does not exist or the API server fails, and one wrapping
// [ErrSecretBackendUnsupported] for a dataFrom entry other than extract.
func (b *SecretBackend) Sync(ctx context.Context, key client.ObjectKey) error {
	es := &esov1.ExternalSecret{}
	if err := b.c.Get(ctx, key, es); err != nil {
		return fmt.Errorf("simulate: secret backend: sync ExternalSecret %s: %w", key, err)
	}
	data, missing, err := b.fetch(es)
	if err != nil {
		return fmt.Errorf("simulate: secret backend: sync ExternalSecret %s: %w", key, err)
	}
	target := es.Spec.Target.Name
	if target == "" {
		target = es.Name
	}
	policy := es.Spec.Target.DeletionPolicy
	switch {
	case len(missing) > 0 && (policy == "" || policy == esov1.DeletionPolicyRetain):
		_, err = MarkExternalSecretNotSynced(ctx, b.c, key, esov1.ConditionReasonSecretSyncedError)
	case len(data) == 0 && policy == esov1.DeletionPolicyDelete:
		err = b.deleteTarget(ctx, es, client.ObjectKey{Namespace: es.Namespace, Name: target})
	default:
		_, err = MarkExternalSecretSynced(ctx, b.c, key, data)
	}
	if err != nil {
		return fmt.Errorf("simulate: secret backend: sync ExternalSecret %s: %w", key, err)
	}
	return nil
}

// Synced reports whether the ExternalSecret at key already holds what [SecretBackend.Sync]
// would write: its Ready condition (status and reason, recorded for its current
// metadata when True) and the target Secret's data, or the target's absence where Sync
// deletes it. A test that plays ESO on every poll calls Sync only when Synced is false,
// so a converged world sees no write. It errors as Sync does.
func (b *SecretBackend) Synced(ctx context.Context, key client.ObjectKey) (bool, error) {
	es := &esov1.ExternalSecret{}
	if err := b.c.Get(ctx, key, es); err != nil {
		return false, fmt.Errorf("simulate: secret backend: read ExternalSecret %s: %w", key, err)
	}
	data, missing, err := b.fetch(es)
	if err != nil {
		return false, fmt.Errorf("simulate: secret backend: read ExternalSecret %s: %w", key, err)
	}
	cond := externalSecretReady(es)
	is := func(status corev1.ConditionStatus, reason string) bool {
		return cond != nil && cond.Status == status && cond.Reason == reason &&
			(status != corev1.ConditionTrue || es.Status.SyncedResourceVersion == esoResourceVersion(es.ObjectMeta))
	}
	target := client.ObjectKey{Namespace: es.Namespace, Name: es.Spec.Target.Name}
	if target.Name == "" {
		target.Name = es.Name
	}
	policy, creation := es.Spec.Target.DeletionPolicy, es.Spec.Target.CreationPolicy
	switch {
	case len(missing) > 0 && (policy == "" || policy == esov1.DeletionPolicyRetain):
		return is(corev1.ConditionFalse, esov1.ConditionReasonSecretSyncedError), nil
	case len(data) == 0 && policy == esov1.DeletionPolicyDelete:
		if creation != "" && creation != esov1.CreatePolicyOwner {
			return is(corev1.ConditionFalse, esov1.ConditionReasonSecretSyncedError), nil
		}
		s := &corev1.Secret{}
		switch err := b.c.Get(ctx, target, s); {
		case apierrors.IsNotFound(err):
			return is(corev1.ConditionTrue, esov1.ConditionReasonSecretDeleted), nil
		case err != nil:
			return false, fmt.Errorf("simulate: secret backend: read ExternalSecret %s: get target Secret %s: %w", key, target, err)
		case !metav1.IsControlledBy(s, es):
			return is(corev1.ConditionFalse, esov1.ConditionReasonSecretSyncedError), nil
		}
		return false, nil // Sync deletes the target
	}
	if !is(corev1.ConditionTrue, esov1.ConditionReasonSecretSynced) {
		return false, nil
	}
	if creation == esov1.CreatePolicyNone {
		return true, nil
	}
	s := &corev1.Secret{}
	if err := b.c.Get(ctx, target, s); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("simulate: secret backend: read ExternalSecret %s: get target Secret %s: %w", key, target, err)
	}
	if creation == esov1.CreatePolicyMerge {
		for k, v := range data {
			if !bytes.Equal(s.Data[k], v) {
				return false, nil
			}
		}
		return true, nil
	}
	if (creation == "" || creation == esov1.CreatePolicyOwner) && !metav1.IsControlledBy(s, es) {
		return false, nil
	}
	return maps.EqualFunc(s.Data, data, bytes.Equal), nil
}

// Missing returns the remote keys (and "<key> property <property>" for a property) that
// es reads and the backend lacks, in the order of spec.dataFrom then spec.data; never a
// value.
func (b *SecretBackend) Missing(es *esov1.ExternalSecret) []string {
	_, missing, _ := b.fetch(es)
	return missing
}

// fetch reads the values es asks for; missing names those the backend lacks.
func (b *SecretBackend) fetch(es *esov1.ExternalSecret) (data map[string][]byte, missing []string, err error) {
	b.s.mu.Lock()
	defer b.s.mu.Unlock()
	data = map[string][]byte{}
	for i, from := range es.Spec.DataFrom {
		if from.Extract == nil {
			return nil, nil, fmt.Errorf("spec.dataFrom[%d]: only extract: %w", i, ErrSecretBackendUnsupported)
		}
		props, ok := b.s.values[from.Extract.Key]
		if !ok {
			missing = append(missing, from.Extract.Key)
			continue
		}
		for k, v := range props {
			data[k] = []byte(v)
		}
	}
	for i, d := range es.Spec.Data {
		props, ok := b.s.values[d.RemoteRef.Key]
		if !ok {
			missing = append(missing, d.RemoteRef.Key)
			continue
		}
		if d.RemoteRef.Property == "" {
			whole, err := json.Marshal(props)
			if err != nil {
				return nil, nil, fmt.Errorf("spec.data[%d]: encode provider secret: %w", i, err)
			}
			data[d.SecretKey] = whole
			continue
		}
		v, ok := props[d.RemoteRef.Property]
		if !ok {
			missing = append(missing, d.RemoteRef.Key+" property "+d.RemoteRef.Property)
			continue
		}
		data[d.SecretKey] = []byte(v)
	}
	return data, missing, nil
}

// deleteTarget deletes the target Secret of es (when es controls it) and reports
// SecretDeleted, as ESO does under deletionPolicy Delete with no data left.
func (b *SecretBackend) deleteTarget(ctx context.Context, es *esov1.ExternalSecret, target client.ObjectKey) error {
	key := client.ObjectKeyFromObject(es)
	if p := es.Spec.Target.CreationPolicy; p != "" && p != esov1.CreatePolicyOwner {
		return b.setReady(ctx, key, corev1.ConditionFalse, esov1.ConditionReasonSecretSyncedError, SecretBackendNotOwnedMessage, "")
	}
	s := &corev1.Secret{}
	err := b.c.Get(ctx, target, s)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("get target Secret %s: %w", target, err)
	case !metav1.IsControlledBy(s, es):
		return b.setReady(ctx, key, corev1.ConditionFalse, esov1.ConditionReasonSecretSyncedError, SecretBackendNotOwnedMessage, "")
	default:
		pre := client.Preconditions{UID: &s.UID, ResourceVersion: &s.ResourceVersion}
		if err := b.c.Delete(ctx, s, pre); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete target Secret %s: %w", target, err)
		}
	}
	return b.setReady(ctx, key, corev1.ConditionTrue, esov1.ConditionReasonSecretDeleted, SecretBackendDeletedMessage, target.Name)
}

// setReady writes the ExternalSecret's Ready condition as setExternalSecretCondition does.
func (b *SecretBackend) setReady(ctx context.Context, key client.ObjectKey, status corev1.ConditionStatus, reason, msg, target string) error {
	_, err := setExternalSecretCondition(ctx, b.c, key, status, reason, msg, target)
	return err
}
