package database_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/database"
)

// TestNilScheme: every exported function that takes a scheme refuses a nil one with an
// error wrapping apply.ErrNilScheme that names the object, before any API call, and
// never panics.
func TestNilScheme(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: "ns", UID: "uid-1"}}
	tests := map[string]struct {
		call func(ctx context.Context, c client.Client) error
		// names is the object the error names.
		names string
	}{
		"EnsureDatabase": {names: "Database ns/identity", call: func(ctx context.Context, c client.Client) error {
			_, err := database.EnsureDatabase(ctx, c, nil, owner, desiredDatabase("ns"))
			return err
		}},
		"EnsureDatabaseUser": {names: "User ns/identity", call: func(ctx context.Context, c client.Client) error {
			_, err := database.EnsureDatabaseUser(ctx, c, nil, owner, desiredUser("ns"), desiredGrant("ns"))
			return err
		}},
		"ReconcileProvision": {names: "Database ns/identity", call: func(ctx context.Context, c client.Client) error {
			_, _, err := database.ReconcileProvision(ctx, c, nil, owner, params("ns", true))
			return err
		}},
		"ReconcileSyncJobs": {names: "Job ns/db-sync", call: func(ctx context.Context, c client.Client) error {
			_, _, err := database.ReconcileSyncJobs(ctx, c, nil, owner, database.SyncJob{Job: syncJob("ns", "db-sync", "identity:1")})
			return err
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			calls := 0
			count := func() { calls++ }
			c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(env.Scheme).Build(), interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
					count()
					return c.Get(ctx, k, o, opts...)
				},
				Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
					count()
					return c.Create(ctx, o, opts...)
				},
			})
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panicked: %v", r)
					}
				}()
				err = tc.call(context.Background(), c)
			}()
			if !errors.Is(err, apply.ErrNilScheme) || !strings.Contains(err.Error(), tc.names) {
				t.Errorf("err = %v, want apply.ErrNilScheme naming %s", err, tc.names)
			}
			if calls != 0 {
				t.Errorf("%d API calls, want none", calls)
			}
		})
	}
}
