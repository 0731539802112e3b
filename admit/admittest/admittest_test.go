package admittest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/c5c3/reconciler-sdk/admit"
	"github.com/c5c3/reconciler-sdk/admit/admittest"
)

// recorder is a testing.TB that records what a helper reports instead of failing the
// test; Fatal ends the helper's goroutine as testing does.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// record runs helper on a recorder in its own goroutine and returns the recorder.
func record(t *testing.T, helper func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		helper(r)
	}()
	<-done
	return r
}

// expectReports fails t unless r recorded one report per entry of want, each
// containing its entry, and stopped (fatal) when fatal is set.
func expectReports(t *testing.T, r *recorder, fatal bool, want ...string) {
	t.Helper()
	if len(r.errs) != len(want) || r.fatal != fatal {
		t.Fatalf("reports %q (fatal %t), want %d containing %q (fatal %t)", r.errs, r.fatal, len(want), want, fatal)
	}
	for i, w := range want {
		if !strings.Contains(r.errs[i], w) {
			t.Errorf("report %d = %q, want it to contain %q", i, r.errs[i], w)
		}
	}
}

func configMap(labels map[string]string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "apps", Labels: labels}, Data: data}
}

// defaulterFunc is an admission.Defaulter of ConfigMaps.
type defaulterFunc func(context.Context, *corev1.ConfigMap) error

func (f defaulterFunc) Default(ctx context.Context, cm *corev1.ConfigMap) error { return f(ctx, cm) }

// sharedLabels is what the sharing defaulter hands every ConfigMap.
var sharedLabels = map[string]string{"team": "web"}

var (
	// nsLabel labels a ConfigMap with admit.Namespace, where none is set.
	nsLabel = defaulterFunc(func(ctx context.Context, cm *corev1.ConfigMap) error {
		if cm.Labels == nil {
			cm.Labels = map[string]string{"ns": admit.Namespace(ctx, cm)}
		}
		return nil
	})
	// counter adds an x to the label count on every call: not idempotent.
	counter = defaulterFunc(func(_ context.Context, cm *corev1.ConfigMap) error {
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels["count"] += "x"
		return nil
	})
	// sharing sets the package's label map itself.
	sharing = defaulterFunc(func(_ context.Context, cm *corev1.ConfigMap) error {
		cm.Labels = sharedLabels
		return nil
	})
	failing = defaulterFunc(func(context.Context, *corev1.ConfigMap) error { return errors.New("boom") })
)

// TestExpectDefault checks each way a defaulter fails the helper, and that right ones
// pass.
func TestExpectDefault(t *testing.T) {
	noNamespace := configMap(nil, nil)
	noNamespace.Namespace = ""
	labelled := func(cm *corev1.ConfigMap, k, v string) *corev1.ConfigMap {
		cm = cm.DeepCopy()
		cm.Labels = map[string]string{k: v}
		return cm
	}
	tests := map[string]struct {
		ctx     context.Context
		d       admission.Defaulter[*corev1.ConfigMap]
		in      *corev1.ConfigMap
		want    *corev1.ConfigMap
		fatal   bool
		reports []string // substrings of what the helper must report, in order
	}{
		"right": {ctx: context.Background(), d: nsLabel, in: configMap(nil, nil),
			want: configMap(map[string]string{"ns": "apps"}, nil)},
		"the request's namespace": {ctx: admittest.RequestContext("other"), d: nsLabel, in: noNamespace,
			want: labelled(noNamespace, "ns", "other")},
		"a wrong default": {ctx: context.Background(), d: nsLabel, in: configMap(nil, nil),
			want:    configMap(map[string]string{"ns": "elsewhere"}, nil),
			reports: []string{"defaulted (-want +got)", "defaulted twice (-want +got)"}},
		"a second call that changes the object": {ctx: context.Background(), d: counter, in: configMap(nil, nil),
			want:    configMap(map[string]string{"count": "x"}, nil),
			reports: []string{"defaulted twice (-want +got)"}},
		"memory shared between objects": {ctx: context.Background(), d: sharing, in: configMap(nil, nil),
			want:    configMap(map[string]string{"team": "web"}, nil),
			reports: []string{"share the map[string]string at ObjectMeta.Labels"}},
		"an error": {ctx: context.Background(), d: failing, in: configMap(nil, nil), want: configMap(nil, nil),
			fatal: true, reports: []string{"defaulted: Default: boom"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			before := tc.in.DeepCopy()
			r := record(t, func(tb testing.TB) { admittest.ExpectDefault(tb, tc.ctx, tc.d, tc.in, tc.want) })
			expectReports(t, r, tc.fatal, tc.reports...)
			if diff := cmp.Diff(before, tc.in); diff != "" {
				t.Errorf("the input was changed (-before +after):\n%s", diff)
			}
		})
	}
}

