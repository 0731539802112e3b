package multicluster_test

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/multicluster"
	sdkoperator "github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// seen records the requests a trivial reconciler got.
type seen struct {
	mu   sync.Mutex
	keys map[client.ObjectKey]bool
}

func (s *seen) Reconcile(_ context.Context, req ctrl.Request) (ctrl.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[req.NamespacedName] = true
	return ctrl.Result{}, nil
}

func (s *seen) has(key client.ObjectKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[key]
}

// operatorOpts are the options of an operator under test on env for namespace ns,
// without leader election (a local run).
func operatorOpts(ns string) multicluster.OperatorOptions {
	opts := multicluster.DefaultOperatorOptions()
	opts.FieldManager = "gadget-operator"
	opts.Namespace = ns
	opts.LeaderElect = false
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	opts.Manager.Scheme = env.Scheme
	opts.Manager.Controller.SkipNameValidation = ptr.To(true)
	return opts
}

// httpGet returns the status code and body of a GET of url.
func httpGet(ctx context.Context, url string) (int, string, error) {
	return httpGetAs(ctx, url, "")
}

// httpGetAs is httpGet with a bearer token (none when empty), not verifying a server
// certificate (the metrics server's is self-signed).
func httpGetAs(ctx context.Context, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed metrics certificate
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// RunOperator, given flags as a command line sets them, runs a trivial reconciler with
// a cache of --namespace only (a ServiceAccount of another namespace is neither
// reconciled nor readable from the cache), the kubeconfig provider of
// --clusters-namespace, /healthz and /readyz on their address, /metrics over HTTPS to
// an authorized client only, leader election (on by default) with the Lease in
// --leader-election-namespace, and returns nil once its context ends.
func TestRunOperator(t *testing.T) {
	ns, other, clustersNS := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	metricsAddr, probeAddr := testenv.FreeAddress(t), testenv.FreeAddress(t)
	opts := multicluster.DefaultOperatorOptions()
	opts.FieldManager, opts.LeaderElectionID = "gadget-operator", "gadget-operator.test"
	opts.Manager.Scheme = env.Scheme
	opts.Manager.Controller.SkipNameValidation = ptr.To(true)
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--namespace", ns, "--clusters-namespace", clustersNS, "--leader-election-namespace", ns,
		"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", probeAddr}); err != nil {
		t.Fatal(err)
	}
	scraper := metricsReader(t, ns)
	rec := &seen{keys: map[client.ObjectKey]bool{}}
	var mgr mcmanager.Manager
	var resolver *multicluster.ClusterResolver
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- multicluster.RunOperator(ctx, env.Config, opts,
			func(_ context.Context, m mcmanager.Manager, r *multicluster.ClusterResolver) error {
				mgr, resolver = m, r
				return ctrl.NewControllerManagedBy(m.GetLocalManager()).Named("serviceaccounts").
					For(&corev1.ServiceAccount{}).Complete(rec)
			})
	}()
	for _, name := range []client.ObjectKey{{Namespace: ns, Name: "mine"}, {Namespace: other, Name: "theirs"}} {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name.Namespace, Name: name.Name}}
		if err := env.Client.Create(ctx, sa); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the reconciler got ServiceAccount "+ns+"/mine", func(context.Context) (bool, error) {
		return rec.has(client.ObjectKey{Namespace: ns, Name: "mine"}), nil
	})
	if rec.has(client.ObjectKey{Namespace: other, Name: "theirs"}) {
		t.Errorf("the reconciler got ServiceAccount %s/theirs, outside --namespace", other)
	}
	if mgr.GetProvider() == nil {
		t.Error("--clusters-namespace set, but the manager has no provider")
	}
	if resolver.Local() == nil || resolver.Remote().ManagementCluster == "" {
		t.Errorf("the setup got a resolver without a management cluster: %+v", resolver.Remote())
	}
	var list corev1.ServiceAccountList
	if err := mgr.GetLocalManager().GetCache().List(ctx, &list, client.InNamespace(other)); err == nil {
		t.Errorf("the cache listed ServiceAccounts of %s, outside --namespace", other)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		eventually(t, 30*time.Second, path+" answers 200", func(ctx context.Context) (bool, error) {
			code, body, err := httpGet(ctx, "http://"+probeAddr+path)
			return code == http.StatusOK && body == "ok", err
		})
	}
	eventually(t, 30*time.Second, "/metrics counts the reconciler's passes", func(ctx context.Context) (bool, error) {
		code, body, err := httpGetAs(ctx, "https://"+metricsAddr+"/metrics", scraper)
		return code == http.StatusOK &&
			strings.Contains(body, `controller_runtime_reconcile_total{controller="serviceaccounts",result="success"}`), err
	})
	if code, body, err := httpGetAs(ctx, "https://"+metricsAddr+"/metrics", ""); err != nil || code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without a token: %d %q %v, want 401", code, body, err)
	}
	if code, _, err := httpGet(ctx, "http://"+metricsAddr+"/metrics"); err == nil && code == http.StatusOK {
		t.Error("/metrics answered plain HTTP")
	}
	lease := &coordinationv1.Lease{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "gadget-operator.test"}, lease); err != nil ||
		lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("the Lease %s/gadget-operator.test of the leader: %v %+v", ns, err, lease.Spec)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("RunOperator returned %v after its context ended, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("RunOperator did not return within 30s of its context ending")
	}
	if _, _, err := httpGet(context.Background(), "http://"+probeAddr+"/healthz"); err == nil {
		t.Error("the health probes still answer after RunOperator returned")
	}
}

