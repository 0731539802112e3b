package admit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/c5c3/reconciler-sdk/admit"
)

// configMapKind is the kind the test rules refuse in.
var configMapKind = schema.GroupKind{Kind: "ConfigMap"}

// configMapRules refuses a ConfigMap data key "bad" (Forbidden on data.bad) and a
// data value "" (Required on data[key]), never echoing a value.
type configMapRules struct{}

func (configMapRules) GroupKind() schema.GroupKind { return configMapKind }

func (configMapRules) Problems(cm *corev1.ConfigMap) field.ErrorList {
	data := field.NewPath("data")
	var errs field.ErrorList
	for k, v := range cm.Data {
		if v == "" {
			errs = append(errs, field.Required(data.Key(k), "a value is required"))
		}
	}
	if _, ok := cm.Data["bad"]; ok {
		errs = append(errs, field.Forbidden(data.Child("bad"), "remove it"))
	}
	return errs
}

// labelDefaulter sets the label defaulted=true.
type labelDefaulter struct{}

func (labelDefaulter) Default(_ context.Context, cm *corev1.ConfigMap) error {
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	cm.Labels["defaulted"] = "true"
	return nil
}

type validator = admit.Validator[*corev1.ConfigMap, configMapRules]

func configMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "apps"}, Data: data}
}

// newManager is a manager that is never started, so it needs no API server, whose
// scheme knows the Kubernetes built-in kinds, or none when empty is set.
func newManager(t *testing.T, empty bool) ctrl.Manager {
	t.Helper()
	scheme := runtime.NewScheme()
	if !empty {
		if err := clientgoscheme.AddToScheme(scheme); err != nil {
			t.Fatal(err)
		}
	}
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	return mgr
}

// review sends cm to the handler at path of mgr's webhook server as the API server
// would for a create, and returns the response.
func review(t *testing.T, mgr ctrl.Manager, path string, cm *corev1.ConfigMap) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "1", Operation: admissionv1.Create, Name: cm.Name, Namespace: cm.Namespace,
			Kind:   metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Object: runtime.RawExtension{Raw: raw},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	mux := mgr.GetWebhookServer().WebhookMux()
	if _, pattern := mux.Handler(req); pattern != path {
		t.Fatalf("no handler at %s (pattern %q)", path, pattern)
	}
	mux.ServeHTTP(rec, req)
	out := admissionv1.AdmissionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("response %q: %v", rec.Body.String(), err)
	}
	return out.Response
}

// TestRegister registers both webhooks and sends them requests as the API server
// would: the defaulter's patch sets the label, the validator refuses naming the field.
func TestRegister(t *testing.T) {
	mgr := newManager(t, false)
	if err := admit.Register(mgr, &corev1.ConfigMap{}, labelDefaulter{}, validator{}); err != nil {
		t.Fatalf("Register: %v", err)
	}
	resp := review(t, mgr, "/mutate--v1-configmap", configMap(nil))
	if !resp.Allowed || !strings.Contains(string(resp.Patch), `"defaulted":"true"`) {
		t.Errorf("mutate: allowed %t, patch %s; want allowed with the label", resp.Allowed, resp.Patch)
	}
	resp = review(t, mgr, "/validate--v1-configmap", configMap(map[string]string{"bad": "s3cr3t"}))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusUnprocessableEntity ||
		!strings.Contains(resp.Result.Message, "data.bad: Forbidden: remove it") || strings.Contains(resp.Result.Message, "s3cr3t") {
		t.Errorf("validate: allowed %t, result %+v; want a 422 naming data.bad without the value", resp.Allowed, resp.Result)
	}
	if resp := review(t, mgr, "/validate--v1-configmap", configMap(map[string]string{"good": "1"})); !resp.Allowed {
		t.Errorf("validate a valid ConfigMap: %+v", resp.Result)
	}
}