// rules refuse a data key "bad", Forbidden on data.bad.
type rules struct{}

func (rules) GroupKind() schema.GroupKind { return schema.GroupKind{Kind: "ConfigMap"} }

func (rules) Problems(cm *corev1.ConfigMap) field.ErrorList {
	if v, ok := cm.Data["bad"]; ok {
		return field.ErrorList{field.Invalid(field.NewPath("data", "bad"), v, "remove it")}
	}
	return nil
}

type validator = admit.Validator[*corev1.ConfigMap, rules]

// answer is a validator that answers every call with its warnings and error.
type answer struct {
	warnings admission.Warnings
	err      error
}

func (a answer) ValidateCreate(context.Context, *corev1.ConfigMap) (admission.Warnings, error) {
	return a.warnings, a.err
}

func (a answer) ValidateUpdate(context.Context, *corev1.ConfigMap, *corev1.ConfigMap) (admission.Warnings, error) {
	return a.warnings, a.err
}

func (a answer) ValidateDelete(context.Context, *corev1.ConfigMap) (admission.Warnings, error) {
	return a.warnings, a.err
}

var badCause = metav1.StatusCause{Type: metav1.CauseTypeFieldValueInvalid, Field: "data.bad", Message: `Invalid value: "1": remove it`}

// TestExpectValidate checks each way a validator's answer fails ExpectValidateCreate
// and ExpectValidateUpdate, and that the right answer passes.
func TestExpectValidate(t *testing.T) {
	bad := configMap(nil, map[string]string{"bad": "1"})
	otherName := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "other",
		field.ErrorList{field.Invalid(field.NewPath("data", "bad"), "1", "remove it")})
	tests := map[string]struct {
		v            admission.Validator[*corev1.ConfigMap]
		want         []metav1.StatusCause
		wantWarnings []string
		fatal        bool
		reports      []string
	}{
		"right":                  {v: validator{}, want: []metav1.StatusCause{badCause}},
		"admitted, want refused": {v: answer{}, want: []metav1.StatusCause{badCause}, reports: []string{"causes (-want +got)"}},
		"refused, want admitted": {v: validator{}, reports: []string{"causes (-want +got)"}},
		"another error":          {v: answer{err: errors.New("boom")}, fatal: true, reports: []string{"err = boom, want an Invalid error"}},
		"another object's name":  {v: answer{err: otherName}, want: []metav1.StatusCause{badCause}, reports: []string{`refusal names "other"`}},
		"an unwanted warning":    {v: answer{warnings: admission.Warnings{"careful"}}, reports: []string{"warnings (-want +got)"}},
		"a missing warning":      {v: answer{}, wantWarnings: []string{"careful"}, reports: []string{"warnings (-want +got)"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := admittest.Case[*corev1.ConfigMap]{Old: configMap(nil, nil), Obj: bad, Want: tc.want, Warnings: tc.wantWarnings}
			r := record(t, func(tb testing.TB) { admittest.ExpectValidateCreate(tb, tc.v, c) })
			expectReports(t, r, tc.fatal, tc.reports...)
			r = record(t, func(tb testing.TB) { admittest.ExpectValidateUpdate(tb, tc.v, c) })
			expectReports(t, r, tc.fatal, tc.reports...)
		})
	}
}

// TestCauses checks a nil error, an Invalid one and the failure on another error.
func TestCauses(t *testing.T) {
	if got := admittest.Causes(t, nil); got != nil {
		t.Errorf("Causes(nil) = %v", got)
	}
	_, err := validator{}.ValidateCreate(context.Background(), configMap(nil, map[string]string{"bad": "1"}))
	if diff := cmp.Diff([]metav1.StatusCause{badCause}, admittest.Causes(t, err)); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}
	r := record(t, func(tb testing.TB) { admittest.Causes(tb, apierrors.NewNotFound(schema.GroupResource{}, "x")) })
	expectReports(t, r, true, "want an Invalid error with details")
}

