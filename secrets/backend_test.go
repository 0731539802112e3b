package secrets_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// backend is the kit's simulate.SecretBackend over env.Client, which stands in for
// OpenBao behind External Secrets Operator v0.20 (envtest runs no ESO), with the calls
// these tests make: values are named "remoteKey/property", and a failed call fails the
// test.
type backend struct{ *simulate.SecretBackend }

func newBackend() *backend { return &backend{simulate.NewSecretBackend(env.Client)} }

// splitRef splits "remoteKey/property" at its last slash.
func splitRef(ref string) (remoteKey, property string) {
	i := strings.LastIndex(ref, "/")
	return ref[:i], ref[i+1:]
}

// get returns the value at ref.
func (b *backend) get(ref string) (string, bool) { return b.Property(splitRef(ref)) }

// hold stores value at ref, as a backup made before the test.
func (b *backend) hold(ref, value string) {
	remoteKey, property := splitRef(ref)
	held, _ := b.Get(remoteKey)
	data := map[string][]byte{property: []byte(value)}
	for k, v := range held {
		if k != property {
			data[k] = []byte(v)
		}
	}
	b.Set(remoteKey, data)
}

// push runs ESO's PushSecret reconcile for the PushSecret at key
// (simulate.SecretBackend.Push).
func (b *backend) push(t testing.TB, key client.ObjectKey) {
	t.Helper()
	if err := b.Push(context.Background(), key); err != nil {
		t.Fatal(err)
	}
}

// sync runs ESO's ExternalSecret reconcile for the ExternalSecret at key
// (simulate.SecretBackend.Sync): a value missing from the backend fails the sync under
// deletionPolicy Retain, deletes the target (Ready=True SecretDeleted) under Delete
// when no data is left, and is skipped under Merge.
func (b *backend) sync(t testing.TB, key client.ObjectKey) {
	t.Helper()
	if err := b.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
}

// setESStatus writes the Ready condition of the ExternalSecret at key as ESO does, with
// syncedResourceVersion "<generation>-<hash>" where generation is the object's own
// plus genOffset (a negative offset makes the status older than the object), and
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
