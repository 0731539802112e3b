package secrets_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// syncValue is the value the backend holds for the Sync tests; no condition message or
// error may carry it.
const syncValue = "Sync0Value0Nobody0May0Read0123"

// syncWorld is one namespace with an owner, a Ready SecretStore and a backend holding
// syncValue at app/session, property key.
type syncWorld struct {
	ns     string
	owner  *corev1.ConfigMap
	bao    *backend
	key    client.ObjectKey
	params secrets.SyncParams
}

func newSyncWorld(t *testing.T) *syncWorld {
	t.Helper()
	ns := env.Namespace(t)
	createStore(t, ns, "tenant-bao", true)
	w := &syncWorld{ns: ns, owner: newOwner(t, ns), bao: newBackend(), key: client.ObjectKey{Namespace: ns, Name: "app-session"}}
	w.bao.hold("app/session/key", syncValue)
	w.params = secrets.SyncParams{
		ConditionType: condSecretsReady,
		StoreRef:      &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
		Name:          w.key.Name,
		Data:          []esov1.ExternalSecretData{{SecretKey: "session-key", RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "app/session", Property: "key"}}},
		Labels:        map[string]string{"app.kubernetes.io/instance": "app"},
	}
	return w
}

// sync runs one Sync pass through c.
func (w *syncWorld) sync(ctx context.Context, c client.Client) (secrets.Synced, error) {
	return secrets.Sync(ctx, c, env.Scheme, w.owner, w.params)
}

