package bench_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// benchConvergeRuns is how many times the report converges every way from creation at
// each size; it shows the median run and the fastest and slowest.
func benchConvergeRuns() int { return envInts("BENCH_CONVERGE_RUNS", []int{3})[0] }

// naiveConvergeRuns caps naive SSA's convergence runs: it is compared with the others by
// its median only (it costs several times their time), not round by round.
const naiveConvergeRuns = 3

// convergence is one way's convergence of a fresh workload, from the owners' creation
// until the way's steady state (settle).
type convergence struct {
	passes   int
	time     time.Duration
	requests int
	writes   int
	// cpu is kube-apiserver's CPU time over the convergence; NaN when /proc cannot tell.
	cpu float64
	// work is what kube-apiserver counted of its work over the convergence (unknownWork
	// when its metrics could not be read).
	work serverWork
}

// measureConvergence converges a fresh workload of n owners runs times with every way,
// each time in a new namespace with a new operator, and returns each way's runs (naive
// SSA at most naiveConvergeRuns). Each run starts once the control plane is idle
// (waitIdle). Naive SSA, which costs several times the others, runs all its runs
// first, so that neither compared way always follows it; the SDK applier and
// CreateOrUpdate then alternate which of them goes first (applier first in the odd
// rounds, CreateOrUpdate in the even ones), so that each follows the other, and
// itself, equally often and neither gains from the control plane getting faster or
// slower over the rounds.
func measureConvergence(ctx context.Context, tb testing.TB, n, runs int) (map[way][]convergence, error) {
	out := map[way][]convergence{}
	run := func(w way, i int) error {
		c, err := convergeOnce(ctx, tb, w, n)
		if err != nil {
			return fmt.Errorf("%s: converge %d owners, run %d: %w", w, n, i+1, err)
		}
		tb.Logf("%s, %d owners, run %d: %d passes, %d requests (%d writes), %s, kube-apiserver %s; "+
			"kube-apiserver counted %s requests, %s etcd requests, %s watch events (%s)",
			w, n, i+1, c.passes, c.requests, c.writes, dur(c.time), cpu(c.cpu),
			num(c.work.requests), num(c.work.etcd), num(c.work.watchEvents), kibOrNA(c.work.watchBytes))
		out[w] = append(out[w], c)
		return nil
	}
	for i := range min(runs, naiveConvergeRuns) {
		if err := run(naiveSSA, i); err != nil {
			return nil, err
		}
	}
	for i := range runs {
		order := []way{sdkApplier, createOrUpdate}
		if i%2 == 1 {
			order = []way{createOrUpdate, sdkApplier}
		}
		for _, w := range order {
			if err := run(w, i); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// convergeOnce creates n owners in a new namespace, waits for the control plane to be
// idle, and measures a new operator of way w converging them. It then deletes the owners
// and their children again, so that the runs do not grow the control plane's store (and
// its cost) from one to the next, nor the caches of the operators measured later.
func convergeOnce(ctx context.Context, tb testing.TB, w way, n int) (c convergence, err error) {
	op, err := startOperator(w)
	if err != nil {
		return c, err
	}
	ns := env.Namespace(tb)
	// Deferred calls run last first: the operator stops, then its workload goes.
	defer func() { err = errors.Join(err, deleteWorkload(ctx, ns)) }()
	defer func() { err = errors.Join(err, op.stop()) }()
	owners, err := createOwners(ctx, ns, n)
	if err != nil {
		return c, err
	}
	if err := waitIdle(ctx, tb); err != nil {
		return c, err
	}
	w0, werr0 := readServerWork(ctx)
	op.counter.Reset()
	cpu0, err0 := apiserverCPUSeconds()
	start := time.Now()
	if c.passes, err = settle(ctx, op, owners); err != nil {
		return c, err
	}
	c.time = time.Since(start)
	cpu1, err1 := apiserverCPUSeconds()
	c.cpu = cpu1 - cpu0
	if err0 != nil || err1 != nil {
		c.cpu = math.NaN()
	}
	w1, werr1 := readServerWork(ctx)
	c.work = w1.sub(w0)
	if werr := errors.Join(werr0, werr1); werr != nil {
		tb.Logf("%s: kube-apiserver's counters unread: %v", w, werr)
		c.work = unknownWork
	}
	c.requests, c.writes = op.counter.Total(), op.counter.Writes()
	return c, nil
}

// deleteWorkload deletes the owners, then every child kind in ns through the admin
// client, one collection at a time (envtest runs no garbage collector).
func deleteWorkload(ctx context.Context, ns string) error {
	var errs []error
	for _, obj := range append([]client.Object{&BenchApp{}}, childObjects()...) {
		errs = append(errs, env.Client.DeleteAllOf(ctx, obj, client.InNamespace(ns)))
	}
	return errors.Join(errs...)
}

// Idle: kube-apiserver and etcd together below idleCPU of one CPU over two windows of
// idleWindow in a row; waitIdle gives up waiting (and says so in the log) after idleWait.
const (
	idleCPU    = 0.10
	idleWindow = 500 * time.Millisecond
	idleWait   = time.Minute
)

// waitIdle waits until kube-apiserver and etcd have finished the work earlier steps
// left them (watch fan-out, compaction, garbage collection), so that a measurement does
// not pay for its predecessor's. Where /proc cannot tell, it returns at once.
func waitIdle(ctx context.Context, tb testing.TB) error {
	deadline := time.Now().Add(idleWait)
	quiet := 0
	last, err := controlPlaneCPUSeconds()
	if err != nil {
		return nil
	}
	for quiet < 2 {
		if time.Now().After(deadline) {
			tb.Logf("the control plane did not go idle within %s; measuring anyway", idleWait)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(idleWindow):
		}
		now, err := controlPlaneCPUSeconds()
		if err != nil {
			return nil
		}
		if now-last < idleCPU*idleWindow.Seconds() {
			quiet++
		} else {
			quiet = 0
		}
		last = now
	}
	return nil
}

// median returns the median of xs (the lower middle one of an even count) by less, and
// the smallest and largest.
func median[T any](xs []T, less func(a, b T) bool) (mid, lo, hi T) {
	s := slices.Clone(xs)
	slices.SortFunc(s, func(a, b T) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
	return s[(len(s)-1)/2], s[0], s[len(s)-1]
}

// setConvergence fills r's convergence columns from its way's runs: the passes,
// requests and kube-apiserver's counted work of the run of the median time, that time
// and the fastest and slowest, and the median kube-apiserver CPU time.
func setConvergence(r *result, runs []convergence) {
	mid, lo, hi := median(runs, func(a, b convergence) bool { return a.time < b.time })
	r.convergeRuns = len(runs)
	r.convergePasses, r.convergeTime = mid.passes, mid.time
	r.convergeRequests, r.convergeWrites = mid.requests, mid.writes
	r.convergeWork = mid.work
	r.convergeFastest, r.convergeSlowest = lo.time, hi.time
	cpu, _, _ := median(runs, func(a, b convergence) bool { return a.cpu < b.cpu || math.IsNaN(b.cpu) && !math.IsNaN(a.cpu) })
	r.convergeCPU = cpu.cpu
}

func TestSetConvergence(t *testing.T) {
	nan := math.NaN()
	run := func(d time.Duration, cpu float64, passes int) convergence {
		return convergence{passes: passes, time: d, requests: 10 * passes, writes: 5 * passes, cpu: cpu,
			work: serverWork{requests: float64(11 * passes), etcd: float64(7 * passes)}}
	}
	cases := map[string]struct {
		runs []convergence
		want result
	}{
		"one run": {
			runs: []convergence{run(2*time.Second, 1.5, 2)},
			want: result{convergeRuns: 1, convergePasses: 2, convergeTime: 2 * time.Second, convergeFastest: 2 * time.Second,
				convergeSlowest: 2 * time.Second, convergeRequests: 20, convergeWrites: 10, convergeCPU: 1.5,
				convergeWork: serverWork{requests: 22, etcd: 14}},
		},
		"the median run's passes, requests and server work, the median CPU of its own": {
			runs: []convergence{run(5*time.Second, 1, 3), run(3*time.Second, 4, 2), run(4*time.Second, 2, 4)},
			want: result{convergeRuns: 3, convergePasses: 4, convergeTime: 4 * time.Second, convergeFastest: 3 * time.Second,
				convergeSlowest: 5 * time.Second, convergeRequests: 40, convergeWrites: 20, convergeCPU: 2,
				convergeWork: serverWork{requests: 44, etcd: 28}},
		},
		"an even count takes the lower middle": {
			runs: []convergence{run(4*time.Second, 3, 1), run(1*time.Second, 1, 2), run(2*time.Second, 2, 3), run(3*time.Second, 4, 4)},
			want: result{convergeRuns: 4, convergePasses: 3, convergeTime: 2 * time.Second, convergeFastest: time.Second,
				convergeSlowest: 4 * time.Second, convergeRequests: 30, convergeWrites: 15, convergeCPU: 2,
				convergeWork: serverWork{requests: 33, etcd: 21}},
		},
		"a CPU /proc could not tell sorts last": {
			runs: []convergence{run(time.Second, nan, 1), run(2*time.Second, 3, 1), run(3*time.Second, 1, 1)},
			want: result{convergeRuns: 3, convergePasses: 1, convergeTime: 2 * time.Second, convergeFastest: time.Second,
				convergeSlowest: 3 * time.Second, convergeRequests: 10, convergeWrites: 5, convergeCPU: 3,
				convergeWork: serverWork{requests: 11, etcd: 7}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got result
			setConvergence(&got, tc.runs)
			if got != tc.want {
				t.Errorf("setConvergence:\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestConvergeTimes(t *testing.T) {
	one := result{convergeRuns: 1, convergeTime: 1500 * time.Millisecond}
	three := result{convergeRuns: 3, convergeTime: 2 * time.Second, convergeFastest: time.Second, convergeSlowest: 3 * time.Second}
	if got, want := convergeTimes(one), dur(one.convergeTime); got != want {
		t.Errorf("one run: %q, want %q", got, want)
	}
	if got, want := convergeTimes(three), dur(2*time.Second)+" ("+dur(time.Second)+"–"+dur(3*time.Second)+")"; got != want {
		t.Errorf("three runs: %q, want %q", got, want)
	}
}

// timeRatio is the SDK applier's convergence time over CreateOrUpdate's, round by round.
type timeRatio struct {
	owners int
	// rounds is how many rounds both ways ran; mid, lo and hi are the median (the lower
	// middle one of an even count), smallest and largest of the rounds' ratios.
	rounds      int
	mid, lo, hi float64
	// p is the two-sided p-value of the rounds' ratios under the Wilcoxon signed-rank
	// test (signedRankP): how often rounds of two equally fast ways would lean to one
	// side at least this far. A small p (below 0.05) says one way is faster; a large
	// one says the rounds cannot tell them apart.
	p float64
}

// pairedRatio divides the SDK applier's time by CreateOrUpdate's in each round of
// measureConvergence (the two ran back to back, so that the control plane's drift over
// the rounds, which moves both, cancels), and returns the median and range of those
// ratios and their signed-rank p-value. Rounds only one of the two ran are left out;
// none at all gives zero rounds.
func pairedRatio(owners int, runs map[way][]convergence) timeRatio {
	a, c := runs[sdkApplier], runs[createOrUpdate]
	var rs, logs []float64
	for i := range min(len(a), len(c)) {
		if c[i].time > 0 && a[i].time > 0 {
			r := float64(a[i].time) / float64(c[i].time)
			rs, logs = append(rs, r), append(logs, math.Log(r))
		}
	}
	r := timeRatio{owners: owners, rounds: len(rs), p: 1}
	if len(rs) > 0 {
		r.mid, r.lo, r.hi = median(rs, func(x, y float64) bool { return x < y })
		r.p = signedRankP(logs)
	}
	return r
}

// signedRankP is the exact two-sided p-value of the Wilcoxon signed-rank test that
// the paired differences ds are centred on zero. Zero differences are dropped; equal
// magnitudes share the mean of their ranks. The null distribution of the positive
// ranks' sum is counted exactly over every sign assignment (ranks doubled, so that
// shared half ranks stay integers). No differences at all give 1.
func signedRankP(ds []float64) float64 {
	var mags []float64
	var pos []bool
	for _, d := range ds {
		if d != 0 {
			mags, pos = append(mags, math.Abs(d)), append(pos, d > 0)
		}
	}
	n := len(mags)
	if n == 0 {
		return 1
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(mags[i], mags[j]) })
	// rank2[i] is twice the rank of difference i: ties i..j-1 (1-based ranks i+1..j)
	// share (i+1+j)/2, doubled i+1+j.
	rank2 := make([]int, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && mags[order[j]] == mags[order[i]] {
			j++
		}
		for k := i; k < j; k++ {
			rank2[order[k]] = i + 1 + j
		}
		i = j
	}
	total, w := 0, 0
	for i, r := range rank2 {
		total += r
		if pos[i] {
			w += r
		}
	}
	// ways[s]: how many of the 2^n sign assignments give the positive ranks the sum s.
	ways := make([]float64, total+1)
	ways[0] = 1
	for _, r := range rank2 {
		for s := total; s >= r; s-- {
			ways[s] += ways[s-r]
		}
	}
	var below, above, all float64
	for s, k := range ways {
		all += k
		if s <= w {
			below += k
		}
		if s >= w {
			above += k
		}
	}
	return min(1, 2*min(below, above)/all)
}

// String renders r as "0.97 (0.85–1.10) over 6 rounds, p = 0.56".
func (r timeRatio) String() string {
	if r.rounds == 0 {
		return "n/a"
	}
	if r.rounds == 1 {
		return fmt.Sprintf("%.2f (1 round)", r.mid)
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f) over %d rounds, p = %.2f", r.mid, r.lo, r.hi, r.rounds, r.p)
}

// verdict says in words what r's rounds show: which way converged faster, or that
// the rounds cannot tell them apart (p of 0.05 or more).
func (r timeRatio) verdict() string {
	switch {
	case r.rounds < 2:
		return "too few rounds to compare"
	case r.p >= 0.05:
		return "the rounds cannot tell the two apart"
	case r.mid < 1:
		return "the SDK applier converged faster"
	default:
		return "CreateOrUpdate converged faster"
	}
}

func TestSignedRankP(t *testing.T) {
	cases := map[string]struct {
		ds   []float64
		want float64
	}{
		// All 5 one way: only 1 of the 32 sign assignments reaches the top sum, and
		// one the bottom.
		"five of five above": {ds: []float64{0.1, 0.2, 0.3, 0.4, 0.5}, want: 2.0 / 32},
		"six of six below":   {ds: []float64{-0.1, -0.2, -0.3, -0.4, -0.5, -0.6}, want: 2.0 / 64},
		// Ranks 1..4 signed + - + -: the positive sum 4; of the 16 assignments 7 sum to
		// 4 or less, 11 to 4 or more.
		"alternating signs": {ds: []float64{0.1, -0.2, 0.3, -0.4}, want: 14.0 / 16},
		// Equal magnitudes share rank 1.5: +a -a sums to the middle.
		"a tie split both ways": {ds: []float64{0.2, -0.2}, want: 1},
		"zeros are dropped":     {ds: []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0}, want: 2.0 / 32},
		"nothing to test":       {ds: []float64{0, 0}, want: 1},
		"none":                  {want: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := signedRankP(tc.ds); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("signedRankP(%v) = %v, want %v", tc.ds, got, tc.want)
			}
		})
	}
}

func TestTimeRatioVerdict(t *testing.T) {
	cases := map[string]struct {
		r    timeRatio
		want string
	}{
		"one round":       {r: timeRatio{rounds: 1, mid: 0.5, p: 1}, want: "too few rounds to compare"},
		"large p":         {r: timeRatio{rounds: 10, mid: 0.9, p: 0.3}, want: "the rounds cannot tell the two apart"},
		"applier faster":  {r: timeRatio{rounds: 10, mid: 0.9, p: 0.01}, want: "the SDK applier converged faster"},
		"applier slower":  {r: timeRatio{rounds: 10, mid: 1.1, p: 0.049}, want: "CreateOrUpdate converged faster"},
		"p at the border": {r: timeRatio{rounds: 10, mid: 1.1, p: 0.05}, want: "the rounds cannot tell the two apart"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tc.r.verdict(); got != tc.want {
				t.Errorf("verdict() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPairedRatio(t *testing.T) {
	at := func(ds ...time.Duration) []convergence {
		out := make([]convergence, len(ds))
		for i, d := range ds {
			out[i] = convergence{time: d}
		}
		return out
	}
	s := time.Second
	cases := map[string]struct {
		runs map[way][]convergence
		want timeRatio
		text string
	}{
		"round by round, not median over median": {
			// Medians 4 s vs 3 s would say 1.33; each round the applier took 0.8 to
			// 1.25 of CreateOrUpdate's time.
			runs: map[way][]convergence{sdkApplier: at(4*s, 5*s, 2*s), createOrUpdate: at(5*s, 4*s, 2*s)},
			// One round slower, one faster by as much, one even: p = 1.
			want: timeRatio{owners: 50, rounds: 3, mid: 1, lo: 0.8, hi: 1.25, p: 1},
			text: "1.00 (0.80–1.25) over 3 rounds, p = 1.00",
		},
		"six rounds all one way": {
			runs: map[way][]convergence{
				sdkApplier:     at(9*s, 8*s, 7*s, 6*s, 5*s, 4*s),
				createOrUpdate: at(10*s, 10*s, 10*s, 10*s, 10*s, 10*s)},
			want: timeRatio{owners: 50, rounds: 6, mid: 0.6, lo: 0.4, hi: 0.9, p: 2.0 / 64},
			text: "0.60 (0.40–0.90) over 6 rounds, p = 0.03",
		},
		"a round only one way ran is left out": {
			runs: map[way][]convergence{sdkApplier: at(2*s, 9*s), createOrUpdate: at(4 * s)},
			want: timeRatio{owners: 50, rounds: 1, mid: 0.5, lo: 0.5, hi: 0.5, p: 1},
			text: "0.50 (1 round)",
		},
		"no rounds": {
			runs: map[way][]convergence{naiveSSA: at(s)},
			want: timeRatio{owners: 50, p: 1},
			text: "n/a",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := pairedRatio(50, tc.runs)
			if got != tc.want {
				t.Errorf("pairedRatio = %+v, want %+v", got, tc.want)
			}
			if got.String() != tc.text {
				t.Errorf("String() = %q, want %q", got.String(), tc.text)
			}
		})
	}
}
