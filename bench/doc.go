// Package bench measures, side by side and on one envtest control plane, what it costs
// to keep the same workload converged three ways: naive Server-Side Apply, the SDK's
// Applier, and a controllerutil.CreateOrUpdate controller. It holds only tests,
// benchmarks and the report generator; there is nothing to import.
//
// # The workload
//
// N owners (BenchApp, a small custom resource installed from testdata/crds), each with
// eight children: a Deployment, a (headless) Service, a ConfigMap, a Secret, a
// PodDisruptionBudget, a HorizontalPodAutoscaler, a NetworkPolicy and a ServiceAccount.
// A pass ensures the children of every owner, four owners at a time. The three ways:
//
//   - naive SSA: apply.EnsureObject through a plain, uncached client. EnsureObject
//     reads the existing object for its ownership check, so every child costs a GET and
//     an apply PATCH on every pass, converged or not.
//   - SDK applier: apply.EnsureObject through apply.NewApplier over a manager's cached
//     client, with the recommended cache options (apply.CacheOptions and
//     reconcile.UncachedObjects()). Reads come from the informers; a converged child is
//     skipped without a request.
//   - CreateOrUpdate: controllerutil.CreateOrUpdate through a manager's cached client
//     (default cache options), with a mutate function that copies only the fields it
//     sets, so that a converged object compares equal and is not written.
//
// # What is measured
//
//   - API requests and writes per converged pass over all owners (every HTTP request
//     the operator sends, its informers' included), counted with
//     testenv.RequestCounter;
//   - time and requests to converge all owners from their creation: each way converges
//     a fresh workload BENCH_CONVERGE_RUNS times (naive SSA at most 3) with a new
//     operator, every run starting once kube-apiserver and etcd are idle (naive SSA's
//     runs first, then the SDK applier and CreateOrUpdate alternating which goes
//     first), and the report shows the median
//     run with the fastest and slowest, what kube-apiserver counted of its own work in
//     it (its /metrics: requests served, etcd requests, watch events and their bytes),
//     and the SDK applier's time over CreateOrUpdate's round by round (the two ran back
//     to back, so the control plane's drift over the rounds cancels): median, range and
//     the exact two-sided p-value of the Wilcoxon signed-rank test, below 0.05 naming
//     the faster way and otherwise saying the rounds cannot tell the two apart;
//   - passes, requests and time to repair a drifted child (a kubectl-style Update of
//     one applied field), once the operator's informer has seen the edit;
//   - kube-apiserver CPU seconds per converged pass: user plus system time of the
//     kube-apiserver child process of the test binary, read from /proc/<pid>/stat
//     (Linux only; elsewhere reported as n/a), over passes that start once the
//     control plane is idle after the convergence;
//   - the operator's heap (runtime.MemStats.HeapAlloc after GC) as unrelated Secrets
//     and ConfigMaps in another namespace grow tenfold.
//
// TestConvergedPassSendsNoRequests asserts, with the request counter, that a converged
// pass of the SDK applier over the workload sends no request at all, and
// TestDriftRepairedInOnePass that an edit is repaired by the first pass after the
// informer saw it. No test asserts a duration.
//
// # Sharding
//
// The report also sets side by side, over N ShardApps (a custom resource of
// testdata/crds with one ConfigMap child, reconciled by a multicluster.CRReconciler on
// multicluster.RunOperator), one replica; three replicas sharded (OperatorOptions.Sharded)
// with the API server's shardSelector (ShardSelectors, on a control plane of its own
// with the ShardedListAndWatch feature gate); and three sharded replicas filtering on the
// client. The server-side replicas also select their ConfigMap children by the bucket
// label their Applier stamps (package shard, "Children"); the client-side ones hold every
// child. Per replica it counts, with a transport wrapper on the replica's rest.Config,
// the watch events (JSON or protobuf frames) and bytes the API server sent for the
// ShardApp and ConfigMap collections, and measures the heap its cache holds for the
// ShardApps and for the ConfigMaps (their sum: the operator's cache heap), the time until
// every ShardApp is Ready, the requests while converging and of a converged pass and,
// for a replica cut off from the API server and stopped, the time until the others'
// active ranges cover the whole hash space. TestShardedReplicasReceiveTheirSlice asserts,
// by counts only (BENCH_SHARD_CRS ShardApps, 30 when unset), that each server-side
// replica receives fewer ShardApp watch events and caches fewer ShardApps and children
// than the single replica, that the server-side replicas hold each child exactly once
// between them, that each client-side one caches all of them, and that a converged pass
// sends no request.
//
// # Running it
//
// `make bench` runs the Go benchmarks of every package (BenchmarkConvergedPass and
// BenchmarkConverge here report requests/op, writes/op and apiserver-cpu-s/op) and then
// the report:
//
//	go test ./bench -run '^TestReport$' -count=1 -timeout 60m -v -args -report
//
// which writes docs/bench.md (the tables), docs/bench.png (grouped bar charts with axes,
// values and a legend, drawn with gonum.org/v1/plot) and the table between the bench
// markers of README.md. The environment sets the size: BENCH_OWNERS (comma-separated
// owner counts, default 50), BENCH_PASSES (converged passes averaged, default 3),
// BENCH_CONVERGE_RUNS (convergences from creation of each way, default 3; `make bench`
// sets 20, an even count, so that the SDK applier and CreateOrUpdate go first equally
// often), BENCH_UNRELATED (unrelated Secrets, and as many ConfigMaps, before the tenfold
// growth; default 200) and BENCH_SHARD_CRS (ShardApps of the sharding comparison,
// default 300; `make bench` sets 3000, the full size).
package bench
