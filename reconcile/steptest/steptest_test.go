package steptest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/reconcile/steptest"
)

var scheme = newScheme()

func configStep(c client.Client) reconcile.Step[*Gadget] {
	return ConfigStep{Client: c, Scheme: scheme}.Step()
}

func keySecret() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "g-key", Namespace: "ns"}, Data: map[string][]byte{"key": []byte("0123456789")}}
}

func renderedConfig() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "g-config", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{{
			APIVersion: gadgetGV.String(), Kind: "Gadget", Name: "g", UID: gadget().UID,
			Controller: new(true), BlockOwnerDeletion: new(true),
		}}},
		Data: map[string]string{"settings.py": "SECRET_KEY_LEN = 10\n"},
	}
}

func extraConfig() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "g-extra", Namespace: "ns"}}
}

var errAPIDown = apierrors.NewServiceUnavailable("api down")

// TestSuite uses the kit the way an operator author would.
func TestSuite(t *testing.T) {
	verified := 0
	steptest.Suite[*Gadget]{
		"renders the config and deletes the extra": {
			Object:       gadget(),
			GivenObjects: []client.Object{keySecret(), extraConfig()},
			ExpectedConditions: []metav1.Condition{
				{Type: "ConfigReady", Status: metav1.ConditionTrue, Reason: "ConfigRendered", ObservedGeneration: 2},
			},
			ExpectedObjects: []client.Object{renderedConfig()},
			AbsentObjects:   []client.Object{extraConfig()},
			Verify: func(t *testing.T, c client.Client, g *Gadget) {
				verified++
				if g.ResourceVersion == "" {
					t.Error("the step ran on an object that was not read back from the client")
				}
			},
		},
		"waits for the secret": {
			Object: gadget(),
			ExpectedConditions: []metav1.Condition{{Type: "ConfigReady", Status: metav1.ConditionFalse, Reason: "WaitingForSecretKey",
				Message: `Secret "g-key" not found`, ObservedGeneration: 2}},
			ExpectedResult: ctrl.Result{RequeueAfter: secretPoll},
			AbsentObjects:  []client.Object{renderedConfig()},
		},
		"keeps the extra when asked": {
			Object:       func() *Gadget { g := gadget(); g.Spec.Extra = true; return g }(),
			GivenObjects: []client.Object{keySecret(), extraConfig()},
			ExpectedConditions: []metav1.Condition{
				{Type: "ConfigReady", Status: metav1.ConditionTrue, Reason: "ConfigRendered", ObservedGeneration: 2},
			},
			ExpectedObjects: []client.Object{renderedConfig(), extraConfig()},
		},
		"an API error propagates": {
			Object:       gadget(),
			GivenObjects: []client.Object{keySecret()},
			Interceptors: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*corev1.Secret); ok {
					return errAPIDown
				}
				return c.Get(ctx, key, obj, opts...)
			}},
			ExpectedErr: errAPIDown,
		},
		"existing conditions are part of the expectation": {
			Object: func() *Gadget {
				g := gadget()
				reconcile.MarkTrue(g, "SecretsReady", "SecretsAvailable", "")
				return g
			}(),
			GivenObjects: []client.Object{keySecret()},
			ExpectedConditions: []metav1.Condition{
				{Type: "ConfigReady", Status: metav1.ConditionTrue, Reason: "ConfigRendered", ObservedGeneration: 2},
				{Type: "SecretsReady", Status: metav1.ConditionTrue, Reason: "SecretsAvailable", ObservedGeneration: 2},
			},
			ExpectedObjects: []client.Object{renderedConfig()},
		},
	}.Run(t, scheme, configStep)
	if verified != 1 {
		t.Errorf("Verify ran %d times, want 1", verified)
	}
}