// TestRegisterOne registers only a validator or only a defaulter: only its path is
// served.
func TestRegisterOne(t *testing.T) {
	for name, tc := range map[string]struct {
		d           admission.Defaulter[*corev1.ConfigMap]
		v           admission.Validator[*corev1.ConfigMap]
		served, not string
	}{
		"a validator": {v: validator{}, served: "/validate--v1-configmap", not: "/mutate--v1-configmap"},
		"a defaulter": {d: labelDefaulter{}, served: "/mutate--v1-configmap", not: "/validate--v1-configmap"},
	} {
		t.Run(name, func(t *testing.T) {
			mgr := newManager(t, false)
			if err := admit.Register(mgr, &corev1.ConfigMap{}, tc.d, tc.v); err != nil {
				t.Fatalf("Register: %v", err)
			}
			mux := mgr.GetWebhookServer().WebhookMux()
			for path, want := range map[string]bool{tc.served: true, tc.not: false} {
				_, pattern := mux.Handler(httptest.NewRequest(http.MethodPost, path, nil))
				if got := pattern == path; got != want {
					t.Errorf("%s served = %t, want %t", path, got, want)
				}
			}
		})
	}
}

// TestRegisterErrors checks the refusals: the kind missing from the scheme, nothing to
// register; each error names the type and wraps its sentinel.
func TestRegisterErrors(t *testing.T) {
	tests := map[string]struct {
		empty    bool
		d        admission.Defaulter[*corev1.ConfigMap]
		v        admission.Validator[*corev1.ConfigMap]
		sentinel error
		want     string
	}{
		"a scheme without the kind": {empty: true, d: labelDefaulter{}, v: validator{}, sentinel: admit.ErrNotInScheme,
			want: "register the ConfigMap admission webhooks: the manager's scheme does not know the type: no kind is registered for the type v1.ConfigMap"},
		"only a validator, on a scheme without the kind": {empty: true, v: validator{}, sentinel: admit.ErrNotInScheme,
			want: "register the ConfigMap admission webhook: "},
		"nothing": {sentinel: admit.ErrNothingToRegister,
			want: "register the ConfigMap admission webhook: neither a defaulter nor a validator"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := admit.Register(newManager(t, tc.empty), &corev1.ConfigMap{}, tc.d, tc.v)
			if !errors.Is(err, tc.sentinel) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err = %v\nwant %v, starting %q", err, tc.sentinel, tc.want)
			}
		})
	}
}

// TestInvalid checks the error: nil without problems; kind, name and causes sorted by
// field path (equal paths in their order), the caller's list left as it was.
func TestInvalid(t *testing.T) {
	if err := admit.Invalid(configMapKind, configMap(nil), nil); err != nil {
		t.Errorf("Invalid without problems = %v, want nil", err)
	}
	errs := field.ErrorList{
		field.Required(field.NewPath("data", "z"), "second"),
		field.Forbidden(field.NewPath("data", "a"), "first"),
		field.Invalid(field.NewPath("data", "z"), field.OmitValueType{}, "third"),
	}
	before := errs.ToAggregate().Error()
	err := admit.Invalid(schema.GroupKind{Group: "example.com", Kind: "Widget"}, configMap(nil), errs)
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		t.Fatalf("err = %v, want Invalid", err)
	}
	d := status.Status().Details
	if d.Group != "example.com" || d.Kind != "Widget" || d.Name != "settings" {
		t.Errorf("details = %+v, want Widget.example.com settings", d)
	}
	var got []string
	for _, c := range d.Causes {
		got = append(got, c.Field+" "+c.Message)
	}
	want := []string{"data.a Forbidden: first", "data.z Required value: second", "data.z Invalid value: third"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	if after := errs.ToAggregate().Error(); after != before {
		t.Errorf("the caller's list changed: %s, was %s", after, before)
	}
}