// eso runs ESO once over the world's ExternalSecret, when it exists.
func (w *syncWorld) eso(t testing.TB) {
	t.Helper()
	err := env.Client.Get(context.Background(), w.key, &esov1.ExternalSecret{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		t.Fatal(err)
	default:
		w.bao.sync(t, w.key)
	}
}

// synced runs a pass and ESO once: afterwards the Secret holds what the backend has.
func (w *syncWorld) synced(t *testing.T) {
	t.Helper()
	if _, err := w.sync(context.Background(), env.Client); err != nil {
		t.Fatal(err)
	}
	w.eso(t)
}

// expectNoValue fails the test when a text carries syncValue, raw or base64-encoded.
func expectNoValue(t testing.TB, what, text string) {
	t.Helper()
	for _, v := range []string{syncValue, base64.StdEncoding.EncodeToString([]byte(syncValue))} {
		if strings.Contains(text, v) {
			t.Errorf("%s carries the secret value", what)
		}
	}
}

func TestSync(t *testing.T) {
	ctx := context.Background()
	falseCond := func(reason, msg string) metav1.Condition {
		return reconcile.FalseCondition(condSecretsReady, reason, msg)
	}
	waiting := func(msg string) secrets.Synced {
		return secrets.Synced{Outcome: reconcile.Requeue(falseCond(secrets.ReasonWaitingForSecret, msg), secrets.PollInterval)}
	}
	failed := func(err error) secrets.Synced {
		if err == nil {
			return secrets.Synced{}
		}
		return secrets.Synced{Outcome: reconcile.Done(falseCond(secrets.ReasonSecretsError, err.Error()))}
	}
	ready := func(w *syncWorld) secrets.Synced {
		return secrets.Synced{
			Outcome: reconcile.Done(reconcile.TrueCondition(condSecretsReady, secrets.ReasonSecretsAvailable,
				fmt.Sprintf("remote key \"app/session\" synced into Secret %s", w.key))),
			Values: map[string]string{"session-key": syncValue},
			Digest: secrets.Digest(syncValue),
		}
	}
	cases := map[string]struct {
		reason string
		// setup runs before the pass under test, with the world's default params.
		setup func(t *testing.T, w *syncWorld)
		// params changes the params of the pass under test.
		params func(p *secrets.SyncParams)
		// scheme replaces env.Scheme; owner, when set, replaces the world's owner.
		nilScheme, nilOwner bool
		want                func(w *syncWorld, err error) secrets.Synced
		wantErr             error
		// wantExternalSecret: the owner's ExternalSecret exists afterwards.
		wantExternalSecret bool
		// wantNoCall: the pass sends no request.
		wantNoCall bool
		// ignoreDigest: compare Synced.Digest only for its form (digestAll's own test
		// pins its value).
		ignoreDigest bool
	}{
		"StoreNotReady": {
			reason: "A missing store stops the flow before the ExternalSecret is applied.",
			params: func(p *secrets.SyncParams) {
				p.StoreRef = &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "absent"}
			},
			want: func(*syncWorld, error) secrets.Synced {
				return secrets.Synced{Outcome: reconcile.Requeue(falseCond(secrets.ReasonSecretStoreNotReady,
					`SecretStore "absent" is not ready; upstream secret backend unreachable`), secrets.PollInterval)}
			},
		},
		"ClusterSecretStoreUnsupported": {
			reason: "A namespace-scoped operator refuses the shared ClusterSecretStore without a call.",
			params: func(p *secrets.SyncParams) { p.StoreRef, p.NamespaceScoped = nil, true },
			want: func(w *syncWorld, _ error) secrets.Synced {
				return secrets.Synced{Outcome: reconcile.Requeue(falseCond(secrets.ReasonClusterSecretStoreUnsupported,
					fmt.Sprintf(secrets.MessageClusterSecretStoreUnsupported, secrets.OpenBaoClusterStoreName, w.ns)), secrets.PollInterval)}
			},
			wantNoCall: true,
		},
		"WaitingForESO": {
			reason: "The ExternalSecret is applied; until ESO syncs it the flow waits, naming it and the remote key.",
			want: func(w *syncWorld, _ error) secrets.Synced {
				return waiting(fmt.Sprintf(`waiting for ExternalSecret %s to sync remote key "app/session"; it has not synced yet`, w.key))
			},
			wantExternalSecret: true,
		},
		"WaitingWithTheCallersReason": {
			reason: "The operator owns the waiting reason.",
			params: func(p *secrets.SyncParams) { p.WaitingReason = "WaitingForSessionKey" },
			want: func(w *syncWorld, _ error) secrets.Synced {
				return secrets.Synced{Outcome: reconcile.Requeue(falseCond("WaitingForSessionKey",
					fmt.Sprintf(`waiting for ExternalSecret %s to sync remote key "app/session"; it has not synced yet`, w.key)),
					secrets.PollInterval)}
			},
			wantExternalSecret: true,
		},
		"WaitingAfterAFailedFetch": {
			reason: "ESO could not read the remote key: the flow waits and says what ESO reported.",
			setup: func(t *testing.T, w *syncWorld) {
				w.bao = newBackend() // holds nothing
				w.synced(t)
			},
			want: func(w *syncWorld, _ error) secrets.Synced {
				return waiting(fmt.Sprintf(`waiting for ExternalSecret %s to sync remote key "app/session"; it is Ready=False (reason SecretSyncedError)`, w.key))
			},
			wantExternalSecret: true,
		},
		"WaitingAfterASpecChange": {
			reason: "A sync of an older spec does not count.",
			setup:  func(t *testing.T, w *syncWorld) { w.synced(t) },
			params: func(p *secrets.SyncParams) { p.RefreshInterval = &metav1.Duration{Duration: time.Minute} },
			want: func(w *syncWorld, _ error) secrets.Synced {
				return waiting(fmt.Sprintf(`waiting for ExternalSecret %s to sync remote key "app/session"; it is Ready=True for generation 1, not for the current generation 2`, w.key))
			},
			wantExternalSecret: true,
		},
		"Ready": {
			reason: "Once ESO synced, the values are read and digested.",
			setup:  func(t *testing.T, w *syncWorld) { w.synced(t) },
			want:   func(w *syncWorld, _ error) secrets.Synced { return ready(w) },

			wantExternalSecret: true,
		},
		"ReadySeveralKeys": {
			reason: "Several entries are read from the one Secret; the message names every remote key.",
			setup: func(t *testing.T, w *syncWorld) {
				w.bao.hold("app/db/password", "Second0Value0Nobody0May0Read")
				w.params.Data = append(w.params.Data, esov1.ExternalSecretData{SecretKey: "db-password",
					RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "app/db", Property: "password"}})
				w.synced(t)
			},
			want: func(w *syncWorld, _ error) secrets.Synced {
				return secrets.Synced{
					Outcome: reconcile.Done(reconcile.TrueCondition(condSecretsReady, secrets.ReasonSecretsAvailable,
						fmt.Sprintf(`remote keys "app/session", "app/db" synced into Secret %s`, w.key))),
					Values: map[string]string{"session-key": syncValue, "db-password": "Second0Value0Nobody0May0Read"},
				}
			},
			wantExternalSecret: true, ignoreDigest: true,
		},
		"ReadyWithTheCallersWording": {
			reason: "The operator owns the ready reason and message.",
			setup:  func(t *testing.T, w *syncWorld) { w.synced(t) },
			params: func(p *secrets.SyncParams) {
				p.ReadyReason, p.ReadyMessage = "SessionKeyAvailable", "session key synced"
			},
			want: func(w *syncWorld, _ error) secrets.Synced {
				out := ready(w)
				out.Condition = reconcile.TrueCondition(condSecretsReady, "SessionKeyAvailable", "session key synced")
				return out
			},
			wantExternalSecret: true,
		},
		"SecretLacksTheKey": {
			reason: "A synced Secret without the key (or with it empty) is waited for.",
			setup: func(t *testing.T, w *syncWorld) {
				w.synced(t)
				s := &corev1.Secret{}
				if err := env.Client.Get(context.Background(), w.key, s); err != nil {
					t.Fatal(err)
				}
				s.Data = map[string][]byte{"session-key": {}}
				if err := env.Client.Update(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			},
			want: func(w *syncWorld, _ error) secrets.Synced {
				return waiting(fmt.Sprintf(`Secret %s holds no "session-key" yet`, w.key))
			},
			wantExternalSecret: true,
		},
		"SecretGone": {
			reason: "A synced Secret that was deleted is waited for until ESO writes it again.",
			setup: func(t *testing.T, w *syncWorld) {
				w.synced(t)
				if err := env.Client.Delete(context.Background(), secretObject(w.key)); err != nil {
					t.Fatal(err)
				}
			},
			want: func(w *syncWorld, _ error) secrets.Synced {
				return waiting(fmt.Sprintf("Secret %s does not exist yet", w.key))
			},
			wantExternalSecret: true,
		},
		"UnownedExternalSecret": {
			reason: "An ExternalSecret of that name made by someone else (kubectl, Helm) is refused, not taken over.",
			setup: func(t *testing.T, w *syncWorld) {
				if err := env.Client.Create(context.Background(), desiredExternalSecret(w.ns, w.key.Name, w.key.Name, secrets.EffectiveStoreRef(nil))); err != nil {
					t.Fatal(err)
				}
			},
			want:    func(_ *syncWorld, err error) secrets.Synced { return failed(err) },
			wantErr: apply.ErrNotControlled,
		},
		"ExternalSecretOfAnotherOwner": {
			reason: "An ExternalSecret controlled by another object is refused.",
			setup: func(t *testing.T, w *syncWorld) {
				other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: w.ns}}
				if err := env.Client.Create(context.Background(), other); err != nil {
					t.Fatal(err)
				}
				es := desiredExternalSecret(w.ns, w.key.Name, w.key.Name, secrets.EffectiveStoreRef(nil))
				if err := controllerutil.SetControllerReference(other, es, env.Scheme); err != nil {
					t.Fatal(err)
				}
				if err := env.Client.Create(context.Background(), es); err != nil {
					t.Fatal(err)
				}
			},
			want:    func(_ *syncWorld, err error) secrets.Synced { return failed(err) },
			wantErr: apply.ErrNotControlled,
		},
		"ExternalSecretBeingDeleted": {
			reason: "The owner's ExternalSecret on its way out is not applied to.",
			setup: func(t *testing.T, w *syncWorld) {
				ctx := context.Background()
				es := desiredExternalSecret(w.ns, w.key.Name, w.key.Name, secrets.EffectiveStoreRef(nil))
				es.Finalizers = []string{"test.c5c3.io/hold"}
				if err := controllerutil.SetControllerReference(w.owner, es, env.Scheme); err != nil {
					t.Fatal(err)
				}
				if err := env.Client.Create(ctx, es); err != nil {
					t.Fatal(err)
				}
				if err := env.Client.Delete(ctx, es); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					es.Finalizers = nil
					_ = env.Client.Update(context.Background(), es)
				})
			},
			want:               func(_ *syncWorld, err error) secrets.Synced { return failed(err) },
			wantErr:            apply.ErrBeingDeleted,
			wantExternalSecret: true,
		},
		"NoConditionType": {
			reason: "Params Sync cannot run with are refused before any call, with no condition to set.",
			params: func(p *secrets.SyncParams) { p.ConditionType = "" },
			want:   func(*syncWorld, error) secrets.Synced { return secrets.Synced{} },

			wantErr: secrets.ErrInvalidSyncParams, wantNoCall: true,
		},
		"NoData": {
			reason: "Params without data are refused before any call, on the condition too.",
			params: func(p *secrets.SyncParams) { p.Data = nil },
			want:   func(_ *syncWorld, err error) secrets.Synced { return failed(err) },

			wantErr: secrets.ErrInvalidSyncParams, wantNoCall: true,
		},
		"RepeatedSecretKey": {
			reason: "Two entries writing one key are refused.",
			params: func(p *secrets.SyncParams) { p.Data = append(p.Data, p.Data[0]) },
			want:   func(_ *syncWorld, err error) secrets.Synced { return failed(err) },

			wantErr: secrets.ErrInvalidSyncParams, wantNoCall: true,
		},
		"NilOwner": {
			reason:   "A nil owner is refused before any call.",
			nilOwner: true,
			want:     func(_ *syncWorld, err error) secrets.Synced { return failed(err) },
			wantErr:  secrets.ErrInvalidSyncParams, wantNoCall: true,
		},
		"NilScheme": {
			reason:    "A nil scheme is an error, not a panic.",
			nilScheme: true,
			want:      func(_ *syncWorld, err error) secrets.Synced { return failed(err) },
			wantErr:   apply.ErrNilScheme, wantNoCall: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newSyncWorld(t)
			if tc.setup != nil {
				tc.setup(t, w)
			}
			if tc.params != nil {
				tc.params(&w.params)
			}
			scheme := env.Scheme
			if tc.nilScheme {
				scheme = nil
			}
			var owner client.Object = w.owner
			if tc.nilOwner {
				owner = nil
			}
			inj := faults.NewInjector()
			got, err := secrets.Sync(ctx, inj.Client(env.Client), scheme, owner, w.params)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("%s\nerror = %v, want %v", tc.reason, err, tc.wantErr)
			}
			var opts []cmp.Option
			if tc.ignoreDigest {
				opts = append(opts, cmpopts.IgnoreFields(secrets.Synced{}, "Digest"))
				if len(got.Digest) != 16 || got.Digest == secrets.Digest(syncValue) {
					t.Errorf("%s\nDigest = %q, want 16 hex digits of all the values", tc.reason, got.Digest)
				}
			}
			if diff := cmp.Diff(tc.want(w, err), got, opts...); diff != "" {
				t.Errorf("%s\nSync (-want +got):\n%s", tc.reason, diff)
			}
			expectNoValue(t, "the condition message", got.Condition.Message)
			if err != nil {
				expectNoValue(t, "the error", err.Error())
			}
			if tc.wantNoCall {
				for _, v := range faults.Verbs() {
					if n := inj.Calls(v); n != 0 {
						t.Errorf("%s\n%d %s calls, want none", tc.reason, n, v)
					}
				}
			}
			es := &esov1.ExternalSecret{}
			switch err := env.Client.Get(ctx, w.key, es); {
			case apierrors.IsNotFound(err):
				if tc.wantExternalSecret {
					t.Errorf("%s\nno ExternalSecret", tc.reason)
				}
			case err != nil:
				t.Fatal(err)
			case !tc.wantExternalSecret && tc.wantErr == nil:
				t.Errorf("%s\nan ExternalSecret was applied", tc.reason)
			}
		})
	}
}

