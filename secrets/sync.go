package secrets

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// Default reasons of the condition [Sync] sets; SyncParams overrides each.
const (
	// ReasonSecretsAvailable: the Secret holds every value asked for.
	ReasonSecretsAvailable = "SecretsAvailable"
	// ReasonWaitingForSecret: ESO has not synced the ExternalSecret, or the Secret lacks a key.
	ReasonWaitingForSecret = "WaitingForSecret"
	// ReasonSecretsError: an API call failed or the ExternalSecret was refused.
	ReasonSecretsError = "SecretsError"
)

// SyncParams says what [Sync] syncs and how it reports it.
type SyncParams struct {
	// ConditionType is the condition Sync reports through. Required.
	ConditionType string
	// ReadyReason, WaitingReason and ErrorReason are the reasons of the True, the waiting
	// and the failed condition; empty means ReasonSecretsAvailable, ReasonWaitingForSecret
	// and ReasonSecretsError.
	ReadyReason, WaitingReason, ErrorReason string
	// ReadyMessage is the True condition's message; empty means one naming the remote
	// keys and the Secret.
	ReadyMessage string
	// StoreRef is the CR's spec.secretStoreRef, resolved with [EffectiveStoreRef].
	StoreRef *commonv1.SecretStoreRefSpec
	// NamespaceScoped refuses a ClusterSecretStore, as [StoreGate] does.
	NamespaceScoped bool
	// Name is the name of the ExternalSecret and of the Secret it writes, in the
	// owner's namespace. Required.
	Name string
	// Data maps each key of the Secret to a remote key and property: at least one entry,
	// each with a SecretKey (distinct) and a RemoteRef.Key.
	Data []esov1.ExternalSecretData
	// RefreshInterval is the ExternalSecret's spec.refreshInterval; nil leaves ESO's
	// default (one hour).
	RefreshInterval *metav1.Duration
	// Labels go on the ExternalSecret and on the Secret it writes; the Secret carries
	// apply.ManagedByLabel as well, whatever Labels says.
	Labels map[string]string
}

// Synced is the answer of [Sync]: the outcome, and the values once the condition is True.
type Synced struct {
	reconcile.Outcome
	// Values are the Secret's values by data key; nil until the condition is True.
	Values map[string]string
	// Digest is [Digest] of the value, or of every value in Data's order when there are
	// several; empty until the condition is True.
	Digest string
}

// Sync is the Secrets flow of a CR (owner): [StoreGate], the owner's ExternalSecret
// applied with apply.EnsureObject, its sync awaited, then the values read from the
// Secret it writes. See "The Secrets flow" in the package documentation for its
// conditions and requeues.
func Sync(ctx context.Context, c client.Client, scheme *runtime.Scheme, owner client.Object, p SyncParams) (Synced, error) {
	if err := p.validate(scheme, owner); err != nil {
		return p.failed(err)
	}
	gate, err := StoreGate(ctx, c, owner, p.ConditionType, EffectiveStoreRef(p.StoreRef), p.NamespaceScoped)
	if err != nil {
		return p.failed(err)
	}
	if !gate.Continue() {
		return Synced{Outcome: gate}, nil
	}
	key := client.ObjectKey{Namespace: owner.GetNamespace(), Name: p.Name}
	fieldManager := apply.FieldManagerFor(c)
	if err := apply.EnsureObject(ctx, c, scheme, owner, p.externalSecret(key, fieldManager), fieldManager); err != nil {
		return p.failed(err)
	}
	es, err := getExternalSecret(ctx, c, key)
	if err != nil {
		return p.failed(err)
	}
	why := "does not exist yet"
	synced := false
	if es != nil {
		synced, why = externalSecretSynced(es)
	}
	if !synced {
		return p.waiting(fmt.Sprintf("waiting for ExternalSecret %s to sync %s; it %s", key, p.remoteKeys(), why)), nil
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return p.waiting(fmt.Sprintf("Secret %s does not exist yet", key)), nil
		}
		return p.failed(fmt.Errorf("get Secret %s: %w", key, err))
	}
	values := make(map[string]string, len(p.Data))
	ordered := make([]string, 0, len(p.Data))
	for _, d := range p.Data {
		v := secret.Data[d.SecretKey]
		if len(v) == 0 {
			return p.waiting(fmt.Sprintf("Secret %s holds no %q yet", key, d.SecretKey)), nil
		}
		values[d.SecretKey] = string(v)
		ordered = append(ordered, string(v))
	}
	msg := p.ReadyMessage
	if msg == "" {
		msg = fmt.Sprintf("%s synced into Secret %s", p.remoteKeys(), key)
	}
	return Synced{
		Outcome: reconcile.Done(reconcile.TrueCondition(p.ConditionType, cmp.Or(p.ReadyReason, ReasonSecretsAvailable), msg)),
		Values:  values,
		Digest:  digestAll(ordered),
	}, nil
}

