package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// TestNilScheme: every exported function of the package that takes a
// *runtime.Scheme answers a nil one with an error wrapping apply.ErrNilScheme that
// names the object, makes no API call and does not panic.
func TestNilScheme(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		call func() error
		want string
	}{
		"EnsureGeneratedSecret": {
			call: func() error {
				_, err := secrets.EnsureGeneratedSecret(ctx, c, nil, owner, gs)
				return err
			},
			want: "Secret " + ns + "/identity-admin-source",
		},
		"EnsureGeneratedSecret without owner": {
			call: func() error {
				_, err := secrets.EnsureGeneratedSecret(ctx, c, nil, nil, gs)
				return err
			},
			want: "Secret " + ns + "/identity-admin-source",
		},
		"EnsurePushSecret": {
			call: func() error {
				return secrets.EnsurePushSecret(ctx, c, nil, owner, desiredPushSecret(ns, "identity-admin-source", secrets.EffectiveStoreRef(nil)))
			},
			want: "PushSecret " + ns + "/identity-admin-source",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			counter.Reset()
			err := tc.call()
			if !errors.Is(err, apply.ErrNilScheme) {
				t.Fatalf("err = %v, want apply.ErrNilScheme", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
			if counter.Total() != 0 {
				t.Errorf("%d API requests with a nil scheme, want 0", counter.Total())
			}
		})
	}
}
