package secrets_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

func TestWaitForExternalSecret(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	ref := secrets.EffectiveStoreRef(nil)
	for _, name := range []string{"unsynced", "synced", "failed", "resynced-failed"} {
		if err := env.Client.Create(ctx, desiredExternalSecret(ns, name, name, ref)); err != nil {
			t.Fatal(err)
		}
	}
	key := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }
	if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, key("synced"), map[string][]byte{"password": []byte("pw")}); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkExternalSecretNotSynced(ctx, env.Client, key("failed"), esov1.ConditionReasonSecretSyncedError); err != nil {
		t.Fatal(err)
	}
	// Synced once, then the provider fails: the Secret is still there, Ready is False.
	if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, key("resynced-failed"), map[string][]byte{"password": []byte("pw")}); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkExternalSecretNotSynced(ctx, env.Client, key("resynced-failed"), esov1.ConditionReasonSecretSyncedError); err != nil {
		t.Fatal(err)
	}

	cases := map[string]struct {
		name                  string
		wantExists, wantReady bool
	}{
		"not found":                     {name: "absent"},
		"exists, no status yet":         {name: "unsynced", wantExists: true},
		"exists, Ready=True":            {name: "synced", wantExists: true, wantReady: true},
		"exists, Ready=False":           {name: "failed", wantExists: true},
		"synced once, then Ready=False": {name: "resynced-failed", wantExists: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			exists, ready, err := secrets.WaitForExternalSecret(ctx, env.Client, key(tc.name))
			if err != nil {
				t.Fatal(err)
			}
			if exists != tc.wantExists || ready != tc.wantReady {
				t.Errorf("= (%v, %v), want (%v, %v)", exists, ready, tc.wantExists, tc.wantReady)
			}
		})
	}

	failing := interceptor.NewClient(fakeBase(t), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewTooManyRequests("slow down", 1)
		},
	})
	exists, ready, err := secrets.WaitForExternalSecret(ctx, failing, key("synced"))
	if exists || ready || !apierrors.IsTooManyRequests(err) {
		t.Fatalf("API error: = (%v, %v, %v), want (false, false, TooManyRequests)", exists, ready, err)
	}
	if want := "ExternalSecret " + ns + "/synced"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
}
