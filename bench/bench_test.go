package bench_test

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// testOwners is the size of the workload in the tests (the benchmarks and the report
// take BENCH_OWNERS).
const testOwners = 5

func startOperatorT(t testing.TB, w way) *operator {
	t.Helper()
	op, err := startOperator(w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := op.stop(); err != nil {
			t.Errorf("stop %s: %v", w, err)
		}
	})
	return op
}

func createOwnersT(t testing.TB, n int) []*BenchApp {
	t.Helper()
	owners, err := createOwners(context.Background(), env.Namespace(t), n)
	if err != nil {
		t.Fatal(err)
	}
	return owners
}

func settleT(t testing.TB, op *operator, owners []*BenchApp) {
	t.Helper()
	if _, err := settle(context.Background(), op, owners); err != nil {
		t.Fatalf("%s never reached its steady state: %v", op.way, err)
	}
}

// TestConvergedPassSendsNoRequests: once its informers have caught up, a pass of the
// SDK applier over the whole workload (every owner, eight children each) sends no
// request at all, while naive Server-Side Apply sends the ownership GET and the apply
// PATCH of every child.
func TestConvergedPassSendsNoRequests(t *testing.T) {
	ctx := context.Background()
	owners := createOwnersT(t, testOwners)
	children := testOwners * childrenPerOwner

	sdk := startOperatorT(t, sdkApplier)
	settleT(t, sdk, owners) // until a pass skipped every child
	sdk.counter.Reset()
	got, err := sdk.pass(ctx, owners)
	if err != nil {
		t.Fatal(err)
	}
	if n := sdk.counter.Total(); n != 0 {
		t.Errorf("a converged pass of the SDK applier over %d children sent %d requests (%d writes), want 0",
			children, n, sdk.counter.Writes())
	}
	if got.skipped != children {
		t.Errorf("a converged pass skipped %d of %d children: %+v", got.skipped, children, got)
	}

	naive := startOperatorT(t, naiveSSA)
	settleT(t, naive, owners)
	naive.counter.Reset()
	if _, err := naive.pass(ctx, owners); err != nil {
		t.Fatal(err)
	}
	if gets, patches := naive.counter.Method("GET"), naive.counter.Method("PATCH"); gets != children || patches != children {
		t.Errorf("a converged pass of naive SSA sent %d GETs and %d PATCHes, want %d each", gets, patches, children)
	}
}

// TestDriftRepairedInOnePass: a kubectl-style edit of one applied field of one child is
// repaired by the first pass after the operator's informer has seen it, and that pass
// writes only the drifted child.
func TestDriftRepairedInOnePass(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		obj  func() client.Object
		// edit changes one applied field of the object read from the server.
		edit func(client.Object)
		// drifted tells whether obj carries the edit.
		drifted func(client.Object) bool
	}{
		{
			name: "Deployment image",
			obj:  func() client.Object { return &appsv1.Deployment{} },
			edit: func(o client.Object) { o.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image = driftImage },
			drifted: func(o client.Object) bool {
				return o.(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Image == driftImage
			},
		},
		{
			name:    "Service targetPort",
			obj:     func() client.Object { return &corev1.Service{} },
			edit:    func(o client.Object) { o.(*corev1.Service).Spec.Ports[0].TargetPort = intstr.FromInt32(9090) },
			drifted: func(o client.Object) bool { return o.(*corev1.Service).Spec.Ports[0].TargetPort.IntValue() == 9090 },
		},
		{
			name:    "Secret data",
			obj:     func() client.Object { return &corev1.Secret{} },
			edit:    func(o client.Object) { o.(*corev1.Secret).Data["password"] = []byte("hand-edited") },
			drifted: func(o client.Object) bool { return string(o.(*corev1.Secret).Data["password"]) == "hand-edited" },
		},
		{
			name:    "ConfigMap data",
			obj:     func() client.Object { return &corev1.ConfigMap{} },
			edit:    func(o client.Object) { o.(*corev1.ConfigMap).Data["app.conf"] = "hand-edited" },
			drifted: func(o client.Object) bool { return o.(*corev1.ConfigMap).Data["app.conf"] == "hand-edited" },
		},
	}
	for _, w := range ways {
		t.Run(w.slug(), func(t *testing.T) {
			op := startOperatorT(t, w)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					owners := createOwnersT(t, testOwners)
					settleT(t, op, owners)
					victim := owners[0]
					key := client.ObjectKeyFromObject(victim)
					err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
						obj := tc.obj()
						if err := env.Client.Get(ctx, key, obj); err != nil {
							return err
						}
						tc.edit(obj)
						return env.Client.Update(ctx, obj, client.FieldOwner("kubectl-edit"))
					})
					if err != nil {
						t.Fatal(err)
					}
					seen := tc.obj()
					seen.SetName(key.Name)
					seen.SetNamespace(key.Namespace)
					if err := waitSeen(ctx, op, seen, func() bool { return tc.drifted(seen) }); err != nil {
						t.Fatalf("the operator never saw the edit: %v", err)
					}

					got, err := op.pass(ctx, owners)
					if err != nil {
						t.Fatal(err)
					}
					stored := tc.obj()
					if err := env.Client.Get(ctx, key, stored); err != nil {
						t.Fatal(err)
					}
					if tc.drifted(stored) {
						t.Errorf("the first pass after the operator saw the edit did not repair it (%+v)", got)
					}
					if got.changed != 1 {
						t.Errorf("the repairing pass changed %d children, want 1 (%+v)", got.changed, got)
					}
					if w == sdkApplier && got.skipped != testOwners*childrenPerOwner-1 {
						t.Errorf("the repairing pass skipped %d children, want every other one: %d (%+v)",
							got.skipped, testOwners*childrenPerOwner-1, got)
					}
				})
			}
		})
	}
}

