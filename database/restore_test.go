package database_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/credential"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// secretStoreRestorer is the Restore of the package documentation ("Generated
// passwords"): the backup is the Secret restoreKey that an ExternalSecret syncs from
// the secret store, judged by secrets.CheckRestore.
func secretStoreRestorer(restoreKey client.ObjectKey) credential.Restorer {
	return credential.RestorerFunc(func(ctx context.Context, c client.Client, _ client.ObjectKey, dataKey string) (credential.Backup, error) {
		check, err := secrets.CheckRestore(ctx, c, restoreKey)
		switch {
		case err != nil:
			return credential.Backup{}, err
		case check.Secret != nil && len(check.Secret.Data[dataKey]) > 0:
			return credential.Backup{Value: check.Secret.Data[dataKey], From: "Secret " + restoreKey.String()}, nil
		case check.Pending != nil:
			return credential.Backup{Pending: "ExternalSecret " + check.Pending.String() + " " + check.Why}, nil
		}
		return credential.Backup{}, nil // the backend holds nothing: generate
	})
}

// TestReconcileProvisionRestoresFromSecretStore composes ReconcileProvision with the
// secrets package as a reconciler does: while the restore ExternalSecret has not
// answered, no password is generated; once it reports the backend empty, the first
// password is generated; once the backend holds it (the ExternalSecret synced it into
// the restore copy), a deleted password Secret comes back with the same password.
func TestReconcileProvisionRestoresFromSecretStore(t *testing.T) {
	ctx := context.Background()
	w := newReportWorld(t)
	restoreKey := objectKey(w.ns, passwordSecret+"-restore")
	es := &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: restoreKey.Name, Namespace: w.ns},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: esov1.SecretStoreRef{Kind: "ClusterSecretStore", Name: "openbao-cluster-store"},
			Target:         esov1.ExternalSecretTarget{Name: restoreKey.Name, DeletionPolicy: esov1.DeletionPolicyDelete},
			DataFrom:       []esov1.ExternalSecretDataFromRemoteRef{{Extract: &esov1.ExternalSecretDataRemoteRef{Key: "identity/db"}}},
		},
	}
	if err := env.Client.Create(ctx, es); err != nil {
		t.Fatal(err)
	}
	restore := func(p *database.ProvisionParams) { p.Restore = secretStoreRestorer(restoreKey) }

	w.pass(t, restore) // applies the Database
	need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(w.ns, "identity")))
	if cond := w.pass(t, restore); cond.Reason != database.ReasonPasswordRestorePending {
		t.Fatalf("before the ExternalSecret answered: %s: %s, want %s", cond.Reason, cond.Message, database.ReasonPasswordRestorePending)
	}

	need(t)(simulate.MarkExternalSecretEmpty(ctx, env.Client, client.ObjectKeyFromObject(es)))
	w.converge(t, restore)
	password := getSecret(t, w.ns).Data["password"]

	// The PushSecret pushed it; the ExternalSecret syncs it back into the restore copy.
	need(t)(simulate.MarkExternalSecretSynced(ctx, env.Client, client.ObjectKeyFromObject(es), map[string][]byte{"password": password}))
	w.deleteSecret(t)
	if cond := w.pass(t, restore); cond.Reason != database.ReasonDatabaseProvisioned {
		t.Fatalf("after the deletion: %s: %s, want provisioned", cond.Reason, cond.Message)
	}
	if got := getSecret(t, w.ns).Data["password"]; string(got) != string(password) {
		t.Errorf("the password changed: it was not restored from the secret store")
	}
	evs := w.events.all()
	if len(evs) != 2 || evs[0].Reason != credential.ReasonGenerated || evs[1].Reason != credential.ReasonRestored ||
		evs[1].Type != corev1.EventTypeNormal {
		t.Errorf("events = %+v, want Generated, then Restored", evs)
	}
	w.noPassword(t, string(password))
}
