package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	ksv1alpha1 "github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// Paths of the Horizon and Keystone examples, relative to the module root.
const (
	crdDir             = "examples/horizon/config/crd/bases"
	samplePath         = "examples/horizon/config/samples/horizon_v1alpha1_horizon_minimal.yaml"
	keystoneCRDDir     = "examples/keystone/config/crd/bases"
	keystoneSamplePath = "examples/keystone/config/samples/keystone_v1alpha1_keystone_minimal.yaml"
)

// moduleRoot finds the root of the reconciler-sdk module: two directories above this
// source file when the sources are at hand (go run, go test), else the directory of
// `go env GOMOD`.
func moduleRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok {
		root := filepath.Join(filepath.Dir(file), "..", "..")
		if _, err := os.Stat(filepath.Join(root, samplePath)); err == nil {
			return filepath.Clean(root), nil
		}
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root with go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("finding the module root: not inside a Go module; run the demo from the reconciler-sdk checkout")
	}
	return filepath.Dir(gomod), nil
}

// startControlPlane starts kube-apiserver and etcd with the upstream CRDs and the
// Horizon and Keystone CRDs, and the real controllers (garbage collector, Deployments,
// ReplicaSets and Jobs, scheduler, kwok).
func startControlPlane(root string) (*testenv.Env, error) {
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme, ksv1alpha1.AddToScheme)
	if err != nil {
		return nil, err
	}
	return testenv.Start(testenv.Options{
		Controllers: true,
		CRDPaths:    []string{filepath.Join(root, crdDir), filepath.Join(root, keystoneCRDDir)},
		Scheme:      scheme,
	})
}

// loadSample reads the minimal sample Horizon and places it in namespace ns.
func loadSample(root, ns string) (*v1alpha1.Horizon, error) {
	path := filepath.Join(root, samplePath)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the sample Horizon: %w", err)
	}
	h := &v1alpha1.Horizon{}
	if err := yaml.UnmarshalStrict(raw, h); err != nil {
		return nil, fmt.Errorf("decoding the sample Horizon %s: %w", path, err)
	}
	h.Namespace = ns
	return h, nil
}

// ensureNamespace creates namespace ns unless it exists.
func ensureNamespace(ctx context.Context, c client.Client, ns string) error {
	err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Namespace %s: %w", ns, err)
	}
	return nil
}

// loadKeystoneSample reads the minimal sample Keystone and places it in namespace ns.
func loadKeystoneSample(root, ns string) (*ksv1alpha1.Keystone, error) {
	path := filepath.Join(root, keystoneSamplePath)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the sample Keystone: %w", err)
	}
	k := &ksv1alpha1.Keystone{}
	if err := yaml.UnmarshalStrict(raw, k); err != nil {
		return nil, fmt.Errorf("decoding the sample Keystone %s: %w", path, err)
	}
	k.Namespace = ns
	return k, nil
}
