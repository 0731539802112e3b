package secrets_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

const condSecretsReady = "SecretsReady"

// TestGateStoreReady has one row per outcome of the gate, every reason of the
// specification's table among them.
func TestGateStoreReady(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	readyCluster, deadCluster := clusterName("gate-ready"), clusterName("gate-dead")
	createClusterStore(t, readyCluster, true)
	createClusterStore(t, deadCluster, false)
	if _, err := simulate.MarkClusterSecretStoreNotReady(ctx, env.Client, deadCluster, esov1.ReasonValidationFailed); err != nil {
		t.Fatal(err)
	}
	createStore(t, ns, "tenant-bao", true)
	createStore(t, ns, "tenant-down", false)
	missingCluster := clusterName("gate-missing")

	cases := map[string]struct {
		ref             commonv1.SecretStoreRefSpec
		namespaceScoped bool
		want            bool
		wantCond        *metav1.Condition // nil: the gate leaves conds alone
		wantRequests    int               // -1: any
	}{
		"ready ClusterSecretStore passes": {
			ref: commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: readyCluster}, want: true, wantRequests: 1,
		},
		"ready SecretStore passes": {
			ref: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"}, want: true, wantRequests: 1,
		},
		"ready SecretStore passes in namespace-scoped mode": {
			ref: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"}, namespaceScoped: true, want: true, wantRequests: 1,
		},
		"SecretStoreNotReady: ClusterSecretStore Ready=False": {
			ref: commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: deadCluster},
			wantCond: &metav1.Condition{Reason: "SecretStoreNotReady",
				Message: fmt.Sprintf("ClusterSecretStore %q is not ready; upstream secret backend unreachable", deadCluster)},
			wantRequests: 1,
		},
		"SecretStoreNotReady: ClusterSecretStore missing": {
			ref: commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: missingCluster},
			wantCond: &metav1.Condition{Reason: "SecretStoreNotReady",
				Message: fmt.Sprintf("ClusterSecretStore %q is not ready; upstream secret backend unreachable", missingCluster)},
			wantRequests: 1,
		},
		"SecretStoreNotReady: SecretStore without status": {
			ref: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-down"},
			wantCond: &metav1.Condition{Reason: "SecretStoreNotReady",
				Message: `SecretStore "tenant-down" is not ready; upstream secret backend unreachable`},
			wantRequests: 1,
		},
		"SecretStoreNotReady: SecretStore missing": {
			ref: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "absent"},
			wantCond: &metav1.Condition{Reason: "SecretStoreNotReady",
				Message: `SecretStore "absent" is not ready; upstream secret backend unreachable`},
			wantRequests: 1,
		},
		"SecretStoreNotReady: unresolved empty ref gates on the shared store": {
			ref: commonv1.SecretStoreRefSpec{},
			wantCond: &metav1.Condition{Reason: "SecretStoreNotReady",
				Message: `ClusterSecretStore "openbao-cluster-store" is not ready; upstream secret backend unreachable`},
			wantRequests: 1,
		},
		"ClusterSecretStoreUnsupported: namespace-scoped operator, ready cluster store": {
			ref: commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: readyCluster}, namespaceScoped: true,
			wantCond: &metav1.Condition{Reason: "ClusterSecretStoreUnsupported",
				Message: fmt.Sprintf("ClusterSecretStore %q cannot be read by a namespace-scoped operator; set spec.secretStoreRef to a SecretStore in namespace %q", readyCluster, ns)},
			wantRequests: 0,
		},
		"ClusterSecretStoreUnsupported: namespace-scoped operator, default ref": {
			ref: secrets.EffectiveStoreRef(nil), namespaceScoped: true,
			wantCond: &metav1.Condition{Reason: "ClusterSecretStoreUnsupported",
				Message: fmt.Sprintf("ClusterSecretStore \"openbao-cluster-store\" cannot be read by a namespace-scoped operator; set spec.secretStoreRef to a SecretStore in namespace %q", ns)},
			wantRequests: 0,
		},
		"ClusterSecretStoreUnsupported: namespace-scoped operator, empty kind": {
			ref: commonv1.SecretStoreRefSpec{Name: readyCluster}, namespaceScoped: true,
			// An empty kind resolves to the shared cluster store (EffectiveStoreRef).
			wantCond: &metav1.Condition{Reason: "ClusterSecretStoreUnsupported",
				Message: fmt.Sprintf("ClusterSecretStore %q cannot be read by a namespace-scoped operator; set spec.secretStoreRef to a SecretStore in namespace %q", secrets.OpenBaoClusterStoreName, ns)},
			wantRequests: 0,
		},
	}
	// One counting client, warmed up: its REST mapper's discovery requests for the two
	// store kinds are not part of what a steady-state gate costs.
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.IsClusterSecretStoreReady(ctx, c, readyCluster); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.IsSecretStoreReady(ctx, c, "tenant-bao", ns); err != nil {
		t.Fatal(err)
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			counter.Reset()
			other := metav1.Condition{Type: "DatabaseReady", Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()}
			conds := []metav1.Condition{other}
			got, err := secrets.GateStoreReady(ctx, c, tc.ref, ns, tc.namespaceScoped, &conds, 7, condSecretsReady)
			if err != nil {
				t.Fatalf("GateStoreReady: %v", err)
			}
			if got != tc.want {
				t.Errorf("ready = %v, want %v", got, tc.want)
			}
			if tc.wantRequests >= 0 && counter.Total() != tc.wantRequests {
				t.Errorf("%d API requests (GET %d), want %d", counter.Total(), counter.Method("GET"), tc.wantRequests)
			}
			if counter.Writes() != 0 {
				t.Errorf("%d writes, want 0", counter.Writes())
			}
			if diff := cmp.Diff(other, conds[0]); diff != "" {
				t.Errorf("unrelated condition changed (-want +got):\n%s", diff)
			}
			cond := meta.FindStatusCondition(conds, condSecretsReady)
			if tc.wantCond == nil {
				if cond != nil {
					t.Errorf("gate set %+v on a ready store, want conds untouched", cond)
				}
				return
			}
			want := *tc.wantCond
			want.Type, want.Status, want.ObservedGeneration = condSecretsReady, metav1.ConditionFalse, 7
			if diff := cmp.Diff(want, *cond, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
			if cond.LastTransitionTime.IsZero() {
				t.Error("lastTransitionTime not set")
			}
		})
	}
}