// TestSyncExternalSecret pins the ExternalSecret Sync applies and the Secret ESO writes
// from it: owned by the CR, the caller's labels on both, and the managed-by label of
// the client's field manager on the Secret (else a label-filtered cache misses it).
func TestSyncExternalSecret(t *testing.T) {
	ctx := context.Background()
	cases := map[string]struct {
		reason      string
		c           func(w *syncWorld) client.Client
		wantManager string
	}{
		"PlainClient": {
			reason:      "A plain client writes under the SDK's default field manager.",
			c:           func(*syncWorld) client.Client { return env.Client },
			wantManager: apply.FieldManager,
		},
		"Applier": {
			reason: "An Applier writes under the operator's field manager, and labels the Secret with it.",
			c: func(*syncWorld) client.Client {
				return apply.NewApplier(env.Client, apply.ApplierOptions{FieldManager: operatorName})
			},
			wantManager: operatorName,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newSyncWorld(t)
			w.params.Labels["app.kubernetes.io/managed-by"] = "someone-else" // the flow's label wins
			w.params.RefreshInterval = &metav1.Duration{Duration: 5 * time.Minute}
			c := tc.c(w)
			if _, err := w.sync(ctx, c); err != nil {
				t.Fatal(err)
			}
			w.eso(t)
			got, err := w.sync(ctx, c)
			if err != nil || got.Condition.Status != metav1.ConditionTrue {
				t.Fatalf("%s\nsecond pass = %+v, %v", tc.reason, got.Outcome, err)
			}
			es := &esov1.ExternalSecret{}
			if err := env.Client.Get(ctx, w.key, es); err != nil {
				t.Fatal(err)
			}
			if !metav1.IsControlledBy(es, w.owner) {
				t.Errorf("%s\nthe ExternalSecret is not controlled by the owner", tc.reason)
			}
			wantSpec := esov1.ExternalSecretSpec{
				SecretStoreRef:  esov1.SecretStoreRef{Kind: "SecretStore", Name: "tenant-bao"},
				RefreshInterval: &metav1.Duration{Duration: 5 * time.Minute},
				Target: esov1.ExternalSecretTarget{Name: w.key.Name, Template: &esov1.ExternalSecretTemplate{
					Metadata: esov1.ExternalSecretTemplateMetadata{Labels: map[string]string{
						"app.kubernetes.io/instance": "app", apply.ManagedByLabel: tc.wantManager}}}},
				Data: w.params.Data,
			}
			// The server's defaults are ESO's, not the flow's.
			ignore := cmpopts.IgnoreFields(esov1.ExternalSecretTarget{}, "CreationPolicy", "DeletionPolicy")
			ignoreTmpl := cmpopts.IgnoreFields(esov1.ExternalSecretTemplate{}, "EngineVersion", "MergePolicy")
			if diff := cmp.Diff(wantSpec, es.Spec, ignore, ignoreTmpl, cmpopts.IgnoreFields(esov1.ExternalSecretSpec{}, "DataFrom")); diff != "" {
				t.Errorf("%s\nExternalSecret spec (-want +got):\n%s", tc.reason, diff)
			}
			if es.Labels["app.kubernetes.io/instance"] != "app" {
				t.Errorf("%s\nExternalSecret labels = %v", tc.reason, es.Labels)
			}
			s := &corev1.Secret{}
			if err := env.Client.Get(ctx, w.key, s); err != nil {
				t.Fatal(err)
			}
			if s.Labels[apply.ManagedByLabel] != tc.wantManager || s.Labels["app.kubernetes.io/instance"] != "app" {
				t.Errorf("%s\nsynced Secret labels = %v, want %s=%s and the caller's", tc.reason, s.Labels, apply.ManagedByLabel, tc.wantManager)
			}
		})
	}
}

