package controller

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
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
	gr := schema.GroupResource{Group: identityBackendGVK.Group, Resource: "keystoneidentitybackends"}
	internal := apierrors.NewInternalError(errors.New("etcd is down"))
	cases := map[string]struct {
		err     error
		reason  string
		message string
		wantErr error
	}{
		"not served": {err: &meta.NoKindMatchError{GroupKind: identityBackendGVK.GroupKind(), SearchedVersions: []string{"v1alpha1"}},
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

// A named backend whose spec.federation.identityProviders[0].protocol is a number (a
// shape the Keystone CRD's schema refuses, so a fake client holds it): the WebSSO row
// reports WebSSOReady False IdentityBackendInvalid naming the backend, its
// spec.websso.identityBackends field and the backend's field, returns no error and a
// zero result (a retry reads the same object; the backend watch brings the Horizon back
// when it changes), and hands the Config row the choices of the other, well-formed
// backend.
func TestWebSSOInvalidBackend(t *testing.T) {
	scheme, err := testenv.NewSchemeWith(AddToScheme)
	if err != nil {
		t.Fatal(err)
	}
	backendOf := func(name string, protocol any) *unstructured.Unstructured {
		u := newIdentityBackend()
		u.SetNamespace("ns")
		u.SetName(name)
		u.Object["spec"] = map[string]any{"domain": name, "federation": map[string]any{"identityProviders": []any{
			map[string]any{"id": name + "-oidc", "protocol": protocol}}}}
		u.Object["status"] = map[string]any{"identityProviders": []any{map[string]any{"id": name + "-oidc", "protocol": "openid"}}}
		return u
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(backendOf("broken", int64(7)), backendOf("corp", "openid")).Build()
	r := &Reconciler{management: c}
	h := unitHorizon()
	h.Spec.WebSSO = &v1alpha1.WebSSOSpec{Enabled: true, Choices: []v1alpha1.WebSSOChoice{{ID: "credentials", Label: "c"}},
		IdentityBackends: []v1alpha1.IdentityBackendRef{{Name: "broken"}, {Name: "corp"}}}
	state := &passState{}
	ctx := reconcile.WithState(context.Background(), state)
	res, err := r.pipelineOf().RunStep(ctx, "WebSSO", h)
	if err != nil || !res.IsZero() {
		t.Fatalf("RunStep = %+v, %v; want a zero result and no error", res, err)
	}
	const want = "KeystoneIdentityBackend broken (spec.websso.identityBackends[0]) adds no choice: its spec.federation.identityProviders[0].protocol is a number, want a string; the login page offers identity provider choices corp-oidc_openid"
	c2 := meta.FindStatusCondition(h.Status.Conditions, ConditionWebSSOReady)
	if c2 == nil || c2.Status != "False" || c2.Reason != ReasonIdentityBackendInvalid || c2.Message != want {
		t.Errorf("WebSSOReady = %+v, want False %s with %q", c2, ReasonIdentityBackendInvalid, want)
	}
	if got := state.websso.Choices; len(got) != 1 || got[0].Choice.ID != "corp-oidc_openid" || got[0].Backend != "corp" {
		t.Errorf("choices handed to the Config row = %+v, want corp-oidc_openid of corp only", got)
	}
}
