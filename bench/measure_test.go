package bench_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Settings read from the environment, so that `make bench` can run the comparison
// small (the default) or at full size (BENCH_OWNERS=50,500).
func benchOwners() []int { return envInts("BENCH_OWNERS", []int{50}) }

// benchPasses is how many converged passes are measured and averaged.
func benchPasses() int { return envInts("BENCH_PASSES", []int{3})[0] }

// benchUnrelated is how many unrelated Secrets and as many ConfigMaps the heap
// measurement starts with; it then grows them tenfold.
func benchUnrelated() int { return envInts("BENCH_UNRELATED", []int{200})[0] }

func envInts(name string, def []int) []int {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def
	}
	var out []int
	for f := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			panic(fmt.Sprintf("%s=%q: want positive integers separated by commas", name, v))
		}
		out = append(out, n)
	}
	return out
}

// settleTimeout bounds how long a way may take to reach its steady state; it is a
// bound against hanging, never an assertion on speed.
const settleTimeout = 5 * time.Minute

// settle runs passes until the operator's steady state: a pass that changed nothing
// and, for the SDK applier, one in which every child was skipped (its informers have
// caught up with its own writes). It returns how many passes it ran.
func settle(ctx context.Context, op *operator, owners []*BenchApp) (int, error) {
	passes := 0
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, settleTimeout, true, func(ctx context.Context) (bool, error) {
		t, err := op.pass(ctx, owners)
		passes++
		if err != nil {
			return false, err
		}
		return t.quiet() && (op.way != sdkApplier || t.skipped == len(owners)*childrenPerOwner), nil
	})
	return passes, err
}

// driftImage is the image a kubectl-style edit puts into a Deployment.
const driftImage = "registry.example/app:hand-edited"

// editDeployment changes the image of owner's Deployment the way `kubectl edit` does: a
// read, then an Update under another field manager.
func editDeployment(ctx context.Context, owner *BenchApp) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(owner), d); err != nil {
			return err
		}
		d.Spec.Template.Spec.Containers[0].Image = driftImage
		return env.Client.Update(ctx, d, client.FieldOwner("kubectl-edit"))
	})
}

// waitSeen waits until obj, read through op's client (its informer, for a cached way),
// satisfies seen.
func waitSeen(ctx context.Context, op *operator, obj client.Object, seen func() bool) error {
	return wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, settleTimeout, true, func(ctx context.Context) (bool, error) {
		if err := op.client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		return seen(), nil
	})
}

// result is what the report measures for one way at one number of owners.
type result struct {
	way    way
	owners int

	// From creation, over convergeRuns runs (measureConvergence): the passes until one
	// changed nothing (for the SDK applier: until one skipped every child) and the
	// requests they sent in the run of the median time, that time, the fastest and the
	// slowest.
	convergeRuns     int
	convergePasses   int
	convergeTime     time.Duration
	convergeFastest  time.Duration
	convergeSlowest  time.Duration
	convergeRequests int
	convergeWrites   int
	// convergeCPU is kube-apiserver's median CPU time over the converging passes; NaN
	// when /proc cannot tell.
	convergeCPU float64
	// convergeWork is what kube-apiserver counted of its work in the run of the median
	// time.
	convergeWork serverWork

	// Per converged pass over all owners, averaged over benchPasses() passes.
	passRequests float64
	passWrites   float64
	passTime     time.Duration
	// apiserverCPU is kube-apiserver's CPU time per converged pass; NaN when /proc
	// cannot tell.
	apiserverCPU float64

	// Drift: a kubectl-style edit of one owner's Deployment image, then reconciles of
	// that owner (as its watch would trigger) until the stored image is back.
	driftPasses   int
	driftRequests int
	driftTime     time.Duration
}

// measureWay converges n owners in a fresh namespace with way w, then measures its
// converged passes and its repair of a drift; it returns the results (without the
// convergence, which measureConvergence measures apart) and the owners (for the heap
// measurement).
func measureWay(ctx context.Context, tb testing.TB, w way, n int) (result, []*BenchApp, error) {
	r := result{way: w, owners: n}
	ns := env.Namespace(tb)
	op, err := startOperator(w)
	if err != nil {
		return r, nil, err
	}
	defer func() { _ = op.stop() }()
	owners, err := createOwners(ctx, ns, n)
	if err != nil {
		return r, nil, err
	}

	if _, err = settle(ctx, op, owners); err != nil {
		return r, nil, fmt.Errorf("%s: converge: %w", w, err)
	}

	// The converged passes start once the control plane has finished the convergence's
	// tail (its own informers, the watch fan-out of the last writes), so that their CPU
	// is theirs.
	if err := waitIdle(ctx, tb); err != nil {
		return r, nil, err
	}
	k := benchPasses()
	op.counter.Reset()
	cpu0, cpuErr := apiserverCPUSeconds()
	start := time.Now()
	for range k {
		if _, err := op.pass(ctx, owners); err != nil {
			return r, nil, fmt.Errorf("%s: converged pass: %w", w, err)
		}
	}
	r.passTime = time.Since(start) / time.Duration(k)
	cpu1, cpuErr2 := apiserverCPUSeconds()
	r.apiserverCPU = (cpu1 - cpu0) / float64(k)
	if cpuErr != nil || cpuErr2 != nil {
		r.apiserverCPU = math.NaN()
	}
	r.passRequests = float64(op.counter.Total()) / float64(k)
	r.passWrites = float64(op.counter.Writes()) / float64(k)

	victim := owners[0]
	start = time.Now()
	if err := editDeployment(ctx, victim); err != nil {
		return r, nil, err
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: victim.Name, Namespace: ns}}
	if err := waitSeen(ctx, op, d, func() bool { return d.Spec.Template.Spec.Containers[0].Image == driftImage }); err != nil {
		return r, nil, fmt.Errorf("%s: the drift never reached the operator: %w", w, err)
	}
	op.counter.Reset()
	for r.driftPasses < 10 {
		if _, err := op.reconcileOwner(ctx, victim); err != nil {
			return r, nil, fmt.Errorf("%s: repair: %w", w, err)
		}
		r.driftPasses++
		stored := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(victim), stored); err != nil {
			return r, nil, err
		}
		if stored.Spec.Template.Spec.Containers[0].Image == victim.Spec.Image {
			break
		}
	}
	r.driftTime = time.Since(start)
	r.driftRequests = op.counter.Total()
	return r, owners, nil
}

