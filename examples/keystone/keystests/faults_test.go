package keystests

import (
	"context"
	"sync"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// stepState is what a converged first install leaves, without the generated keys.
type stepState struct {
	Indices   string
	Condition string
	Push      string
	CronArgs  []string
}

// TestKeysStepFaults fails each API call of a first install in turn (after ESO
// answered that the backend holds nothing) and of a restore (after ESO synced the
// backup) with each fault: every pass returns an error or a requeue, never both; the
// Secret, once it exists, always holds a valid repository and never changes (no second
// generation), a restored one holds the backup's keys; and the run converges to the
// same children as a run without faults.
func TestKeysStepFaults(t *testing.T) {
	for _, restore := range []bool{false, true} {
		name := "generate"
		if restore {
			name = "restore"
		}
		t.Run(name, func(t *testing.T) { keysStepFaults(t, restore) })
	}
}

func keysStepFaults(t *testing.T, restore bool) {
	faults.Matrix{
		Setup: func(t *testing.T) faults.Scenario {
			w := newWorld(t, fernet, nil)
			var backup map[string][]byte
			if restore {
				backup = newRepository(t, 3, 3).SecretData()
				w.bao.Set(w.step.RemoteKey(w.k), backup)
			}
			if res, err := w.pass(); err != nil || res.RequeueAfter == 0 {
				t.Fatalf("first pass = %v, %v", res, err)
			}
			w.bao.sync(t, w.restoreKey())
			var mu sync.Mutex
			var first map[string][]byte
			return faults.Scenario{
				Client: env.Client,
				Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
					return w.passWith(ctx, c)
				},
				Check: func(t *testing.T) {
					s, found := w.secret()
					if !found {
						return
					}
					if _, err := keys.FromSecretData(s.Data); err != nil {
						t.Fatalf("the Secret holds a broken repository: %v", err)
					}
					if backup != nil && !sameData(backup, s.Data) {
						t.Fatal("the Secret does not hold the backup's repository")
					}
					mu.Lock()
					defer mu.Unlock()
					if first == nil {
						first = s.Data
					} else if !sameData(first, s.Data) {
						t.Fatal("the repository was generated twice")
					}
				},
				State: func(t *testing.T) any {
					st := stepState{Indices: describeIndices(w.repo())}
					if c := meta.FindStatusCondition(w.k.Status.Conditions, w.step.Condition()); c != nil {
						st.Condition = string(c.Status) + "/" + c.Reason
					}
					ps := &esov1alpha1.PushSecret{}
					if err := env.Client.Get(context.Background(), w.pushKey(), ps); err != nil {
						t.Fatal(err)
					}
					st.Push = ps.Spec.Selector.Secret.Name + " -> " + ps.Spec.Data[0].Match.RemoteRef.RemoteKey[len("openstack/keystone/"+w.ns):]
					cj := &batchv1.CronJob{}
					if err := env.Client.Get(context.Background(), w.cronKey(), cj); err != nil {
						t.Fatal(err)
					}
					st.CronArgs = cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args[3:]
					return st
				},
			}
		},
	}.RunWritesAndReads(t)
}

// describeIndices names the indices and their roles.
func describeIndices(repo keys.Repository) string { return repo.String() }
