package deployment_test

import (
	"context"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// waitTimeout bounds every wait for a real controller; the margin is for a loaded
// machine (the controllers usually act within seconds).
const waitTimeout = 90 * time.Second

var env *testenv.Env

// vpaCRDs are the VerticalPodAutoscaler CRDs, the only upstream CRDs the package needs.
var vpaCRDs = testenv.CRDSource{
	Module: testenv.VPAModule, Version: testenv.VPAVersion,
	Files: []string{"deploy/vpa-v1-crd-gen.yaml"},
}

// The package runs on real controllers: Deployments become Available through real
// ReplicaSets and (kwok) pods, and deletions cascade through the garbage collector.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDSources:  []testenv.CRDSource{vpaCRDs},
		Controllers: true,
	}, &env))
}

// newOwner creates a persisted ConfigMap in ns that owns what a test applies.
func newOwner(t testing.TB, ns, name string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatalf("create owner: %v", err)
	}
	return owner
}

// desiredDeployment builds the Deployment "web" selecting app=<app>.
func desiredDeployment(ns, app string, replicas *int32) *appsv1.Deployment {
	labels := map[string]string{"app": app}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "registry.example/web:1",
				}}},
			},
		},
	}
}

// eventually polls cond until it returns true, failing the test after waitTimeout with
// what and the last state cond described.
func eventually(t testing.TB, what string, cond func(ctx context.Context) (done bool, state string, err error)) {
	t.Helper()
	var state string
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, waitTimeout, true,
		func(ctx context.Context) (bool, error) {
			done, s, err := cond(ctx)
			state, last = s, err
			return done && err == nil, nil
		})
	if err != nil {
		t.Fatalf("timed out after %s waiting for %s; last state: %s; last error: %v", waitTimeout, what, state, last)
	}
}