// --metrics-secure=false serves /metrics as plain HTTP to anyone, the explicit choice
// of a local run; --leader-elect=false takes no Lease.
func TestRunOperatorPlainMetricsWhenAsked(t *testing.T) {
	ns := env.Namespace(t)
	opts := operatorOpts(ns)
	opts.LeaderElect = true
	opts.LeaderElectionID = "plain-operator.test"
	metricsAddr := testenv.FreeAddress(t)
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--metrics-secure=false", "--leader-elect=false", "--metrics-bind-address", metricsAddr}); err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, func(ctx context.Context) error {
		return multicluster.RunOperator(ctx, env.Config, opts,
			func(context.Context, mcmanager.Manager, *multicluster.ClusterResolver) error { return nil })
	})
	eventually(t, 30*time.Second, "/metrics answers plain HTTP without a token", func(ctx context.Context) (bool, error) {
		code, body, err := httpGet(ctx, "http://"+metricsAddr+"/metrics")
		return code == http.StatusOK && strings.Contains(body, "go_goroutines"), err
	})
	var leases coordinationv1.LeaseList
	if err := env.Client.List(t.Context(), &leases, client.InNamespace(ns)); err != nil || len(leases.Items) != 0 {
		t.Errorf("--leader-elect=false took Leases %v (%v)", leases.Items, err)
	}
}

// Leader election, on by default, needs the Lease's namespace outside a cluster: the
// error says which flags give it.
func TestRunOperatorLeaderElectionNeedsANamespaceOutsideACluster(t *testing.T) {
	opts := operatorOpts(env.Namespace(t))
	opts.LeaderElect, opts.LeaderElectionID = true, "gadget-operator.test"
	err := multicluster.RunOperator(context.Background(), env.Config, opts,
		func(context.Context, mcmanager.Manager, *multicluster.ClusterResolver) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "--leader-election-namespace") || !strings.Contains(err.Error(), "--leader-elect=false") {
		t.Fatalf("RunOperator outside a cluster without --leader-election-namespace = %v, want an error naming the flags", err)
	}
}