// TestTables runs a create and an update table whose cases hold, Hidden included.
func TestTables(t *testing.T) {
	admittest.CreateTable(t, validator{}, map[string]admittest.Case[*corev1.ConfigMap]{
		"admitted": {Obj: configMap(nil, map[string]string{"good": "1"})},
		"refused":  {Obj: configMap(nil, map[string]string{"bad": "1"}), Want: []metav1.StatusCause{badCause}, Hidden: []string{"s3cr3t"}},
	})
	admittest.UpdateTable(t, validator{}, map[string]admittest.Case[*corev1.ConfigMap]{
		"carried over": {Old: configMap(nil, map[string]string{"bad": "1"}), Obj: configMap(nil, map[string]string{"bad": "1"}),
			Warnings: []string{`data.bad: Invalid value: "1": remove it`}},
		"new": {Old: configMap(nil, nil), Obj: configMap(nil, map[string]string{"bad": "1"}), Want: []metav1.StatusCause{badCause}},
	})
}

// TestHidden checks that a hidden value in the refusal or in a warning fails the check.
func TestHidden(t *testing.T) {
	v := answer{warnings: admission.Warnings{"data.bad: s3cr3t"}, err: apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "settings",
		field.ErrorList{field.Invalid(field.NewPath("data", "bad"), "s3cr3t", "remove it")})}
	c := admittest.Case[*corev1.ConfigMap]{Obj: configMap(nil, nil),
		Want:     []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "data.bad", Message: `Invalid value: "s3cr3t": remove it`}},
		Warnings: []string{"data.bad: s3cr3t"},
	}
	r := record(t, func(tb testing.TB) { admittest.ExpectValidateCreate(tb, v, c) })
	expectReports(t, r, false)
	c.Hidden = []string{"s3cr3t"}
	r = record(t, func(tb testing.TB) { admittest.ExpectValidateCreate(tb, v, c) })
	expectReports(t, r, false, `refusal echoes "s3cr3t"`, `warnings echo "s3cr3t"`)
}

// admitAll admits every object of kind T.
type admitAll[T k8sruntime.Object] struct{}

func (admitAll[T]) ValidateCreate(context.Context, T) (admission.Warnings, error) { return nil, nil }

func (admitAll[T]) ValidateUpdate(context.Context, T, T) (admission.Warnings, error) {
	return nil, nil
}

func (admitAll[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) { return nil, nil }

// TestExpectNotInScheme checks that the helper passes a setup refused for the missing
// kind, and fails one that succeeds or whose error lacks a wanted text.
func TestExpectNotInScheme(t *testing.T) {
	crds := func(mgr ctrl.Manager) error {
		return admit.Register(mgr, &apiextensionsv1.CustomResourceDefinition{}, nil,
			admitAll[*apiextensionsv1.CustomResourceDefinition]{})
	}
	configMaps := func(mgr ctrl.Manager) error {
		return admit.Register(mgr, &corev1.ConfigMap{}, nil, admitAll[*corev1.ConfigMap]{})
	}
	admittest.ExpectNotInScheme(t, crds, "register the CustomResourceDefinition admission webhook", "v1.CustomResourceDefinition")

	r := record(t, func(tb testing.TB) { admittest.ExpectNotInScheme(tb, configMaps) })
	expectReports(t, r, false, "err = <nil>, want it to wrap admit.ErrNotInScheme")
	r = record(t, func(tb testing.TB) { admittest.ExpectNotInScheme(tb, crds, "v1alpha1.Widget") })
	expectReports(t, r, false, `want it to contain "v1alpha1.Widget"`)
}

// TestCreate creates objects through the helpers on the control plane: a typed object
// as its manifest, a manifest file with and without a name, and a file whose unknown
// field strict validation refuses, naming the file.
func TestCreate(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	cm := configMap(map[string]string{"team": "web"}, map[string]string{"port": "8080"})
	cm.Namespace = "ignored"
	if err := admittest.CreateManifest(ctx, env.Client, ns, cm); err != nil {
		t.Fatalf("CreateManifest: %v", err)
	}
	got := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "settings"}, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cm.Data, got.Data); diff != "" || got.Labels["team"] != "web" {
		t.Errorf("stored %v %v (-want +got data):\n%s", got.Labels, got.Data, diff)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "configmap.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-file\ndata:\n  a: b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "renamed"} {
		u, err := admittest.CreateFile(ctx, env.Client, ns, file, name)
		if err != nil {
			t.Fatalf("CreateFile(%q): %v", name, err)
		}
		want := name
		if want == "" {
			want = "from-file"
		}
		if u.GetName() != want || u.GetNamespace() != ns || u.GetUID() == "" {
			t.Errorf("CreateFile(%q) = %s/%s uid %q, want %s/%s stored", name, u.GetNamespace(), u.GetName(), u.GetUID(), ns, want)
		}
	}

	unknown := filepath.Join(dir, "unknown.yaml")
	if err := os.WriteFile(unknown, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: unknown\ndatas:\n  a: b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := admittest.CreateFile(ctx, env.Client, ns, unknown, "")
	if err == nil || !strings.Contains(err.Error(), unknown) || !strings.Contains(err.Error(), `unknown field "datas"`) {
		t.Errorf("CreateFile with an unknown field: err = %v, want it to name the file and the field", err)
	}
	if _, err := admittest.CreateFile(ctx, env.Client, ns, filepath.Join(dir, "missing.yaml"), ""); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CreateFile of a missing file: err = %v, want os.ErrNotExist", err)
	}
}

