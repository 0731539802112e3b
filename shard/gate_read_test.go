package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	. "github.com/c5c3/reconciler-sdk/shard"
)

// The Gate decides from what its reader (the cache) holds, never from what the
// reconciler might read past it: a request whose object the cache does not hold (with
// server-side selectors, another member's object) is dropped without calling the
// reconciler, even though the API server still has the object; an object the cache
// holds outside the member's ranges is dropped too; a failed read is an error naming the
// object, and the reconciler is not called.
func TestGateReadsOnlyItsReader(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "cr"}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: "6b9f3c2e-0d6a-4c1e-9a57-3f1f1d2b7c10"}}
	tests := map[string]struct {
		reason  string
		cache   client.Reader
		wantErr string
	}{
		"not in the cache": {reason: "another member's object, still on the API server",
			cache: fake.NewClientBuilder().Build()},
		"in the cache, outside the ranges": {reason: "a member that owns nothing yet",
			cache: fake.NewClientBuilder().WithObjects(obj.DeepCopy()).Build()},
		"the read fails": {reason: "the error names the object",
			cache: fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return errors.New("cache stopped")
				}}).Build(),
			wantErr: "shard: reading ns/cr: cache stopped"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := NewMember(fake.NewClientBuilder().WithObjects(obj.DeepCopy()).Build(), Options{Namespace: "ns", Ring: "ring", Identity: "a"})
			if err != nil {
				t.Fatal(err)
			}
			called := 0
			r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
				called++
				return reconcile.Result{}, nil
			})
			res, err := Gate(m, tc.cache, func() *corev1.ConfigMap { return &corev1.ConfigMap{} }, r).
				Reconcile(t.Context(), reconcile.Request{NamespacedName: key})
			switch {
			case tc.wantErr == "" && err != nil, tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("%s: error %v, want %q", tc.reason, err, tc.wantErr)
			case !res.IsZero():
				t.Errorf("%s: result %+v, want zero", tc.reason, res)
			case called != 0:
				t.Errorf("%s: the reconciler ran %d times, want never", tc.reason, called)
			}
		})
	}
}