// heapResult is the operator's heap with the unrelated objects at their base count
// and at ten times that.
type heapResult struct {
	way       way
	unrelated int
	// base and grown are the operator's heap in bytes with unrelated and with ten
	// times as many unrelated Secrets and ConfigMaps.
	base, grown int64
}

// operatorHeap starts way w, converges owners, and returns how much the heap grew
// from before the operator started (HeapAlloc after a full GC, the operator alive).
func operatorHeap(ctx context.Context, w way, owners []*BenchApp) (int64, error) {
	before := heapAlloc()
	op, err := startOperator(w)
	if err != nil {
		return 0, err
	}
	if _, err := settle(ctx, op, owners); err != nil {
		return 0, errors.Join(err, op.stop())
	}
	after := heapAlloc()
	runtime.KeepAlive(op)
	return after - before, op.stop()
}

// heapAlloc returns the live heap after two full garbage collections.
func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// unrelatedPayload is the data of every unrelated Secret and ConfigMap: 2 KiB.
var unrelatedPayload = strings.Repeat("x", 2048)

// createUnrelated creates Secrets and ConfigMaps from index from to to (exclusive) in
// ns, without the operator's label: objects of other applications the operator never
// reads.
func createUnrelated(ctx context.Context, ns string, from, to int) error {
	return parallel(to-from, func(i int) error {
		name := fmt.Sprintf("unrelated-%05d", from+i)
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data: map[string][]byte{"payload": []byte(unrelatedPayload)}}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data: map[string]string{"payload": unrelatedPayload}}
		return errors.Join(env.Client.Create(ctx, s), env.Client.Create(ctx, cm))
	})
}

// measureHeap measures every way's operator heap with benchUnrelated() unrelated
// Secrets and ConfigMaps in another namespace, then with ten times as many. Only one
// operator runs at a time, so each number is that operator's own.
func measureHeap(ctx context.Context, tb testing.TB, owners map[way][]*BenchApp) ([]heapResult, error) {
	u := benchUnrelated()
	ns := env.Namespace(tb)
	if err := createUnrelated(ctx, ns, 0, u); err != nil {
		return nil, err
	}
	out := make([]heapResult, len(ways))
	for i, w := range ways {
		h, err := operatorHeap(ctx, w, owners[w])
		if err != nil {
			return nil, fmt.Errorf("%s: heap: %w", w, err)
		}
		out[i] = heapResult{way: w, unrelated: u, base: h}
	}
	if err := createUnrelated(ctx, ns, u, 10*u); err != nil {
		return nil, err
	}
	for i, w := range ways {
		h, err := operatorHeap(ctx, w, owners[w])
		if err != nil {
			return nil, fmt.Errorf("%s: heap: %w", w, err)
		}
		out[i].grown = h
	}
	return out, nil
}

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in /proc/<pid>/stat:
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// The control plane's processes, children of this test process, found once.
var (
	apiserverProc = &childProcess{name: "kube-apiserver"}
	etcdProc      = &childProcess{name: "etcd"}
)

// apiserverCPUSeconds returns the user plus system CPU time kube-apiserver has used.
func apiserverCPUSeconds() (float64, error) { return apiserverProc.cpuSeconds() }

// controlPlaneCPUSeconds returns the CPU time kube-apiserver and etcd have used together.
func controlPlaneCPUSeconds() (float64, error) {
	a, err1 := apiserverProc.cpuSeconds()
	e, err2 := etcdProc.cpuSeconds()
	return a + e, errors.Join(err1, err2)
}

// childProcess is a child process of this test process, by command name.
type childProcess struct {
	name string
	once sync.Once
	pid  int
	err  error
}

// cpuSeconds returns the user plus system CPU time the process has used.
func (p *childProcess) cpuSeconds() (float64, error) {
	p.once.Do(func() { p.pid, p.err = findChild(p.name) })
	if p.err != nil {
		return 0, p.err
	}
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "stat"))
	if err != nil {
		return 0, err
	}
	fields, err := statFields(data)
	if err != nil {
		return 0, err
	}
	// After the command name: state ppid pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime stime ...
	utime, err1 := strconv.ParseUint(fields[11], 10, 64)
	stime, err2 := strconv.ParseUint(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return float64(utime+stime) / clockTicks, nil
}

// statFields returns the fields of a /proc/<pid>/stat line after the command name.
func statFields(data []byte) ([]string, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, errors.New("malformed stat line")
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 13 {
		return nil, errors.New("short stat line")
	}
	return fields, nil
}

// findChild scans /proc for a child process of this process with the given command
// name.
func findChild(name string) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("find %s: %w", name, err)
	}
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		open := bytes.IndexByte(data, '(')
		closing := bytes.LastIndexByte(data, ')')
		if open < 0 || closing < open {
			continue
		}
		fields, err := statFields(data)
		if err != nil {
			continue
		}
		if string(data[open+1:closing]) == name && fields[1] == self {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no child process named %s", name)
}
