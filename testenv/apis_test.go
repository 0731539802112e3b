package testenv_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// The VPA manifest holds two CRDs.
var vpaCRDs = []string{"verticalpodautoscalers.autoscaling.k8s.io", "verticalpodautoscalercheckpoints.autoscaling.k8s.io"}

var (
	vpaGVK     = schema.GroupVersionKind{Group: "autoscaling.k8s.io", Version: "v1", Kind: "VerticalPodAutoscaler"}
	vpaSources = []testenv.CRDSource{{Module: testenv.VPAModule, Version: testenv.VPAVersion, Files: []string{"deploy/vpa-v1-crd-gen.yaml"}}}
)

// served asks a fresh client's RESTMapper, as a controller starting now would.
func served(t *testing.T, gvk schema.GroupVersionKind) bool {
	t.Helper()
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		return true
	case meta.IsNoMatchError(err):
		return false
	}
	t.Fatalf("RESTMapping %s: %v", gvk, err)
	return false
}

// TestRemoveAndInstallCRDs: RemoveCRDs takes an API away for one test and brings it
// back afterwards; InstallCRDs adds one for one test and takes it away afterwards.
func TestRemoveAndInstallCRDs(t *testing.T) {
	if !served(t, vpaGVK) {
		t.Fatal("the VPA kind is not served before the test")
	}
	t.Run("removed", func(t *testing.T) {
		env.RemoveCRDs(t, vpaCRDs...)
		if served(t, vpaGVK) {
			t.Fatal("the VPA kind is still served after RemoveCRDs")
		}
		t.Run("installed again", func(t *testing.T) {
			env.InstallCRDs(t, vpaSources...)
			if !served(t, vpaGVK) {
				t.Fatal("the VPA kind is not served after InstallCRDs")
			}
		})
		if served(t, vpaGVK) {
			t.Fatal("the VPA kind is still served after the InstallCRDs test ended")
		}
	})
	if !served(t, vpaGVK) {
		t.Fatal("the VPA kind is not served again after the RemoveCRDs test ended")
	}
}

// fatalRecorder records a Fatalf and ends the goroutine as testing.T does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestInstallCRDsRefusesAnInstalledCRD(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		env.InstallCRDs(rec, vpaSources...)
	}()
	<-done
	if !strings.Contains(rec.msg, "autoscaling.k8s.io is already installed") {
		t.Fatalf("InstallCRDs of an installed CRD: fatal %q, want it refused by name", rec.msg)
	}
	if !served(t, vpaGVK) {
		t.Fatal("the refused InstallCRDs removed the VPA kind")
	}
}