// TestSyncThroughApplierReadsTheSecretFromTheCache: with apply.CacheOptions and an
// Applier, a converged Sync sends no request at all, because the synced Secret carries
// the managed-by label; a Secret without it costs one GET per pass.
func TestSyncThroughApplierReadsTheSecretFromTheCache(t *testing.T) {
	w := newSyncWorld(t)
	cacheOpts := apply.CacheOptions(operatorName)
	cacheOpts.DefaultNamespaces = map[string]cache.Config{w.ns: {}}
	mgr, counter := env.StartManager(t, ctrl.Options{Cache: cacheOpts})
	a := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: operatorName, APIReader: mgr.GetAPIReader()})

	pass := func(ctx context.Context) error {
		got, err := w.sync(ctx, a)
		if err != nil {
			return err
		}
		if got.Condition.Status != metav1.ConditionTrue || got.Values["session-key"] != syncValue {
			return fmt.Errorf("not ready: %s", got.Condition.Message)
		}
		return nil
	}
	if _, err := w.sync(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	w.eso(t)
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) { return pass(ctx) == nil, nil }); err != nil {
		t.Fatalf("Sync never turned True: %v", pass(context.Background()))
	}
	testenv.ExpectQuiet(t, counter, 0, pass)

	unlabelled := client.ObjectKey{Namespace: w.ns, Name: "user-db"}
	if err := env.Client.Create(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: unlabelled.Name},
		Data: map[string][]byte{"password": []byte(syncValue)}}); err != nil {
		t.Fatal(err)
	}
	testenv.ExpectQuiet(t, counter, 1, func(ctx context.Context) error {
		_, err := secrets.GetSecretValue(ctx, a, unlabelled, "password")
		return err
	})
}

