package testenv_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{addProbe},
		Logger: recordingLogger()}, &env))
}

func TestUpstreamCRDsAreEstablished(t *testing.T) {
	for _, name := range []string{
		"externalsecrets.external-secrets.io",
		"secretstores.external-secrets.io",
		"clustersecretstores.external-secrets.io",
		"pushsecrets.external-secrets.io",
		"certificates.cert-manager.io",
		"mariadbs.k8s.mariadb.com",
		"databases.k8s.mariadb.com",
		"users.k8s.mariadb.com",
		"grants.k8s.mariadb.com",
		"gatewayclasses.gateway.networking.k8s.io",
		"gateways.gateway.networking.k8s.io",
		"httproutes.gateway.networking.k8s.io",
		"verticalpodautoscalers.autoscaling.k8s.io",
	} {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			t.Errorf("CRD %s: %v", name, err)
			continue
		}
		established := false
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				established = true
			}
		}
		if !established {
			t.Errorf("CRD %s is not Established", name)
		}
	}
}

func TestSchemeKnowsUpstreamKinds(t *testing.T) {
	for _, gvk := range []string{
		"cert-manager.io/v1, Kind=Certificate",
		"k8s.mariadb.com/v1alpha1, Kind=Database",
		"gateway.networking.k8s.io/v1, Kind=HTTPRoute",
		"autoscaling.k8s.io/v1, Kind=VerticalPodAutoscaler",
		"apps/v1, Kind=Deployment",
	} {
		found := false
		for known := range env.Scheme.AllKnownTypes() {
			if known.String() == gvk {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("scheme does not know %s", gvk)
		}
	}
}

func TestNamespaceIsFreshPerCall(t *testing.T) {
	a, b := env.Namespace(t), env.Namespace(t)
	if a == b {
		t.Fatalf("two calls returned the same namespace %q", a)
	}
	for _, ns := range []string{a, b} {
		if err := env.Client.Get(context.Background(), client.ObjectKey{Name: ns}, &corev1.Namespace{}); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}
}

func TestCountingClientCountsRequests(t *testing.T) {
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	if err := c.Get(context.Background(), client.ObjectKey{Name: ns}, &corev1.Namespace{}); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns}}
	if err := c.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	if counter.Total() != 2 || counter.Writes() != 1 || counter.Method("GET") != 1 || counter.Method("POST") != 1 {
		t.Errorf("total=%d writes=%d GET=%d POST=%d, want 2/1/1/1", counter.Total(), counter.Writes(), counter.Method("GET"), counter.Method("POST"))
	}
}

func TestAssetsDirFailsLoudlyWithoutBinaries(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("KUBEBUILDER_ASSETS", empty)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, err := testenv.AssetsDir("")
	if !errors.Is(err, testenv.ErrNoAssets) {
		t.Fatalf("error = %v, want ErrNoAssets", err)
	}
	for _, want := range []string{empty, "make envtest", testenv.KubernetesVersion} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := testenv.Start(testenv.Options{}); !errors.Is(err, testenv.ErrNoAssets) {
		t.Errorf("Start without binaries: error = %v, want ErrNoAssets", err)
	}
}

func TestAssetsDirPrefersOverrideThenEnv(t *testing.T) {
	mk := func() string {
		dir := t.TempDir()
		for _, b := range []string{"kube-apiserver", "etcd"} {
			if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	override, fromEnv := mk(), mk()
	t.Setenv("KUBEBUILDER_ASSETS", fromEnv)
	if got, err := testenv.AssetsDir(override); err != nil || got != override {
		t.Errorf("AssetsDir(override) = %q, %v; want %q", got, err, override)
	}
	if got, err := testenv.AssetsDir(""); err != nil || got != fromEnv {
		t.Errorf("AssetsDir(\"\") = %q, %v; want $KUBEBUILDER_ASSETS %q", got, err, fromEnv)
	}
}

func TestResolveCRDPathsNamesMissingManifest(t *testing.T) {
	_, err := testenv.ResolveCRDPaths([]testenv.CRDSource{{
		Module: testenv.CertManagerModule, Version: testenv.CertManagerVersion,
		Files: []string{"deploy/crds/no-such-file.yaml"},
	}})
	if err == nil || !strings.Contains(err.Error(), "no-such-file.yaml") || !strings.Contains(err.Error(), testenv.CertManagerVersion) {
		t.Fatalf("error = %v, want one naming the manifest and module version", err)
	}
}

func TestResolveCRDPathsFindsDefaults(t *testing.T) {
	paths, err := testenv.ResolveCRDPaths(testenv.DefaultCRDs())
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, s := range testenv.DefaultCRDs() {
		want += len(s.Files)
	}
	if len(paths) != want {
		t.Fatalf("got %d paths, want %d", len(paths), want)
	}
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			t.Errorf("path %q is not absolute", p)
		}
	}
}