// webhooked is a ConfigMap named name the test webhook configurations send to the
// webhooks, with data.
func webhooked(name string, data map[string]string) *corev1.ConfigMap {
	cm := configMap(map[string]string{"admittest.c5c3.io/webhook": "true"}, data)
	cm.Name = name
	return cm
}

// forbidBad refuses a ConfigMap with a data key "bad", Forbidden on data.bad.
type forbidBad struct{}

func (forbidBad) GroupKind() schema.GroupKind { return schema.GroupKind{Kind: "ConfigMap"} }

func (forbidBad) Problems(cm *corev1.ConfigMap) field.ErrorList {
	if _, ok := cm.Data["bad"]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath("data", "bad"), "remove it")}
	}
	return nil
}

// setupConfigMaps registers a defaulter that labels with the namespace and a validator
// that refuses data.bad.
func setupConfigMaps(mgr ctrl.Manager) error {
	return admit.Register(mgr, &corev1.ConfigMap{}, defaulterFunc(func(ctx context.Context, cm *corev1.ConfigMap) error {
		cm.Labels["defaulted-in"] = admit.Namespace(ctx, cm)
		return nil
	}), admit.Validator[*corev1.ConfigMap, forbidBad]{})
}

// TestServe serves webhooks the API server calls: Admitted returns the object the
// mutating webhook defaulted, ExpectRefusedUpdate passes the validating webhook's
// refusal; and each reports what is wrong where the API server admits or refuses
// otherwise.
func TestServe(t *testing.T) {
	admittest.Serve(t, env, setupConfigMaps)
	ns := env.Namespace(t)

	stored := admittest.Admitted(t, env.Client, ns, webhooked("a", map[string]string{"port": "8080"}))
	if got := stored.Labels["defaulted-in"]; got != ns || stored.Data["port"] != "8080" || stored.UID == "" {
		t.Errorf("stored %v %v uid %q, want the label defaulted-in=%s", stored.Labels, stored.Data, stored.UID, ns)
	}
	addBad := func(cm *corev1.ConfigMap) { cm.Data["bad"] = "s3cr3t" }
	admittest.ExpectRefusedUpdate(t, env.Client, stored, addBad, `ConfigMap "a" is invalid: data.bad: Forbidden: remove it`)

	r := record(t, func(tb testing.TB) {
		admittest.ExpectRefusedUpdate(tb, env.Client, stored, func(cm *corev1.ConfigMap) { cm.Data["port"] = "9090" })
	})
	expectReports(t, r, false, "update: err = <nil>, want Invalid", "object after the refused update")

	r = record(t, func(tb testing.TB) {
		admittest.Admitted(tb, env.Client, ns, webhooked("b", map[string]string{"bad": "1"}))
	})
	expectReports(t, r, true, `create: admission webhook "vconfigmap.admittest.c5c3.io" denied the request`)
}

// TestServeSetupFails checks that an error of the setup fails the test at once.
func TestServeSetupFails(t *testing.T) {
	r := record(t, func(tb testing.TB) {
		admittest.Serve(tb, env, func(ctrl.Manager) error { return errors.New("boom") })
	})
	expectReports(t, r, true, "set the webhooks up: boom")
}
