package testenv_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
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
	for _, want := range []string{"kube-controller-manager, kwok in " + dir, "make envtest", "hack/envtest.sh"} {
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

// The kwok binary (installed by hack/envtest.sh) and the Stage documents (read from
// the module cache at KWOKVersion) must come from the same kwok release.
func TestKWOKVersionMatchesEnvtestScript(t *testing.T) {
	script, err := os.ReadFile("../hack/envtest.sh")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^KWOK_VERSION="([^"]+)"$`).FindSubmatch(script)
	if m == nil {
		t.Fatal("hack/envtest.sh sets no KWOK_VERSION")
	}
	if got := string(m[1]); got != testenv.KWOKVersion {
		t.Errorf("hack/envtest.sh installs kwok %s, testenv.KWOKVersion is %s", got, testenv.KWOKVersion)
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