// TestNewProblems checks the update rule: what the old object had is a warning, every
// other problem is refused, in the new list's order.
func TestNewProblems(t *testing.T) {
	forbidden := field.Forbidden(field.NewPath("data", "a"), "remove it")
	required := field.Required(field.NewPath("data", "b"), "set it")
	valueOne := field.Invalid(field.NewPath("data", "c"), 1, "too small")
	valueTwo := field.Invalid(field.NewPath("data", "c"), 2, "too small")
	moved := field.Forbidden(field.NewPath("data", "z"), "remove it")
	tests := map[string]struct {
		old, new    field.ErrorList
		wantKept    []string
		wantRefused []string
	}{
		"no problems":                     {old: field.ErrorList{forbidden}},
		"a new problem":                   {new: field.ErrorList{forbidden}, wantRefused: []string{forbidden.Error()}},
		"a problem carried over":          {old: field.ErrorList{forbidden}, new: field.ErrorList{forbidden}, wantKept: []string{forbidden.Error()}},
		"one carried over, one new":       {old: field.ErrorList{forbidden}, new: field.ErrorList{required, forbidden}, wantKept: []string{forbidden.Error()}, wantRefused: []string{required.Error()}},
		"the same field with a new value": {old: field.ErrorList{valueOne}, new: field.ErrorList{valueTwo}, wantRefused: []string{valueTwo.Error()}},
		"the same text on another field":  {old: field.ErrorList{forbidden}, new: field.ErrorList{moved}, wantRefused: []string{moved.Error()}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			kept, refused := admit.NewProblems(tc.old, tc.new)
			if diff := cmp.Diff(tc.wantKept, []string(kept)); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
			var got []string
			for _, e := range refused {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.wantRefused, got); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNamespace checks the object's namespace first, then the request's.
func TestNamespace(t *testing.T) {
	inRequest := admission.NewContextWithRequest(context.Background(),
		admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Namespace: "from-request"}})
	tests := map[string]struct {
		ctx  context.Context
		ns   string
		want string
	}{
		"the object's":                    {ctx: inRequest, ns: "apps", want: "apps"},
		"the request's":                   {ctx: inRequest, want: "from-request"},
		"the object's, without a request": {ctx: context.Background(), ns: "apps", want: "apps"},
		"none without a request":          {ctx: context.Background()},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cm := configMap(nil)
			cm.Namespace = tc.ns
			if got := admit.Namespace(tc.ctx, cm); got != tc.want {
				t.Errorf("Namespace = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestValidator checks create, update and delete of a Validator's zero value.
func TestValidator(t *testing.T) {
	ctx := context.Background()
	empty := `data[a]: Required value: a value is required`
	bad := `data.bad: Forbidden: remove it`
	broken := configMap(map[string]string{"a": "", "bad": "s3cr3t"})

	warnings, err := validator{}.ValidateCreate(ctx, broken)
	if len(warnings) != 0 || !apierrors.IsInvalid(err) ||
		err.Error() != `ConfigMap "settings" is invalid: [`+bad+`, `+empty+`]` {
		t.Errorf("create = %q, %v; want no warnings and both problems sorted", warnings, err)
	}
	if warnings, err := (validator{}).ValidateCreate(ctx, configMap(map[string]string{"a": "1"})); warnings != nil || err != nil {
		t.Errorf("create of a valid object = %q, %v", warnings, err)
	}

	withBad := configMap(map[string]string{"bad": "s3cr3t"})
	warnings, err = validator{}.ValidateUpdate(ctx, withBad, broken)
	if diff := cmp.Diff([]string{bad}, []string(warnings)); diff != "" {
		t.Errorf("update warnings (-want +got):\n%s", diff)
	}
	if err == nil || err.Error() != `ConfigMap "settings" is invalid: `+empty {
		t.Errorf("update err = %v, want only the new problem", err)
	}
	warnings, err = validator{}.ValidateUpdate(ctx, broken, broken)
	if diff := cmp.Diff([]string{bad, empty}, []string(warnings)); diff != "" || err != nil {
		t.Errorf("unchanged update = %q, %v; want both problems as warnings in field order (-want +got):\n%s", warnings, err, diff)
	}

	if warnings, err := (validator{}).ValidateDelete(ctx, broken); warnings != nil || err != nil {
		t.Errorf("delete = %q, %v; want admitted", warnings, err)
	}
}
