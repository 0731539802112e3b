package job_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/c5c3/reconciler-sdk/job"
)

// ExampleRunJob shows a db-sync step: run the Job, requeue until it completes. Here
// the real Job controller runs it on a kwok node.
func ExampleRunJob() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	// waitTimeout (90 s) is the bound on waits for a real controller, defined in main_test.go.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	dbSync := func() *batchv1.Job {
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "identity-db-sync", Namespace: ns.Name},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "db-sync", Image: "registry.example/identity:2025.1",
					Command: []string{"identity-manage", "db_sync"},
				}},
			}}},
		}
	}

	done, err := job.RunJob(ctx, c, scheme, owner, dbSync())
	fmt.Println("first pass done:", done, err)

	// A reconciler requeues after 10 s; here we poll.
	_ = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, waitTimeout, true, func(ctx context.Context) (bool, error) {
		done, err = job.RunJob(ctx, c, scheme, owner, dbSync())
		if errors.Is(err, job.ErrJobFailed) {
			return false, err // a reconciler sets a False condition and waits for a spec change
		}
		return done, err
	})
	fmt.Println("later pass done:", done, err)
	// Output:
	// first pass done: false <nil>
	// later pass done: true <nil>
}