// TestEvaluateReportsMismatches proves the kit fails a case for each expectation the
// step does not meet.
func TestEvaluateReportsMismatches(t *testing.T) {
	ok := steptest.Case[*Gadget]{
		Object:       gadget(),
		GivenObjects: []client.Object{keySecret()},
		ExpectedConditions: []metav1.Condition{
			{Type: "ConfigReady", Status: metav1.ConditionTrue, Reason: "ConfigRendered", ObservedGeneration: 2},
		},
		ExpectedObjects: []client.Object{renderedConfig()},
	}
	tests := map[string]struct {
		change  func(tc *steptest.Case[*Gadget])
		factory steptest.Factory[*Gadget]
		want    string
	}{
		"wrong result": {
			change: func(tc *steptest.Case[*Gadget]) {
				tc.ExpectedResult = ctrl.Result{RequeueAfter: secretPoll}
			},
			want: "result = {Requeue:false RequeueAfter:0s Priority:<nil>}, want {Requeue:false RequeueAfter:15s Priority:<nil>}",
		},
		"error expected but none": {
			change: func(tc *steptest.Case[*Gadget]) { tc.ShouldErr = true },
			want:   "error = nil, want an error",
		},
		"specific error expected": {
			change: func(tc *steptest.Case[*Gadget]) { tc.ExpectedErr = errAPIDown },
			want:   `error = <nil>, want one wrapping "api down"`,
		},
		"unexpected error": {
			change: func(tc *steptest.Case[*Gadget]) {
				tc.Interceptors.Get = func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return errAPIDown
				}
				tc.ExpectedObjects = nil
				tc.ExpectedConditions = nil
			},
			want: "unexpected error: step Config: read Secret ns/g-key: api down",
		},
		"wrong condition": {
			change: func(tc *steptest.Case[*Gadget]) { tc.ExpectedConditions[0].Reason = "Rendered" },
			want:   "conditions (-want +got):",
		},
		"unlisted condition": {
			change: func(tc *steptest.Case[*Gadget]) { tc.ExpectedConditions = nil },
			want:   "conditions (-want +got):",
		},
		"object missing": {
			change: func(tc *steptest.Case[*Gadget]) { tc.ExpectedObjects = append(tc.ExpectedObjects, extraConfig()) },
			want:   `expected object ConfigMap ns/g-extra: configmaps "g-extra" not found`,
		},
		"object differs": {
			change: func(tc *steptest.Case[*Gadget]) {
				cm := renderedConfig()
				cm.Data["settings.py"] = "SECRET_KEY_LEN = 11\n"
				tc.ExpectedObjects = []client.Object{cm}
			},
			want: "object ConfigMap ns/g-config (-want +got):",
		},
		"object present": {
			change: func(tc *steptest.Case[*Gadget]) { tc.AbsentObjects = []client.Object{renderedConfig()} },
			want:   "object ConfigMap ns/g-config exists, want it absent",
		},
		"no object": {
			change: func(tc *steptest.Case[*Gadget]) { tc.Object = nil },
			want:   "Case.Object is nil",
		},
		"type unknown to the scheme": {
			change: func(tc *steptest.Case[*Gadget]) { tc.GivenObjects = append(tc.GivenObjects, &unknownKind{}) },
			want:   "steptest: build fake client:",
		},
		"invalid step": {
			factory: func(client.Client) reconcile.Step[*Gadget] { return reconcile.Step[*Gadget]{Name: "Config"} },
			want:    `steptest: invalid pipeline: step 0 ("Config"): Run is nil`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := ok
			c.ExpectedConditions = append([]metav1.Condition(nil), ok.ExpectedConditions...)
			if tc.change != nil {
				tc.change(&c)
			}
			factory := tc.factory
			if factory == nil {
				factory = configStep
			}
			r := c.Evaluate(t.Context(), scheme, factory)
			if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], tc.want) {
				t.Errorf("problems = %q, want exactly one containing %q", r.Problems, tc.want)
			}
		})
	}
	if r := ok.Evaluate(t.Context(), scheme, configStep); len(r.Problems) != 0 {
		t.Errorf("the unchanged case failed: %q", r.Problems)
	}
}

func TestEvaluateFollowsTheRunner(t *testing.T) {
	both := func(client.Client) reconcile.Step[*Gadget] {
		return reconcile.Step[*Gadget]{Name: "Both", Run: func(context.Context, *Gadget) (ctrl.Result, error) {
			return ctrl.Result{RequeueAfter: reconcile.RetryInterval}, errAPIDown
		}}
	}
	r := steptest.Case[*Gadget]{Object: gadget(), ExpectedErr: errAPIDown}.Evaluate(t.Context(), scheme, both)
	if len(r.Problems) != 0 || !r.Result.IsZero() {
		t.Errorf("result+error step: problems %q, result %+v; want the error only", r.Problems, r.Result)
	}

	panics := func(client.Client) reconcile.Step[*Gadget] {
		return reconcile.Step[*Gadget]{Run: func(context.Context, *Gadget) (ctrl.Result, error) { panic("bug") }}
	}
	r = steptest.Case[*Gadget]{Object: gadget(), ExpectedErr: reconcile.ErrPanic}.Evaluate(t.Context(), scheme, panics)
	if len(r.Problems) != 0 {
		t.Errorf("panicking step: problems %q", r.Problems)
	}

	// A Parallel group merges each member's own condition only.
	group := func(client.Client) reconcile.Step[*Gadget] {
		return reconcile.Parallel("",
			reconcile.Step[*Gadget]{Name: "HPA", Condition: "HPAReady", Run: func(_ context.Context, g *Gadget) (ctrl.Result, error) {
				reconcile.MarkTrue(g, "HPAReady", "HPANotRequired", "")
				reconcile.MarkTrue(g, "Stray", "NotOwned", "")
				return ctrl.Result{}, nil
			}},
			reconcile.Step[*Gadget]{Name: "VPA", Condition: "VPAReady", Run: func(_ context.Context, g *Gadget) (ctrl.Result, error) {
				reconcile.MarkFalse(g, "VPAReady", "VPANotInstalled", "")
				return ctrl.Result{}, errors.New("no VPA")
			}},
		)
	}
	r = steptest.Case[*Gadget]{Object: gadget(), ShouldErr: true, ExpectedConditions: []metav1.Condition{
		{Type: "HPAReady", Status: metav1.ConditionTrue, Reason: "HPANotRequired", ObservedGeneration: 2},
		{Type: "VPAReady", Status: metav1.ConditionFalse, Reason: "VPANotInstalled", ObservedGeneration: 2},
	}}.Evaluate(t.Context(), scheme, group)
	if len(r.Problems) != 0 {
		t.Errorf("parallel group: problems %q", r.Problems)
	}
}

func TestEvaluateLeavesTheCaseAlone(t *testing.T) {
	tc := steptest.Case[*Gadget]{Object: gadget(), GivenObjects: []client.Object{keySecret()}}
	tc.Evaluate(t.Context(), scheme, configStep)
	if len(tc.Object.Status.Conditions) != 0 || tc.Object.ResourceVersion != "" {
		t.Errorf("the case's object was modified: %+v", tc.Object)
	}
}

// unknownKind is an object no scheme knows.
type unknownKind struct{ corev1.ConfigMap }

func (u *unknownKind) DeepCopyObject() runtime.Object {
	return &unknownKind{ConfigMap: *u.DeepCopy()}
}