// A flag value RunOperator cannot run with is refused before anything starts, with
// ErrInvalidOptions and an error that names the flag (or the field without one).
func TestRunOperatorRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		change func(*multicluster.OperatorOptions)
		want   string
	}{
		{name: "namespace", args: []string{"--namespace", "Not_A_Namespace"}, want: `--namespace "Not_A_Namespace" is not a namespace name`},
		{name: "clusters namespace", args: []string{"--clusters-namespace", "-x"}, want: `--clusters-namespace "-x" is not a namespace name`},
		{name: "metrics address", args: []string{"--metrics-bind-address", "8080"}, want: `--metrics-bind-address "8080": want host:port or 0`},
		{name: "metrics port", args: []string{"--metrics-bind-address", ":80800"}, want: `--metrics-bind-address ":80800": port "80800" is not a number from 0 to 65535`},
		{name: "probe address", args: []string{"--health-probe-bind-address", "localhost:http"}, want: `--health-probe-bind-address "localhost:http": port "http"`},
		{name: "leader election without a Lease", args: []string{"--leader-elect"},
			change: func(o *multicluster.OperatorOptions) { o.LeaderElectionID = "" }, want: "--leader-elect needs Options.LeaderElectionID"},
		{name: "leader election namespace", args: []string{"--leader-election-namespace", "Kube_System"},
			want: `--leader-election-namespace "Kube_System" is not a namespace name`},
		{name: "metrics certificate without TLS", args: []string{"--metrics-secure=false", "--metrics-cert-path", "/certs"},
			want: `--metrics-cert-path "/certs" needs --metrics-secure`},
		{name: "field manager", change: func(o *multicluster.OperatorOptions) { o.FieldManager = "" }, want: "Options.FieldManager is empty"},
		{name: "scheme", change: func(o *multicluster.OperatorOptions) { o.Manager.Scheme = nil }, want: "Options.Manager.Scheme is nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := operatorOpts("")
			opts.LeaderElectionID = "gadget-operator.test"
			fs := flag.NewFlagSet("operator", flag.ContinueOnError)
			opts.BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			if tc.change != nil {
				tc.change(&opts)
			}
			ran := false
			err := multicluster.RunOperator(context.Background(), env.Config, opts,
				func(context.Context, mcmanager.Manager, *multicluster.ClusterResolver) error { ran = true; return nil })
			if !errors.Is(err, multicluster.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RunOperator = %v, want ErrInvalidOptions saying %q", err, tc.want)
			}
			if ran {
				t.Error("the setup ran with options RunOperator refuses")
			}
		})
	}
	if err := multicluster.RunOperator(context.Background(), env.Config, operatorOpts(""), nil); !errors.Is(err, multicluster.ErrInvalidOptions) {
		t.Errorf("RunOperator with a nil setup = %v, want ErrInvalidOptions", err)
	}
	if err := multicluster.RunOperator(context.Background(), nil, operatorOpts(""),
		func(context.Context, mcmanager.Manager, *multicluster.ClusterResolver) error { return nil }); !errors.Is(err, multicluster.ErrInvalidOptions) {
		t.Errorf("RunOperator with a nil rest config = %v, want ErrInvalidOptions", err)
	}
}

// An error of the setup function is returned, wrapped, and the manager never starts:
// the probe address stays free.
func TestRunOperatorReturnsTheSetupError(t *testing.T) {
	opts := operatorOpts(env.Namespace(t))
	opts.HealthProbeBindAddress = testenv.FreeAddress(t)
	boom := errors.New("boom")
	err := multicluster.RunOperator(context.Background(), env.Config, opts,
		func(context.Context, mcmanager.Manager, *multicluster.ClusterResolver) error { return boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "operator setup") {
		t.Fatalf("RunOperator = %v, want the setup's error wrapped as operator setup", err)
	}
	l, err := net.Listen("tcp", opts.HealthProbeBindAddress)
	if err != nil {
		t.Fatalf("the probe address is still held after a failed setup: %v", err)
	}
	_ = l.Close()
}

// The flags BindFlags binds, with the defaults of DefaultOperatorOptions.
func TestOperatorOptionsBindFlags(t *testing.T) {
	opts := multicluster.DefaultOperatorOptions()
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	got := map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { got[f.Name] = f.DefValue })
	for name, def := range map[string]string{"clusters-namespace": "", "health-probe-bind-address": ":8081",
		"leader-elect": "true", "leader-election-namespace": "", "metrics-bind-address": ":8080",
		"metrics-cert-path": "", "metrics-secure": "true", "namespace": "", "webhook-cert-path": "", "webhook-port": "9443",
		"sharded": "false", "shard-selectors": "false"} {
		if d, ok := got[name]; !ok || d != def {
			t.Errorf("flag --%s: bound %v, default %q; want the default %q", name, ok, d, def)
		}
	}
	if err := fs.Parse([]string{"--leader-elect=maybe"}); err == nil || !strings.Contains(err.Error(), "leader-elect") {
		t.Fatalf("parsing --leader-elect=maybe = %v, want an error naming the flag", err)
	}
	mo := opts.ManagerOptions()
	if mo.Metrics.BindAddress != ":8080" || mo.HealthProbeBindAddress != ":8081" || mo.Client.Cache == nil ||
		len(mo.Client.Cache.DisableFor) == 0 || mo.Cache.DefaultNamespaces != nil {
		t.Fatalf("ManagerOptions of the defaults = %+v", mo)
	}
	if mo := multicluster.DefaultOperatorOptions().ManagerOptions(); !mo.LeaderElection || !mo.Metrics.SecureServing || mo.Metrics.FilterProvider == nil {
		t.Fatalf("ManagerOptions of the defaults: leader election %v, secure metrics %v, filter %v; want all on",
			mo.LeaderElection, mo.Metrics.SecureServing, mo.Metrics.FilterProvider != nil)
	}
	if err := fs.Parse([]string{"--metrics-secure=false", "--leader-elect=false"}); err != nil {
		t.Fatal(err)
	}
	if mo := opts.ManagerOptions(); mo.LeaderElection || mo.Metrics.SecureServing || mo.Metrics.FilterProvider != nil {
		t.Fatalf("ManagerOptions after --metrics-secure=false --leader-elect=false: leader election %v, secure metrics %v, filter %v",
			mo.LeaderElection, mo.Metrics.SecureServing, mo.Metrics.FilterProvider != nil)
	}
}

