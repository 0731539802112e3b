package simulate_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// An ExternalSecret that finds nothing at its remote key under deletionPolicy Delete
// deletes its target and reports Ready with reason SecretDeleted for its current spec.
func TestMarkExternalSecretEmpty(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	newES := func(name string, policy esov1.ExternalSecretDeletionPolicy) client.ObjectKey {
		es := &esov1.ExternalSecret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: esov1.ExternalSecretSpec{
				SecretStoreRef: esov1.SecretStoreRef{Name: "openbao", Kind: "SecretStore"},
				Target:         esov1.ExternalSecretTarget{Name: name + "-copy", DeletionPolicy: policy},
				DataFrom: []esov1.ExternalSecretDataFromRemoteRef{{
					Extract: &esov1.ExternalSecretDataRemoteRef{Key: "backups/" + name}}},
			},
		}
		if err := env.Client.Create(ctx, es); err != nil {
			t.Fatal(err)
		}
		return client.ObjectKeyFromObject(es)
	}

	key := newES("restore", esov1.DeletionPolicyDelete)
	if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, key, map[string][]byte{"0": []byte("old")}); err != nil {
		t.Fatal(err)
	}
	es, err := simulate.MarkExternalSecretEmpty(ctx, env.Client, key)
	if err != nil {
		t.Fatal(err)
	}
	c := es.Status.Conditions[0]
	if c.Type != esov1.ExternalSecretReady || c.Status != corev1.ConditionTrue || c.Reason != esov1.ConditionReasonSecretDeleted ||
		!strings.HasPrefix(es.Status.SyncedResourceVersion, "1-") {
		t.Fatalf("status = %+v", es.Status)
	}
	err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "restore-copy"}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Fatalf("target Secret after an empty sync: %v, want NotFound", err)
	}
	// A second empty sync with no target left is the same answer.
	if _, err := simulate.MarkExternalSecretEmpty(ctx, env.Client, key); err != nil {
		t.Fatal(err)
	}

	// Under Retain ESO keeps the target and reports an error instead: refused.
	retain := newES("retained", esov1.DeletionPolicyRetain)
	if _, err := simulate.MarkExternalSecretEmpty(ctx, env.Client, retain); err == nil || !strings.Contains(err.Error(), "deletionPolicy") {
		t.Fatalf("MarkExternalSecretEmpty under Retain = %v, want a refusal naming deletionPolicy", err)
	}
}