// BenchmarkConvergedPass measures one pass over the whole converged workload (every
// owner, eight children each), each way, for every BENCH_OWNERS size: API requests,
// writes and kube-apiserver CPU seconds per pass, besides time and allocations.
func BenchmarkConvergedPass(b *testing.B) {
	for _, n := range benchOwners() {
		for _, w := range ways {
			b.Run(fmt.Sprintf("%s/owners=%d", w.slug(), n), func(b *testing.B) {
				ctx := context.Background()
				owners := createOwnersT(b, n)
				op := startOperatorT(b, w)
				settleT(b, op, owners)
				op.counter.Reset()
				cpu0, cpuErr := apiserverCPUSeconds()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := op.pass(ctx, owners); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(op.counter.Total())/float64(b.N), "requests/op")
				b.ReportMetric(float64(op.counter.Writes())/float64(b.N), "writes/op")
				if cpu1, err := apiserverCPUSeconds(); cpuErr == nil && err == nil {
					b.ReportMetric((cpu1-cpu0)/float64(b.N), "apiserver-cpu-s/op")
				}
			})
		}
	}
}

// BenchmarkConverge measures bringing a fresh workload of BENCH_OWNERS owners to its
// steady state, each way: from the owners' creation until a pass changed nothing (for
// the SDK applier: until one skipped every child). Besides time and allocations it
// reports requests, passes and kube-apiserver CPU seconds per convergence.
func BenchmarkConverge(b *testing.B) {
	for _, n := range benchOwners() {
		for _, w := range ways {
			b.Run(fmt.Sprintf("%s/owners=%d", w.slug(), n), func(b *testing.B) {
				ctx := context.Background()
				op := startOperatorT(b, w)
				requests, passes := 0, 0
				cpu, cpuOK := 0.0, true
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					owners := createOwnersT(b, n)
					op.counter.Reset()
					cpu0, err0 := apiserverCPUSeconds()
					b.StartTimer()
					p, err := settle(ctx, op, owners)
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					cpu1, err1 := apiserverCPUSeconds()
					cpu += cpu1 - cpu0
					cpuOK = cpuOK && err0 == nil && err1 == nil
					requests += op.counter.Total()
					passes += p
					b.StartTimer()
				}
				b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
				b.ReportMetric(float64(passes)/float64(b.N), "passes/op")
				if cpuOK {
					b.ReportMetric(cpu/float64(b.N), "apiserver-cpu-s/op")
				}
			})
		}
	}
}
