// Package testenv is the SDK's test kit's control plane: one real kube-apiserver and
// etcd per test package (envtest), with the upstream CRDs of the operators the SDK
// integrates with, a scheme that knows their Go types, a fresh namespace per test,
// optional real controllers, target clusters, users and request counting. Simulators,
// fault injection and the test world live in subpackages (see below).
//
// Use it from TestMain, so that the whole package shares one control plane:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Main(m, testenv.Options{}, &env))
//	}
//
//	func TestSomething(t *testing.T) {
//		ns := env.Namespace(t) // created now, deleted when the test ends
//		...
//	}
//
// # Binaries
//
// envtest needs kube-apiserver and etcd. The kit takes them from $KUBEBUILDER_ASSETS
// and, when that is unset, from the cache directory that
// `go run github.com/c5c3/reconciler-sdk/cmd/envtest` fills
// (${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest/<version>; hack/envtest.sh runs
// it in this repository).
// When neither holds them, [Start] fails with an error that says how to get them: the
// kit never skips a test because the binaries are missing.
//
// # CRDs
//
// The upstream CRDs (External Secrets Operator, cert-manager, mariadb-operator, Gateway
// API, VerticalPodAutoscaler) are read from the Go module cache at the versions pinned
// in this package ([DefaultCRDs]); `go mod download` fetches them on first use, so the
// kit works from any module that imports the SDK, not only from this repository. Add
// your own operator's CRDs with [Options.CRDPaths].
//
// An optional child's flow has an "API not installed" branch. [Env.RemoveCRDs] takes
// an API away for one test and [Env.InstallCRDs] adds one for one test; both wait until
// discovery (and, on install, the new storage) has caught up, and undo themselves when
// the test ends, so the shared control plane is the same for the next test.
//
// # Admission webhooks
//
// [Options.WebhookPaths] installs webhook configuration manifests (controller-gen's
// config/webhook) with their clientConfig rewritten to a local address and a generated
// CA. A manager from [Env.StartManager] serves webhooks there and returns once the
// server listens; register the handlers on it (ctrl.NewWebhookManagedBy(mgr) or
// mgr.GetWebhookServer().Register) and the real API server calls them on every
// matching request, so defaulting and validation are tested as users meet them. A test
// that runs the operator's own main function serves them with the address, port and
// certificates of [Env.WebhookServerOptions] (or the certificate directory and port
// [Env.WebhookFlags] returns for operator.Options) and waits for its server with
// [Env.WaitForWebhookServer].
//
// # Simulators, faults and the test world
//
// Plain envtest runs no controllers. The focused subpackages stand in for them and
// break the API on purpose:
//
//   - [github.com/c5c3/reconciler-sdk/testenv/simulate] writes the status the missing
//     controllers would write (Deployments, Jobs, cert-manager, Gateway API, External
//     Secrets with an in-memory secret backend, mariadb-operator);
//   - [github.com/c5c3/reconciler-sdk/testenv/world] plays every dependency of a custom
//     resource at once, idempotently: world.World.Play is a conformance MakeReady and
//     world.World.Hook a hook for [ExpectConditionWhile];
//   - [github.com/c5c3/reconciler-sdk/testenv/faults] fails exactly one chosen API call
//     (faults.Injector) and runs a scenario under every verb, call and fault
//     (faults.Matrix).
//
// The names these had in package testenv (MarkDeploymentAvailable, SecretBackend,
// FaultInjector, FaultMatrix, ...) are deprecated aliases for one release.
//
// # Stand-ins, samples and golden files
//
// [StandIn] is a local HTTP server answering what a health check would find at a
// service (an [Answer] per path), closed when the test ends; [ReadSample] reads a
// config/samples manifest strictly; [Eventually] polls a condition of the test's own;
// package [github.com/c5c3/reconciler-sdk/testenv/golden] compares rendered output with
// golden files (go test -update rewrites them). [StepReconciler] and [StepTarget] build
// a reconciler whose steps a test runs one by one through [reconcile.Pipeline.RunStep].
//
// # Converged passes
//
// A pass through an Applier over a manager's cache should, once converged, send no
// request at all (or only the reads it makes past the cache). [Env.StartManager] starts
// a manager on the control plane with test defaults (the Env's scheme, no metrics or
// probe server) and a [RequestCounter] of every request it sends; [ExpectQuiet] runs a
// pass until one records no change through apply.WithWrites and sends exactly the
// expected number of GET requests and nothing else, then asserts three more such
// passes; [Env.StartApplier] is the usual setup in one call (a manager whose cache sees
// one namespace, an apply.Applier over it, the counter); [WriteStrings] renders what a
// pass wrote for cmp.Diff; [FieldManagers] lists an object's managedFields as
// "manager/Operation":
//
//	mgr, counter := env.StartManager(t, ctrl.Options{
//		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
//	})
//	a := apply.NewApplier(mgr.GetClient(), apply.ApplierOptions{FieldManager: "my-operator"})
//	testenv.ExpectQuiet(t, counter, 0, func(ctx context.Context) error {
//		return apply.EnsureObject(ctx, a, env.Scheme, owner, desired(ns), apply.FieldManager)
//	})
//
// [Env.StartOperator] is the same for an operator as its main function runs it
// (multicluster.RunOperator): the setup function registers the controllers, the test
// defaults fill the zero options, the cache is scoped with Namespace, and it returns the
// manager, its resolver and the request counter once the cache has synced:
//
//	op := env.StartOperator(t, testenv.OperatorOptions{OperatorOptions: multicluster.OperatorOptions{
//		FieldManager: "my-operator", Namespace: ns}},
//		func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
//			r, err := controller.NewReconciler(resolver, controller.DefaultOptions())
//			if err != nil {
//				return err
//			}
//			return r.SetupWithManager(ctx, mgr)
//		})
//
// [Env.RunManager] is StartManager without a testing.TB: it returns a stop function
// instead (see its Example). In the snippets of this documentation, env is the test
// package's *Env from TestMain (above), ns a namespace from env.Namespace(t), and owner,
// desired and newOwner the test's own fixtures.
//
// # Waiting for a current condition
//
// [ExpectCondition] (and [WaitForCondition], which returns an error) polls an object
// until a condition of a type has the wanted status for the object's current generation
// (observedGeneration equals metadata.generation), for at most [ConditionTimeout]. It
// reads status.conditions generically, so it works for any CRD whose status carries
// metav1.Conditions; on timeout the message lists the object's generation and every
// condition, stale ones marked. [ExpectConditionWhile] and [WaitForConditionWhile] run a
// hook before every read, so the test plays the dependencies while it waits:
//
//	w := world.New(env.Client, world.WithSecret("app/admin", map[string][]byte{"password": pw}))
//	testenv.ExpectConditionWhile(t, env.Client, memo, "Ready", metav1.ConditionTrue, w.Hook(memo))
//
// # A converged pass writes nothing
//
// [ExpectUnchanged] asserts it by stored state: it snapshots the resourceVersions of the
// objects the owner controls ([ControlledVersions], of the kinds you list, in the owner's
// namespace), runs the pass, and names every object whose resourceVersion moved, that
// appeared or that disappeared. [ExpectQuiet] asserts it by request count. Run both:
// a no-op apply keeps the resourceVersion (ExpectUnchanged passes) but is still a
// request (ExpectQuiet fails), and a cache that lags may hide a real write from a
// count of requests that is otherwise right.
//
//	testenv.ExpectUnchanged(t, env.Client, owner, pass, &corev1.ConfigMapList{}, &appsv1.DeploymentList{})
//
// What each SDK helper sends on a converged pass (taken from each package's
// documentation), through an apply.Applier over a manager's cached client, and through
// a plain (uncached) client:
//
//	helper                             Applier over a cache        plain client
//	apply.EnsureObject                 0                           1 GET, 1 no-op PATCH
//	config.CreateImmutableConfigMap    0                           1 GET, 1 LIST
//	config.CreateImmutableSecret       0 (1 GET if Secrets are     1 GET, 1 LIST
//	                                   read past the cache)
//	deployment.EnsureDeployment        0                           2 GET, 1 no-op PATCH
//	other deployment helpers           0 (1 discovery GET per      1 GET, 1 no-op PATCH
//	                                   ReconcileVPA without VPA)   per object
//	job.RunJob (completed)             0                           1 GET
//	job.EnsureCronJob                  0                           1 GET, 1 no-op PATCH
//	secrets.EnsureGeneratedSecret      0 (1 GET if Secrets are     see package secrets
//	                                   read past the cache)
//	database flows (all Ready)         0 (1 GET of a password      see package database
//	                                   Secret without the label)
//	reconcile pass (finalizer, status) 0                           see package reconcile
//
// The Applier's cache (apply.CacheOptions) holds the Secrets that carry the operator's
// managed-by label (those the helpers create through the Applier, those secrets.Sync
// has ESO write): reading them costs nothing. Each read of a Secret without the label
// (a user's) is one GET per pass through the Applier's APIReader, and a manager that
// reads Secrets past its cache (an operator without an Applier adds them to
// reconcile.UncachedObjects, which itself names only Pods and ControllerRevisions) pays
// one GET per Secret read; package secrets, "Reads, caches and requests", has the rule.
// So a converged pass through an Applier over a cache expects ExpectQuiet(t, counter,
// 0, ...) (or the number of those reads), and ExpectUnchanged on the same pass.
//
// # Extending the scheme
//
// [Options.AddToScheme] adds your API types to the kit's scheme ([NewScheme]) and
// [Options.Logger] is the logger Main gives controller-runtime (the zero value discards
// its lines and quiets its "log.SetLogger(...) was never called" warning), so a TestMain
// needs no scheme or logger code:
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{memov1.AddToScheme},
//			CRDPaths: []string{"../config/crd/bases"}}, &env))
//	}
//
// [Options.Scheme] replaces the kit's scheme instead (AddToScheme then adds to it);
// [NewSchemeWith] returns NewScheme plus your types for code that builds its own client.
//
// # Objects being deleted
//
// [Env.CreateBeingDeleted] creates an object held by [HoldFinalizer] and starts its
// deletion, so that a test meets it with a deletionTimestamp; [Env.DeleteHeld] does the
// same for an object the test created with a finalizer of its own. Both release the
// finalizers when the test ends; [Env.ReleaseFinalizers] lets the object go earlier.
// They need a testing.TB, so they have no runnable Example; in a test:
//
//	cm := env.CreateBeingDeleted(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: ns}})
//	// cm.GetDeletionTimestamp() != nil: run the pass that must handle it
//
// ExpectQuiet, ExpectUnchanged and ExpectCondition need a testing.TB as well; their
// runnable counterparts are the Examples of [Env.RunManager], [WaitForCondition] and
// [ControlledVersions].
//
// # Target clusters
//
// An operator that writes a CR's children to a target cluster registered through the
// kubeconfig provider of sigs.k8s.io/multicluster-runtime (providers/kubeconfig) is
// tested on two control planes: the package's env from TestMain is the management
// cluster, and a second [Env], started in the test, is the target. The target needs no
// upstream CRDs unless the children are of those kinds, and starts faster without them:
//
//	target, err := testenv.Start(testenv.Options{CRDSources: []testenv.CRDSource{}})
//	if err != nil {
//		t.Fatal(err)
//	}
//	t.Cleanup(func() { _ = target.Stop() })
//	target.RegisterTarget(t, env, "multicluster-system", "east", ns)
//
// [Env.RegisterTarget] creates, on the management env, the kubeconfig Secret the
// provider reads (multicluster-system/east, [KubeconfigSecretLabel], a cluster-admin
// kubeconfig under [KubeconfigSecretKey], the namespaces allowed to use it) and deletes
// it when the test ends; the operator's manager runs on env.Config with
// kubeconfig.New(kubeconfig.Options{Namespace: "multicluster-system"}), and the test
// reads the children with target.Client. [Env.StopAPIServer] makes the target stop
// answering (connection refused, etcd keeps the data) and [Env.RestartAPIServer] brings
// it back on the same address and certificates; the package's targetCluster Example
// does all of this without a testing.TB.
//
// # Real controllers
//
// With [Options.Controllers] the kit runs real controllers next to the control plane:
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Main(m, testenv.Options{Controllers: true}, &env))
//	}
//
// It starts them after all CRDs are installed (the garbage collector discovers new
// resource types only every 30 s):
//
//   - kube-controller-manager with the garbage collector and the Deployment,
//     ReplicaSet, Job and namespace controllers ([KubeControllerManagerControllers]),
//     without leader election or serving port, as cluster admin;
//   - kube-scheduler;
//   - kwok with one fake Node ([FakeNodeName], annotated [FakeNodeAnnotation] with
//     value fake; 64 CPUs, 256Gi, 1000 pods) and the Stage documents of [KWOKStages],
//     read from the module cache: scheduled pods turn Running and Ready at once, pods owned by a Job
//     then turn Succeeded, deleted pods go away. The kit lifts the Node's
//     node.kubernetes.io/not-ready taint once kwok reports it Ready, since no
//     node-lifecycle controller runs.
//
// So deleting an owner really reclaims its dependents (Deployment, ReplicaSets, pods),
// a Deployment becomes Available through real ReplicaSets and pods, a pod-template
// change rolls out, and a Job completes. [Start] returns only when the Node is Ready and
// a probe owner/child pair shows garbage collection working (bounded by two minutes; the
// error quotes each process's log). Each process runs in its own process group with its
// output in a temporary log file ([Env.Processes]); [Env.Stop] stops them (SIGTERM,
// SIGKILL after 5 s) before the control plane, also after a failed start, and on Linux
// the kernel kills them if the test binary dies without Stop.
//
// kube-controller-manager, kube-scheduler and kwok must sit in the assets directory next
// to kube-apiserver; cmd/envtest builds them (kwok at [KWOKVersion]). Without them
// [Start] fails with [ErrNoControllerBinaries]; it never skips. The API server runs
// without the ServiceAccount admission plugin (envtest's default), so pods need no
// ServiceAccount and kube-controller-manager runs no token or service-account
// controller and needs no signing key.
//
// Cost (BenchmarkStart, 2 cores): about 1 s more per test package than plain (7.8 s
// against 6.8 s) and about 215 MiB resident for the three processes. Namespace
// deletion completes, but takes several seconds: never wait for it.
//
// What it cannot do: there are no containers. Images are never pulled, commands never
// run, probes never execute and every pod is Ready as soon as it is scheduled; a Job's
// pods always succeed. A test that needs a health endpoint must serve its own HTTP
// stand-in (e.g. net/http/httptest) and point the code under test at it. There is one
// node, no kubelet, no kube-proxy, no EndpointSlices, no Service traffic and no DNS.
package testenv
