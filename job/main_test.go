package job_test

import (
	"context"
	"os"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// waitTimeout bounds every wait for a real controller; the margin is for a loaded
// machine (the controllers usually act within seconds).
const waitTimeout = 90 * time.Second

var env *testenv.Env

// The package runs on real controllers: Jobs complete through the Job controller and
// kwok pods, and deleted Jobs' pods are collected by the garbage collector.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		CRDSources:  []testenv.CRDSource{},
		Controllers: true,
	}, &env))
}

// newOwner creates a persisted ConfigMap in ns that owns what a test creates.
func newOwner(t testing.TB, ns, name string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatalf("create owner: %v", err)
	}
	return owner
}

// desiredJob builds the Job "db-sync" running image.
func desiredJob(ns, image string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "db-sync", Namespace: ns},
		Spec: batchv1.JobSpec{
			BackoffLimit: new(int32(2)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db-sync"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "db-sync", Image: image, Command: []string{"identity-manage", "db_sync"},
					}},
				},
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