// TestGateStoreReadyConditionLifecycle follows one CR through an outage: the condition
// keeps its lastTransitionTime while the store stays down, follows the generation, and
// the refusal clears when the ref moves to a SecretStore.
func TestGateStoreReadyConditionLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	name := clusterName("lifecycle")
	createClusterStore(t, name, false)
	ref := commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: name}

	since := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	conds := []metav1.Condition{{Type: condSecretsReady, Status: metav1.ConditionTrue, Reason: "SecretsAvailable",
		ObservedGeneration: 1, LastTransitionTime: since}}

	if ok, err := secrets.GateStoreReady(ctx, env.Client, ref, ns, false, &conds, 1, condSecretsReady); ok || err != nil {
		t.Fatalf("store down: %v, %v", ok, err)
	}
	first := *meta.FindStatusCondition(conds, condSecretsReady)
	if first.Status != metav1.ConditionFalse || first.LastTransitionTime.Equal(&since) {
		t.Fatalf("True -> False must move lastTransitionTime: %+v", first)
	}

	if ok, err := secrets.GateStoreReady(ctx, env.Client, ref, ns, false, &conds, 2, condSecretsReady); ok || err != nil {
		t.Fatalf("store still down: %v, %v", ok, err)
	}
	second := *meta.FindStatusCondition(conds, condSecretsReady)
	if !second.LastTransitionTime.Equal(&first.LastTransitionTime) {
		t.Errorf("lastTransitionTime moved while status stayed False: %v -> %v", first.LastTransitionTime, second.LastTransitionTime)
	}
	if second.ObservedGeneration != 2 {
		t.Errorf("observedGeneration = %d, want 2", second.ObservedGeneration)
	}

	// ESO validates the store again: the gate passes.
	if _, err := simulate.MarkClusterSecretStoreReady(ctx, env.Client, name); err != nil {
		t.Fatal(err)
	}
	if ok, err := secrets.GateStoreReady(ctx, env.Client, ref, ns, false, &conds, 2, condSecretsReady); !ok || err != nil {
		t.Fatalf("store recovered: %v, %v", ok, err)
	}

	// Namespace-scoped: refused; once the CR selects a SecretStore the gate reads it.
	if ok, _ := secrets.GateStoreReady(ctx, env.Client, ref, ns, true, &conds, 3, condSecretsReady); ok {
		t.Fatal("namespace-scoped operator passed a ClusterSecretStore")
	}
	if got := meta.FindStatusCondition(conds, condSecretsReady).Reason; got != secrets.ReasonClusterSecretStoreUnsupported {
		t.Fatalf("reason = %s", got)
	}
	createStore(t, ns, "tenant-bao", true)
	local := commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"}
	if ok, err := secrets.GateStoreReady(ctx, env.Client, local, ns, true, &conds, 4, condSecretsReady); !ok || err != nil {
		t.Fatalf("SecretStore in namespace-scoped mode: %v, %v", ok, err)
	}
}

