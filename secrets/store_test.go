package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

func TestEffectiveStoreRef(t *testing.T) {
	shared := commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: "openbao-cluster-store"}
	cases := map[string]struct {
		ref  *commonv1.SecretStoreRefSpec
		want commonv1.SecretStoreRefSpec
	}{
		"nil resolves to the shared cluster store":       {ref: nil, want: shared},
		"empty ref resolves to the shared cluster store": {ref: &commonv1.SecretStoreRefSpec{}, want: shared},
		"empty kind resolves to the shared cluster store, whatever the name": {
			ref: &commonv1.SecretStoreRefSpec{Name: "vault-eu"}, want: shared,
		},
		"cluster kind without a name names the shared store": {
			ref: &commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind}, want: shared,
		},
		"explicit cluster store": {
			ref:  &commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: "vault-eu"},
			want: commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: "vault-eu"},
		},
		"namespaced store": {
			ref:  &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
			want: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
		},
		"namespaced store without a name stays unnamed": {
			ref:  &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind},
			want: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind},
		},
		"unknown kind passes through for IsStoreRefReady to refuse": {
			ref:  &commonv1.SecretStoreRefSpec{Kind: "VaultStore", Name: "x"},
			want: commonv1.SecretStoreRefSpec{Kind: "VaultStore", Name: "x"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var before commonv1.SecretStoreRefSpec
			if tc.ref != nil {
				before = *tc.ref
			}
			got := secrets.EffectiveStoreRef(tc.ref)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("EffectiveStoreRef (-want +got):\n%s", diff)
			}
			if tc.ref != nil && *tc.ref != before {
				t.Errorf("input modified: %+v, was %+v", *tc.ref, before)
			}
			if again := secrets.EffectiveStoreRef(&got); again != got {
				t.Errorf("not idempotent: %+v -> %+v", got, again)
			}
		})
	}
}