// Digest returns the first 16 hex digits of the SHA-256 of value: enough to tell values
// apart (a pod-template annotation that rolls the pods when a value changes), useless to
// recover one.
func Digest(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:8])
}

// digestAll is Digest of the one value, or of the length-prefixed values in order.
func digestAll(values []string) string {
	if len(values) == 1 {
		return Digest(values[0])
	}
	var b strings.Builder
	for _, v := range values {
		_ = binary.Write(&b, binary.BigEndian, uint64(len(v)))
		b.WriteString(v)
	}
	return Digest(b.String())
}

// validate refuses params Sync cannot run with, before any API call.
func (p SyncParams) validate(scheme *runtime.Scheme, owner client.Object) error {
	if err := apply.CheckScheme(scheme); err != nil {
		return fmt.Errorf("sync Secret %q: %w", p.Name, err)
	}
	invalid := func(what string) error {
		return fmt.Errorf("sync Secret %q: %s: %w", p.Name, what, ErrInvalidSyncParams)
	}
	switch {
	case isNil(owner):
		return invalid("owner is nil")
	case p.ConditionType == "":
		return invalid("ConditionType is empty")
	case p.Name == "":
		return invalid("Name is empty")
	case len(p.Data) == 0:
		return invalid("Data is empty")
	}
	seen := map[string]bool{}
	for i, d := range p.Data {
		switch {
		case d.SecretKey == "" || d.RemoteRef.Key == "":
			return invalid(fmt.Sprintf("Data[%d] needs a SecretKey and a RemoteRef.Key", i))
		case seen[d.SecretKey]:
			return invalid(fmt.Sprintf("Data[%d]: SecretKey %q repeated", i, d.SecretKey))
		}
		seen[d.SecretKey] = true
	}
	return nil
}

// externalSecret is the ExternalSecret Sync applies at key; its Secret carries
// ManagedByLabel=fieldManager so the operator's label-filtered cache holds it.
func (p SyncParams) externalSecret(key client.ObjectKey, fieldManager string) *esov1.ExternalSecret {
	secretLabels := maps.Clone(p.Labels)
	if secretLabels == nil {
		secretLabels = map[string]string{}
	}
	secretLabels[apply.ManagedByLabel] = fieldManager
	return &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: maps.Clone(p.Labels)},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef:  ESOSecretStoreRef(EffectiveStoreRef(p.StoreRef)),
			RefreshInterval: p.RefreshInterval,
			Target: esov1.ExternalSecretTarget{
				Name:     key.Name,
				Template: &esov1.ExternalSecretTemplate{Metadata: esov1.ExternalSecretTemplateMetadata{Labels: secretLabels}},
			},
			Data: append([]esov1.ExternalSecretData(nil), p.Data...),
		},
	}
}

// remoteKeys names the remote keys of p.Data for a condition message.
func (p SyncParams) remoteKeys() string {
	var keys []string
	seen := map[string]bool{}
	for _, d := range p.Data {
		if !seen[d.RemoteRef.Key] {
			seen[d.RemoteRef.Key] = true
			keys = append(keys, fmt.Sprintf("%q", d.RemoteRef.Key))
		}
	}
	if len(keys) == 1 {
		return "remote key " + keys[0]
	}
	return "remote keys " + strings.Join(keys, ", ")
}

// waiting is the outcome of a Secret not synced yet: False, requeue after PollInterval.
func (p SyncParams) waiting(msg string) Synced {
	return Synced{Outcome: reconcile.Requeue(
		reconcile.FalseCondition(p.ConditionType, cmp.Or(p.WaitingReason, ReasonWaitingForSecret), msg), PollInterval)}
}

// failed is the answer to a failed call: False with the error's text (it names objects,
// never a value) when there is a condition type, and the error.
func (p SyncParams) failed(err error) (Synced, error) {
	if p.ConditionType == "" {
		return Synced{}, err
	}
	return Synced{Outcome: reconcile.Done(
		reconcile.FalseCondition(p.ConditionType, cmp.Or(p.ErrorReason, ReasonSecretsError), err.Error()))}, err
}