func TestGateStoreReadyErrors(t *testing.T) {
	ctx := context.Background()
	unavailable := apierrors.NewServiceUnavailable("etcd leader changed")
	failing := interceptor.NewClient(fakeBase(t), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return unavailable
		},
	})
	cases := map[string]struct {
		c       client.Client
		ref     commonv1.SecretStoreRefSpec
		conds   bool
		wantErr func(error) bool
	}{
		"API error is returned, conds untouched": {
			c: failing, ref: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"}, conds: true,
			wantErr: apierrors.IsServiceUnavailable,
		},
		"unknown kind": {
			c: failing, ref: commonv1.SecretStoreRefSpec{Kind: "VaultStore", Name: "x"}, conds: true,
			wantErr: func(err error) bool { return errors.Is(err, secrets.ErrUnknownStoreKind) },
		},
		"SecretStore without a name": {
			c: failing, ref: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind}, conds: true,
			wantErr: func(err error) bool { return errors.Is(err, secrets.ErrMissingStoreName) },
		},
		"nil conds": {
			c: failing, ref: secrets.EffectiveStoreRef(nil), conds: false,
			wantErr: func(err error) bool { return errors.Is(err, secrets.ErrNilConditions) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var condsPtr *[]metav1.Condition
			var conds []metav1.Condition
			if tc.conds {
				condsPtr = &conds
			}
			ok, err := secrets.GateStoreReady(ctx, tc.c, tc.ref, "tenant", false, condsPtr, 1, condSecretsReady)
			if ok || !tc.wantErr(err) {
				t.Fatalf("= %v, %v", ok, err)
			}
			if len(conds) != 0 {
				t.Errorf("conditions set on error: %+v", conds)
			}
		})
	}
}

// TestStoreGate has one row per answer of the gate in the Outcome shape.
func TestStoreGate(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	readyCluster := clusterName("storegate-ready")
	createClusterStore(t, readyCluster, true)
	createStore(t, ns, "tenant-bao", true)
	createStore(t, ns, "tenant-down", false)
	unavailable := interceptor.NewClient(fakeBase(t), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewServiceUnavailable("etcd leader changed")
		},
	})
	notReady := func(reason, msg string) reconcile.Outcome {
		return reconcile.Requeue(reconcile.FalseCondition(condSecretsReady, reason, msg), secrets.PollInterval)
	}
	cases := map[string]struct {
		reason          string
		c               client.Client
		obj             client.Object
		ref             commonv1.SecretStoreRefSpec
		namespaceScoped bool
		want            reconcile.Outcome
		wantErr         func(error) bool
	}{
		"ReadyClusterSecretStore": {
			reason: "A Ready store passes: zero Outcome, the condition is left alone.",
			ref:    commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: readyCluster},
		},
		"ReadySecretStoreNamespaceScoped": {
			reason: "A namespace-scoped operator reads a SecretStore of the CR's namespace.",
			ref:    commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"}, namespaceScoped: true,
		},
		"NotReadySecretStore": {
			reason: "A store without Ready=True stops the pass and polls.",
			ref:    commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-down"},
			want: notReady(secrets.ReasonSecretStoreNotReady,
				`SecretStore "tenant-down" is not ready; upstream secret backend unreachable`),
		},
		"MissingSharedStore": {
			reason: "An unset ref gates on the shared ClusterSecretStore.",
			ref:    commonv1.SecretStoreRefSpec{},
			want: notReady(secrets.ReasonSecretStoreNotReady,
				`ClusterSecretStore "openbao-cluster-store" is not ready; upstream secret backend unreachable`),
		},
		"ClusterSecretStoreUnsupported": {
			reason: "A namespace-scoped operator refuses a ClusterSecretStore, with the same message as GateStoreReady.",
			c:      unavailable, // refused before any call
			ref:    commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: readyCluster}, namespaceScoped: true,
			want: notReady(secrets.ReasonClusterSecretStoreUnsupported,
				fmt.Sprintf(secrets.MessageClusterSecretStoreUnsupported, readyCluster, ns)),
		},
		"APIError": {
			reason:  "A failed read is the error alone.",
			c:       unavailable,
			ref:     commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
			wantErr: apierrors.IsServiceUnavailable,
		},
		"UnknownKind": {
			reason:  "A kind other than the two store kinds is an error.",
			ref:     commonv1.SecretStoreRefSpec{Kind: "VaultStore", Name: "x"},
			wantErr: func(err error) bool { return errors.Is(err, secrets.ErrUnknownStoreKind) },
		},
		"NilObject": {
			reason:  "A nil object is an error, not a panic.",
			obj:     (*corev1.ConfigMap)(nil),
			ref:     commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
			wantErr: func(err error) bool { return errors.Is(err, secrets.ErrNilObject) },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.c
			if c == nil {
				c = env.Client
			}
			var obj client.Object = owner
			if tc.obj != nil {
				obj = tc.obj
			}
			got, err := secrets.StoreGate(ctx, c, obj, condSecretsReady, tc.ref, tc.namespaceScoped)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !tc.wantErr(err) {
				t.Fatalf("%s\nerror = %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nStoreGate (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