func TestStoreRefBuilders(t *testing.T) {
	cases := map[string]struct {
		ref      commonv1.SecretStoreRefSpec
		wantES   esov1.SecretStoreRef
		wantPush []esov1alpha1.PushSecretStoreRef
	}{
		"cluster store": {
			ref:      secrets.EffectiveStoreRef(nil),
			wantES:   esov1.SecretStoreRef{Kind: "ClusterSecretStore", Name: "openbao-cluster-store"},
			wantPush: []esov1alpha1.PushSecretStoreRef{{Kind: "ClusterSecretStore", Name: "openbao-cluster-store"}},
		},
		"namespaced store": {
			ref:      commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
			wantES:   esov1.SecretStoreRef{Kind: "SecretStore", Name: "tenant-bao"},
			wantPush: []esov1alpha1.PushSecretStoreRef{{Kind: "SecretStore", Name: "tenant-bao"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantES, secrets.ESOSecretStoreRef(tc.ref)); diff != "" {
				t.Errorf("ESOSecretStoreRef (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPush, secrets.PushSecretStoreRefs(tc.ref)); diff != "" {
				t.Errorf("PushSecretStoreRefs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoreRefBuildersAcceptedByESO writes the built references into ESO's real CRDs
// and reads them back: the kinds are spelled as ESO's enum requires.
func TestStoreRefBuildersAcceptedByESO(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	for _, ref := range []commonv1.SecretStoreRefSpec{
		secrets.EffectiveStoreRef(nil),
		{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
	} {
		name := strings.ToLower(string(ref.Kind))
		es := desiredExternalSecret(ns, name, name, ref)
		if err := env.Client.Create(ctx, es); err != nil {
			t.Fatalf("ExternalSecret with %+v: %v", ref, err)
		}
		ps := desiredPushSecret(ns, name, ref)
		if err := env.Client.Create(ctx, ps); err != nil {
			t.Fatalf("PushSecret with %+v: %v", ref, err)
		}
		gotES, gotPS := &esov1.ExternalSecret{}, &esov1alpha1.PushSecret{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(es), gotES); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(ps), gotPS); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(secrets.ESOSecretStoreRef(ref), gotES.Spec.SecretStoreRef); diff != "" {
			t.Errorf("ExternalSecret store ref (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(secrets.PushSecretStoreRefs(ref), gotPS.Spec.SecretStoreRefs); diff != "" {
			t.Errorf("PushSecret store refs (-want +got):\n%s", diff)
		}
	}
}

func TestIsStoreRefReady(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	other := env.Namespace(t)
	readyCluster, idleCluster, deadCluster := clusterName("ready"), clusterName("idle"), clusterName("dead")
	createClusterStore(t, readyCluster, true)
	createClusterStore(t, idleCluster, false)
	createClusterStore(t, deadCluster, false)
	if _, err := simulate.MarkClusterSecretStoreNotReady(ctx, env.Client, deadCluster, esov1.ReasonValidationFailed); err != nil {
		t.Fatal(err)
	}
	createStore(t, ns, "ready", true)
	createStore(t, ns, "idle", false)
	createStore(t, ns, "dead", false)
	if _, err := simulate.MarkSecretStoreNotReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "dead"}, esov1.ReasonValidationFailed); err != nil {
		t.Fatal(err)
	}
	createStore(t, other, "elsewhere", true)

	cluster := func(name string) commonv1.SecretStoreRefSpec {
		return commonv1.SecretStoreRefSpec{Kind: commonv1.ClusterSecretStoreKind, Name: name}
	}
	local := func(name string) commonv1.SecretStoreRefSpec {
		return commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: name}
	}
	cases := map[string]struct {
		ref     commonv1.SecretStoreRefSpec
		want    bool
		wantErr error
	}{
		"ready ClusterSecretStore":                    {ref: cluster(readyCluster), want: true},
		"ClusterSecretStore without status":           {ref: cluster(idleCluster)},
		"ClusterSecretStore Ready=False":              {ref: cluster(deadCluster)},
		"missing ClusterSecretStore":                  {ref: cluster(clusterName("missing"))},
		"ready SecretStore":                           {ref: local("ready"), want: true},
		"SecretStore without status":                  {ref: local("idle")},
		"SecretStore Ready=False":                     {ref: local("dead")},
		"missing SecretStore":                         {ref: local("missing")},
		"SecretStore ready only in another namespace": {ref: local("elsewhere")},
		"unknown kind":                                {ref: commonv1.SecretStoreRefSpec{Kind: "VaultStore", Name: "ready"}, wantErr: secrets.ErrUnknownStoreKind},
		"SecretStore without a name":                  {ref: local(""), wantErr: secrets.ErrMissingStoreName},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := secrets.IsStoreRefReady(ctx, env.Client, tc.ref, ns)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("ready = %v, want %v", got, tc.want)
			}
		})
	}

	// The primitives answer the same.
	if ok, err := secrets.IsClusterSecretStoreReady(ctx, env.Client, readyCluster); !ok || err != nil {
		t.Errorf("IsClusterSecretStoreReady(%s) = %v, %v; want true, nil", readyCluster, ok, err)
	}
	if ok, err := secrets.IsSecretStoreReady(ctx, env.Client, "ready", ns); !ok || err != nil {
		t.Errorf("IsSecretStoreReady(ready) = %v, %v; want true, nil", ok, err)
	}
	if ok, err := secrets.IsSecretStoreReady(ctx, env.Client, "ready", other); ok || err != nil {
		t.Errorf("IsSecretStoreReady in the wrong namespace = %v, %v; want false, nil", ok, err)
	}
}

func TestIsStoreRefReadyUnknownKindMakesNoRequest(t *testing.T) {
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []commonv1.SecretStoreRefSpec{
		{Kind: "VaultStore", Name: "x"},
		{Kind: commonv1.SecretStoreKind},
	} {
		if _, err := secrets.IsStoreRefReady(context.Background(), c, ref, "default"); err == nil {
			t.Errorf("%+v: want an error", ref)
		}
	}
	if n := counter.Total(); n != 0 {
		t.Errorf("%d API requests, want 0", n)
	}
	_, err = secrets.IsStoreRefReady(context.Background(), c, commonv1.SecretStoreRefSpec{Kind: "VaultStore", Name: "x"}, "default")
	for _, want := range []string{`"VaultStore"`, `"x"`, "spec.secretStoreRef.kind", "ClusterSecretStore", "SecretStore"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestStoreReadinessAPIErrors(t *testing.T) {
	ctx := context.Background()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: esov1.Group, Resource: "secretstores"}, "x", errors.New("denied"))
	failing := interceptor.NewClient(fakeBase(t), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return forbidden
		},
	})
	cases := map[string]struct {
		call     func() (bool, error)
		wantText string
	}{
		"ClusterSecretStore": {
			call:     func() (bool, error) { return secrets.IsClusterSecretStoreReady(ctx, failing, "vault-eu") },
			wantText: "ClusterSecretStore vault-eu",
		},
		"SecretStore": {
			call:     func() (bool, error) { return secrets.IsSecretStoreReady(ctx, failing, "tenant-bao", "tenant") },
			wantText: "SecretStore tenant/tenant-bao",
		},
		"store ref": {
			call: func() (bool, error) {
				return secrets.IsStoreRefReady(ctx, failing, commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"}, "tenant")
			},
			wantText: "SecretStore tenant/tenant-bao",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ready, err := tc.call()
			if ready || !apierrors.IsForbidden(err) {
				t.Fatalf("= %v, %v; want false, Forbidden", ready, err)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not name %q", err, tc.wantText)
			}
		})
	}
}