// TestFaultMatrixSync fails every call of the flow once, with every fault: the pass
// reports it (the error on the SecretsError condition, never a value), and the next
// passes converge to the fault-free outcome.
func TestFaultMatrixSync(t *testing.T) {
	faults.Matrix{Setup: func(t *testing.T) faults.Scenario {
		w := newSyncWorld(t)
		var last secrets.Synced
		return faults.Scenario{
			Client: env.Client,
			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
				got, err := w.sync(ctx, c)
				last = got
				expectNoValue(t, "the condition message", got.Condition.Message)
				if err != nil {
					expectNoValue(t, "the error", err.Error())
					if got.Condition.Reason != secrets.ReasonSecretsError || got.Condition.Message != err.Error() {
						t.Errorf("failed pass set %+v, want SecretsError with the error's text", got.Condition)
					}
				}
				w.eso(t)
				return got.Result, err // the matrix fails a result returned with an error
			},
			Check: func(t *testing.T) {
				if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(w.owner), &corev1.ConfigMap{}); err != nil {
					t.Errorf("owner: %v", err)
				}
			},
			State: func(t *testing.T) any {
				es := &esov1.ExternalSecret{}
				if err := env.Client.Get(context.Background(), w.key, es); err != nil {
					t.Fatal(err)
				}
				cond := last.Condition
				cond.Message = strings.ReplaceAll(cond.Message, w.ns, "NS")
				return []any{cond, last.Values, last.Digest, es.Spec, metav1.IsControlledBy(es, w.owner)}
			},
		}
	}}.RunWritesAndReads(t)
}
