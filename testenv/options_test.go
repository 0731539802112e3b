package testenv_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// probe is an API type of the tests' own, which TestMain adds through
// Options.AddToScheme.
type probe struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (p *probe) DeepCopyObject() runtime.Object {
	c := *p
	p.DeepCopyInto(&c.ObjectMeta)
	return &c
}

var probeGVK = schema.GroupVersionKind{Group: "options.testenv.test", Version: "v1", Kind: "probe"}

func addProbe(s *runtime.Scheme) error {
	s.AddKnownTypes(probeGVK.GroupVersion(), &probe{})
	return nil
}

// mainLog records what controller-runtime logs under the name options-test, through
// the Options.Logger TestMain passes.
var mainLog struct {
	sync.Mutex
	strings.Builder
}

func recordingLogger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		if !strings.HasPrefix(prefix, "options-test") {
			return
		}
		mainLog.Lock()
		defer mainLog.Unlock()
		mainLog.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{})
}

// TestOptionsAddToSchemeRegistersTypes: the types of Options.AddToScheme are in the
// Env's scheme and its client's, next to the kit's own.
func TestOptionsAddToSchemeRegistersTypes(t *testing.T) {
	for name, s := range map[string]*runtime.Scheme{"Env.Scheme": env.Scheme, "Env.Client.Scheme()": env.Client.Scheme()} {
		gvks, _, err := s.ObjectKinds(&probe{})
		if err != nil {
			t.Errorf("%s: the AddToScheme type: %v", name, err)
		} else if diff := cmp.Diff([]schema.GroupVersionKind{probeGVK}, gvks); diff != "" {
			t.Errorf("%s: kinds of the AddToScheme type (-want +got):\n%s", name, diff)
		}
		for _, kit := range []runtime.Object{&corev1.ConfigMap{}, &apiextensionsv1.CustomResourceDefinition{}} {
			if _, _, err := s.ObjectKinds(kit); err != nil {
				t.Errorf("%s: the kit's type %T is gone: %v", name, kit, err)
			}
		}
	}
}

// TestOptionsAddToSchemeError: a failing or nil AddToScheme function fails Start before
// anything starts, naming the function by its index; an error wraps the function's.
func TestOptionsAddToSchemeError(t *testing.T) {
	errBroken := errors.New("broken API group")
	failing := func(*runtime.Scheme) error { return errBroken }
	tests := map[string]struct {
		add     []func(*runtime.Scheme) error
		wantMsg string
		wantErr error
	}{
		"failing function": {add: []func(*runtime.Scheme) error{addProbe, failing},
			wantMsg: "testenv: Options.AddToScheme[1]: broken API group", wantErr: errBroken},
		"nil function": {add: []func(*runtime.Scheme) error{addProbe, nil},
			wantMsg: "testenv: Options.AddToScheme[1] is nil"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e, err := testenv.Start(testenv.Options{AddToScheme: tc.add})
			if e != nil {
				_ = e.Stop()
				t.Fatal("Start returned an environment")
			}
			if err == nil || err.Error() != tc.wantMsg {
				t.Fatalf("Start: %v, want %q", err, tc.wantMsg)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("Start: %v does not wrap %v", err, tc.wantErr)
			}
		})
	}
}

// TestOptionsAddToSchemeExtendsScheme: with Options.Scheme set, AddToScheme adds to
// that scheme.
func TestOptionsAddToSchemeExtendsScheme(t *testing.T) {
	s := runtime.NewScheme()
	stop := errors.New("stop before the control plane")
	_, err := testenv.Start(testenv.Options{Scheme: s, AddToScheme: []func(*runtime.Scheme) error{
		addProbe, func(*runtime.Scheme) error { return stop }}})
	if !errors.Is(err, stop) {
		t.Fatalf("Start: %v, want the second function's error", err)
	}
	if !s.Recognizes(probeGVK) {
		t.Errorf("Options.Scheme does not know %v after AddToScheme", probeGVK)
	}
}

// TestOptionsLogger: Main set controller-runtime's logger to Options.Logger, so what
// controller-runtime logs reaches it.
func TestOptionsLogger(t *testing.T) {
	ctrllog.Log.WithName("options-test").Info("through Main's logger", "key", "value")
	mainLog.Lock()
	got := mainLog.String()
	mainLog.Unlock()
	if want := `options-test "level"=0 "msg"="through Main's logger" "key"="value"`; !strings.Contains(got, want) {
		t.Errorf("Options.Logger recorded %q, want a line %q", got, want)
	}
}