// RunOperator runs an operator's controllers until its context ends: here a controller
// that stops the operator once it has seen the ServiceAccount "greeter".
func ExampleRunOperator() {
	opts := multicluster.DefaultOperatorOptions()
	opts.FieldManager = "greeter-operator"
	opts.LeaderElectionID = "greeter-operator.example.c5c3.io"
	opts.Manager.Scheme = env.Scheme // the scheme of every kind the operator reads or writes
	// main binds the flags (opts.BindFlags(flag.CommandLine)) and calls flag.Parse(); here
	// the values are set as --namespace default --metrics-bind-address 0
	// --health-probe-bind-address 0 --leader-elect=false (a local run) would.
	opts.Namespace = "default"
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	opts.LeaderElect = false
	opts.Manager.Controller.SkipNameValidation = ptr.To(true)

	ctx, stop := context.WithCancel(context.Background()) // main: ctrl.SetupSignalHandler()
	var once sync.Once
	err := multicluster.RunOperator(ctx, env.Config, opts,
		func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "greeter"}}
			if err := resolver.Local().APIReader.Get(ctx, client.ObjectKeyFromObject(sa), sa); err != nil {
				if err := env.Client.Create(ctx, sa); err != nil {
					return err
				}
			}
			return ctrl.NewControllerManagedBy(mgr.GetLocalManager()).Named("greeter").For(&corev1.ServiceAccount{}).
				Complete(crreconcile.Func(func(_ context.Context, req ctrl.Request) (ctrl.Result, error) {
					if req.Name == "greeter" {
						once.Do(func() { fmt.Println("reconciled", req.NamespacedName); stop() })
					}
					return ctrl.Result{}, nil
				}))
		})
	fmt.Println("RunOperator returned", err)
	// Output:
	// reconciled default/greeter
	// RunOperator returned <nil>
}

// metricsReader returns a token of a new ServiceAccount ns/prometheus that may get /metrics.
func metricsReader(t *testing.T, ns string) string {
	t.Helper()
	return env.ServiceAccountToken(t, ns, "prometheus", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}})
}

