package testenv_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/assets"
)

func TestStartWithControllersFailsLoudlyWithoutTheirBinaries(t *testing.T) {
	dir := t.TempDir()
	// kube-apiserver and etcd are there (never started: the check comes first),
	// kube-scheduler too; kube-controller-manager and kwok are missing.
	for _, b := range []string{"kube-apiserver", "etcd", "kube-scheduler"} {
		if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e, err := testenv.Start(testenv.Options{AssetsDir: dir, CRDSources: []testenv.CRDSource{}, Controllers: true})
	if err == nil {
		_ = e.Stop()
		t.Fatal("Start succeeded without kube-controller-manager and kwok")
	}
	if !errors.Is(err, testenv.ErrNoControllerBinaries) {
		t.Fatalf("error = %v, want ErrNoControllerBinaries", err)
	}
	for _, want := range []string{"kube-controller-manager, kwok in " + dir, "make envtest",
		"KUBEBUILDER_ASSETS=$(go run github.com/c5c3/reconciler-sdk/cmd/envtest -no-download)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestKWOKStagesResolveFromTheModuleCache(t *testing.T) {
	paths, err := testenv.ResolveCRDPaths([]testenv.CRDSource{testenv.KWOKStages()})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(testenv.KWOKStages().Files) {
		t.Fatalf("got %d paths, want %d", len(paths), len(testenv.KWOKStages().Files))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsAbs(p) || !strings.Contains(string(data), "kind: Stage") {
			t.Errorf("%s is not an absolute path to a kwok Stage document", p)
		}
	}
}

// The kwok binary (installed by package assets) and the Stage documents (read from
// the module cache at KWOKVersion) must come from the same kwok release, and the
// binaries from the Kubernetes release the kit reports.
func TestVersionsAreTheOnesAssetsBuilds(t *testing.T) {
	if testenv.KWOKModule != assets.KWOKModule || testenv.KWOKVersion != assets.KWOKVersion {
		t.Errorf("testenv reads kwok Stages from %s@%s, assets installs %s@%s",
			testenv.KWOKModule, testenv.KWOKVersion, assets.KWOKModule, assets.KWOKVersion)
	}
	if testenv.KubernetesVersion != assets.KubernetesVersion {
		t.Errorf("testenv.KubernetesVersion is %s, assets builds %s", testenv.KubernetesVersion, assets.KubernetesVersion)
	}
	if want := filepath.Join(assets.DefaultCacheRoot(), assets.KubernetesVersion); testenv.DefaultAssetsDir() != want {
		t.Errorf("testenv.DefaultAssetsDir() = %s, assets publishes into %s", testenv.DefaultAssetsDir(), want)
	}
}

func TestProcessesIsNilWithoutControllers(t *testing.T) {
	if p := env.Processes(); p != nil {
		t.Errorf("Processes() = %v without Options.Controllers, want nil", p)
	}
	var nilEnv *testenv.Env
	if err := nilEnv.Stop(); err != nil {
		t.Errorf("nil Env Stop: %v", err)
	}
}
