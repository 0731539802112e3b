package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// The WebSSO row on reads of the backends that fail: a kind the management cluster does
// not serve is a verdict (IdentityBackendsNotInstalled, no error, no requeue); any
// other failure is returned, wrapped, with WebSSOReady False IdentityBackendError naming
// the backend and its field, and a zero result. The failures are injected into a fake
// client: a real API server does not fail a read on demand.
func TestWebSSOReadFailures(t *testing.T) {
	scheme, err := testenv.NewSchemeWith(AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	gr := schema.GroupResource{Group: keystonev1alpha1.GroupVersion.Group, Resource: "keystoneidentitybackends"}
	internal := apierrors.NewInternalError(errors.New("etcd is down"))
	cases := map[string]struct {
		err     error
		reason  string
		message string
		wantErr error
	}{
		"not served": {err: &meta.NoKindMatchError{GroupKind: keystonev1alpha1.GroupVersion.WithKind("KeystoneIdentityBackend").GroupKind(), SearchedVersions: []string{"v1alpha1"}},
			reason: ReasonIdentityBackendsNotInstalled, message: "the management cluster does not serve KeystoneIdentityBackends"},
		"internal error": {err: internal, reason: ReasonIdentityBackendError, wantErr: internal,
			message: "reading KeystoneIdentityBackend ns/partners (spec.websso.identityBackends[1]): Internal error occurred: etcd is down"},
		"forbidden": {err: apierrors.NewForbidden(gr, "partners", errors.New("no RBAC")), reason: ReasonIdentityBackendError,
			message: "reading KeystoneIdentityBackend ns/partners (spec.websso.identityBackends[1])"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if key.Name == "partners" {
						return tc.err
					}
					return c.Get(ctx, key, obj, opts...)
				}}).Build()
			r := &Reconciler{management: c}
			h := unitHorizon()
			h.Spec.WebSSO = &v1alpha1.WebSSOSpec{Enabled: true, Choices: []v1alpha1.WebSSOChoice{{ID: "credentials", Label: "c"}},
				IdentityBackends: []v1alpha1.IdentityBackendRef{{Name: "corp"}, {Name: "partners"}}}
			res, err := r.pipelineOf().RunStep(context.Background(), "WebSSO", h)
			if !res.IsZero() {
				t.Errorf("result %+v, want zero", res)
			}
			switch {
			case tc.reason == ReasonIdentityBackendsNotInstalled && err != nil:
				t.Errorf("error %v, want none: a kind not served is a verdict", err)
			case tc.reason == ReasonIdentityBackendError && err == nil:
				t.Error("no error, want the read's")
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Errorf("error %v does not wrap %v", err, tc.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "Horizon ns/dashboard (spec.websso.identityBackends[1])") {
				t.Errorf("error %q does not name the Horizon and the field", err)
			}
			c2 := meta.FindStatusCondition(h.Status.Conditions, ConditionWebSSOReady)
			if c2 == nil || c2.Status != "False" || c2.Reason != tc.reason || !strings.Contains(c2.Message, tc.message) {
				t.Errorf("WebSSOReady = %+v, want False %s with %q", c2, tc.reason, tc.message)
			}
		})
	}
}