// The operator's flags set the same fields of OperatorOptions as of operator.Options,
// and parsing one flag leaves a field set in code after BindFlags alone.
func TestOperatorOptionsFlagsParse(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   []string
		change func(*multicluster.OperatorOptions) // after BindFlags, before Parse
		want   func(*multicluster.OperatorOptions)
	}{
		"EveryFlag": {
			reason: "Each flag sets its field.",
			args: []string{"--metrics-bind-address", "127.0.0.1:9090", "--metrics-secure=false", "--health-probe-bind-address", ":9091",
				"--leader-elect=false", "--leader-election-namespace", "ops", "--namespace", "team-a", "--clusters-namespace", "clusters",
				"--insecure-kubeconfig-tls", "--webhook-cert-path", "/webhook-certs", "--webhook-port", "10250"},
			want: func(o *multicluster.OperatorOptions) {
				o.MetricsBindAddress, o.InsecureMetrics, o.HealthProbeBindAddress = "127.0.0.1:9090", true, ":9091"
				o.LeaderElect, o.LeaderElectionNamespace, o.Namespace, o.ClustersNamespace = false, "ops", "team-a", "clusters"
				o.Kubeconfig.InsecureTLS = true
				o.WebhookCertDir, o.WebhookPort = "/webhook-certs", 10250
			},
		},
		"Sharded": {
			reason: "--sharded and --shard-selectors, bound once through operator.Options, set the fields of OperatorOptions.",
			args:   []string{"--sharded", "--shard-selectors=true"},
			want:   func(o *multicluster.OperatorOptions) { o.Sharded, o.ShardSelectors = true, true },
		},
		"ShardTuningKept": {
			reason: "Shard options set in code after BindFlags survive the parse of --sharded.",
			args:   []string{"--sharded"},
			change: func(o *multicluster.OperatorOptions) { o.Shard.Identity, o.Shard.Ring = "replica-a", "gadgets" },
			want: func(o *multicluster.OperatorOptions) {
				o.Sharded, o.Shard.Identity, o.Shard.Ring = true, "replica-a", "gadgets"
			},
		},
		"BooleanWithoutValue": {
			reason: "A boolean flag of the operator's may be given without a value.",
			args:   []string{"--leader-elect"},
			change: func(o *multicluster.OperatorOptions) { o.LeaderElect = false },
			want:   func(*multicluster.OperatorOptions) {},
		},
		"CodeAfterBind": {
			reason: "A field set after BindFlags survives the parse of another flag.",
			args:   []string{"--namespace", "team-a"},
			change: func(o *multicluster.OperatorOptions) { o.FieldManager, o.MetricsCertDir = "gadget-operator", "/certs" },
			want: func(o *multicluster.OperatorOptions) {
				o.FieldManager, o.MetricsCertDir, o.Namespace = "gadget-operator", "/certs", "team-a"
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := multicluster.DefaultOperatorOptions()
			fs := flag.NewFlagSet("operator", flag.ContinueOnError)
			opts.BindFlags(fs)
			if tc.change != nil {
				tc.change(&opts)
			}
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			want := multicluster.DefaultOperatorOptions()
			tc.want(&want)
			got := opts
			if diff := cmp.Diff(want.Operator(), got.Operator(), cmpopts.IgnoreFields(sdkoperator.Options{}, "Manager")); diff != "" {
				t.Errorf("\n%s\nParse(%q): -want +got:\n%s", tc.reason, tc.args, diff)
			}
			if got.ClustersNamespace != want.ClustersNamespace || got.Kubeconfig.InsecureTLS != want.Kubeconfig.InsecureTLS {
				t.Errorf("\n%s\nParse(%q): clusters namespace %q, insecure TLS %v; want %q, %v", tc.reason, tc.args,
					got.ClustersNamespace, got.Kubeconfig.InsecureTLS, want.ClustersNamespace, want.Kubeconfig.InsecureTLS)
			}
			if got.Sharded != want.Sharded || got.ShardSelectors != want.ShardSelectors || got.Shard != want.Shard {
				t.Errorf("\n%s\nParse(%q): sharded %v, selectors %v, shard %+v; want %v, %v, %+v", tc.reason, tc.args,
					got.Sharded, got.ShardSelectors, got.Shard, want.Sharded, want.ShardSelectors, want.Shard)
			}
			if v := fs.Lookup("namespace").Value.String(); v != got.Namespace {
				t.Errorf("--namespace reads %q, the field holds %q", v, got.Namespace)
			}
		})
	}
}

// An option the operator bootstrap refuses is ErrInvalidOptions of both packages.
func TestOperatorOptionsValidateErrors(t *testing.T) {
	opts := operatorOpts("No")
	err := opts.Validate()
	if !errors.Is(err, multicluster.ErrInvalidOptions) || !errors.Is(err, sdkoperator.ErrInvalidOptions) {
		t.Fatalf("Validate = %v, want multicluster.ErrInvalidOptions and operator.ErrInvalidOptions", err)
	}
	opts = operatorOpts("")
	opts.ClustersNamespace = "-x"
	if err := opts.Validate(); !errors.Is(err, multicluster.ErrInvalidOptions) || !strings.Contains(err.Error(), "--clusters-namespace") {
		t.Fatalf("Validate = %v, want ErrInvalidOptions naming --clusters-namespace", err)
	}
}
