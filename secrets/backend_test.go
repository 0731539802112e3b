package secrets_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// backend stands in for OpenBao behind External Secrets Operator, which envtest does
// not run. push and sync do what ESO v0.20's PushSecret and ExternalSecret controllers
// do with the objects stored on the API server, including the parts the credential
// safety of EnsureGeneratedSecret rests on: updatePolicy IfNotExists, and how a key
// missing from the backend is reported for each deletionPolicy.
type backend struct {
	mu     sync.Mutex
	values map[string]string // "remoteKey/property" -> value
	writes int               // values written by push
}

func newBackend() *backend { return &backend{values: map[string]string{}} }

func (b *backend) get(ref string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.values[ref]
	return v, ok
}

// push runs ESO's PushSecret reconcile for the PushSecret at key: for every data entry,
// it writes the source Secret's value to the backend, unless updatePolicy is
// IfNotExists and the backend already holds that property. A source Secret or key
// that does not exist pushes nothing (ESO reports the PushSecret Errored).
func (b *backend) push(t testing.TB, key client.ObjectKey) {
	t.Helper()
	ctx := context.Background()
	ps := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, key, ps); err != nil {
		if apierrors.IsNotFound(err) {
			return
		}
		t.Fatalf("backend: get PushSecret %s: %v", key, err)
	}
	if ps.Spec.Selector.Secret == nil {
		return
	}
	src := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: ps.Spec.Selector.Secret.Name}, src); err != nil {
		if apierrors.IsNotFound(err) {
			return
		}
		t.Fatalf("backend: get source Secret of PushSecret %s: %v", key, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range ps.Spec.Data {
		value, ok := src.Data[d.Match.SecretKey]
		if !ok {
			return
		}
		ref := d.Match.RemoteRef.RemoteKey + "/" + d.Match.RemoteRef.Property
		if _, exists := b.values[ref]; exists && ps.Spec.UpdatePolicy == esov1alpha1.PushSecretUpdatePolicyIfNotExists {
			continue
		}
		b.values[ref] = string(value)
		b.writes++
	}
}

// sync runs ESO's ExternalSecret reconcile for the ExternalSecret at key against the
// backend. With every value present it writes the target Secret and reports Ready=True
// (SecretSynced). A value missing from the backend is, as in ESO v0.20
// (GetProviderSecretData with NoSecretErr):
//   - deletionPolicy Retain (ESO's default): a failed sync, Ready=False with reason
//     SecretSyncedError and the message "could not get secret data from provider" — the
//     same condition as an unreachable backend;
//   - deletionPolicy Delete: the value is skipped; with no data left the target Secret
//     is deleted and Ready=True with reason SecretDeleted;
//   - deletionPolicy Merge: the value is skipped and the target is written with what
//     remains, Ready=True with reason SecretSynced.
func (b *backend) sync(t testing.TB, key client.ObjectKey) {
	t.Helper()
	ctx := context.Background()
	es := &esov1.ExternalSecret{}
	if err := env.Client.Get(ctx, key, es); err != nil {
		t.Fatalf("backend: get ExternalSecret %s: %v", key, err)
	}
	data := map[string][]byte{}
	missing := false
	for _, d := range es.Spec.Data {
		v, ok := b.get(d.RemoteRef.Key + "/" + d.RemoteRef.Property)
		if !ok {
			missing = true
			continue
		}
		data[d.SecretKey] = []byte(v)
	}
	policy := es.Spec.Target.DeletionPolicy
	switch {
	case missing && (policy == "" || policy == esov1.DeletionPolicyRetain):
		if _, err := testenv.MarkExternalSecretNotSynced(ctx, env.Client, key, esov1.ConditionReasonSecretSyncedError); err != nil {
			t.Fatal(err)
		}
	case len(data) == 0 && policy == esov1.DeletionPolicyDelete:
		target := es.Spec.Target.Name
		if target == "" {
			target = es.Name
		}
		if err := env.Client.Delete(ctx, secretObject(client.ObjectKey{Namespace: key.Namespace, Name: target})); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		setESStatus(t, key, corev1.ConditionTrue, esov1.ConditionReasonSecretDeleted, 0, time.Now())
	default:
		if _, err := testenv.MarkExternalSecretSynced(ctx, env.Client, key, data); err != nil {
			t.Fatal(err)
		}
		// ESO writes syncedResourceVersion as "<generation>-<hash of labels and
		// annotations>" (ctrlutil.GetResourceVersion); the simulator writes the
		// generation alone. Write ESO's form so the SDK is tested against it.
		setESStatus(t, key, corev1.ConditionTrue, esov1.ConditionReasonSecretSynced, 0, time.Now())
	}
}

// setESStatus writes the Ready condition of the ExternalSecret at key as ESO does, with
// syncedResourceVersion "<generation>-<hash>" where generation is the object's own
// plus genOffset (a negative offset makes the status older than the spec), and
// refreshTime at refreshed (truncated to seconds by the API).
func setESStatus(t testing.TB, key client.ObjectKey, status corev1.ConditionStatus, reason string, genOffset int64, refreshed time.Time) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		es := &esov1.ExternalSecret{}
		if err := env.Client.Get(context.Background(), key, es); err != nil {
			return err
		}
		es.Status.Conditions = []esov1.ExternalSecretStatusCondition{{
			Type: esov1.ExternalSecretReady, Status: status, Reason: reason,
			Message: "set by the test", LastTransitionTime: metav1.Now(),
		}}
		if status == corev1.ConditionTrue {
			es.Status.RefreshTime = metav1.NewTime(refreshed)
			es.Status.SyncedResourceVersion = fmt.Sprintf("%d-%s", es.Generation+genOffset,
				"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4")
		}
		return env.Client.Status().Update(context.Background(), es)
	})
	if err != nil {
		t.Fatalf("set ExternalSecret %s status: %v", key, err)
	}
}
