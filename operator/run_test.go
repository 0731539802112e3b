package operator_test

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// greeter is a trivial controller: each ServiceAccount gets a ConfigMap "<name>-greeting",
// applied through the operator's Applier.
type greeter struct{ op operator.Operator }

func (g *greeter) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sa := &corev1.ServiceAccount{}
	if err := g.op.Applier.Get(ctx, req.NamespacedName, sa); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: sa.Namespace, Name: sa.Name + "-greeting"},
		Data: map[string]string{"greeting": "hello " + sa.Name}}
	return ctrl.Result{}, apply.EnsureObject(ctx, g.op.Applier, g.op.Scheme, sa, cm, apply.FieldManager)
}

// setupGreeter registers a greeter with a plain ctrl.Builder.
func setupGreeter(_ context.Context, op operator.Operator) error {
	return ctrl.NewControllerManagedBy(op.Manager).Named("greeter").For(&corev1.ServiceAccount{}).
		Owns(&corev1.ConfigMap{}).Complete(&greeter{op: op})
}

// testOptions are options of an operator on env for namespace ns, without listeners or
// leader election.
func testOptions(ns string) operator.Options {
	opts := operator.DefaultOptions()
	opts.FieldManager, opts.Namespace, opts.LeaderElect = "greeter-operator", ns, false
	opts.MetricsBindAddress, opts.HealthProbeBindAddress = "0", "0"
	opts.Manager.Scheme = env.Scheme
	opts.Manager.Controller.SkipNameValidation = ptr.To(true)
	return opts
}

// Run, given flags as a command line sets them, hands the setup the parts of the
// operator, and the reconciler registered on a plain ctrl.Builder reconciles a
// ServiceAccount of --namespace through the Applier (under the operator's field manager,
// labelled for its cache) and none of another namespace. /healthz and /readyz answer,
// /metrics answers an authorized token over HTTPS only, the leader holds the Lease, and
// Run returns nil once its context ends, freeing its listeners.
func TestRun(t *testing.T) {
	ns, other := env.Namespace(t), env.Namespace(t)
	metricsAddr, probeAddr := testenv.FreeAddress(t), testenv.FreeAddress(t)
	opts := operator.DefaultOptions()
	opts.FieldManager, opts.LeaderElectionID = "greeter-operator", "greeter-operator.test"
	opts.Manager.Scheme = env.Scheme
	opts.Manager.Controller.SkipNameValidation = ptr.To(true)
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--namespace", ns, "--leader-election-namespace", ns,
		"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", probeAddr}); err != nil {
		t.Fatal(err)
	}
	scraper := env.ServiceAccountToken(t, ns, "prometheus", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}})
	stranger := env.ServiceAccountToken(t, ns, "stranger")

	got := make(chan operator.Operator, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- operator.Run(ctx, env.Config, opts, func(ctx context.Context, op operator.Operator) error {
			got <- op
			return setupGreeter(ctx, op)
		})
	}()
	var op operator.Operator
	select {
	case op = <-got:
	case err := <-done:
		t.Fatalf("Run returned %v before the setup ran", err)
	}
	if op.Manager == nil || op.Applier == nil || op.APIReader == nil || op.Scheme != env.Scheme ||
		op.FieldManager != "greeter-operator" || op.Namespace != ns || op.Applier.FieldManager() != "greeter-operator" {
		t.Fatalf("the setup got %+v", op)
	}

	for _, key := range []client.ObjectKey{{Namespace: ns, Name: "mine"}, {Namespace: other, Name: "theirs"}} {
		if err := env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{}
	eventually(t, "the ConfigMap mine-greeting", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mine-greeting"}, cm)
		return err == nil, client.IgnoreNotFound(err)
	})
	if cm.Labels[apply.ManagedByLabel] != "greeter-operator" || len(cm.ManagedFields) == 0 || !apply.WrittenBy(cm.ManagedFields[0], "greeter-operator") {
		t.Errorf("ConfigMap mine-greeting: labels %v, managed fields %+v; want the operator's field manager", cm.Labels, cm.ManagedFields)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: other, Name: "theirs-greeting"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("a ServiceAccount outside --namespace was reconciled: %v", err)
	}
	if err := op.Manager.GetCache().List(ctx, &corev1.ServiceAccountList{}, client.InNamespace(other)); err == nil {
		t.Errorf("the cache listed namespace %s, outside --namespace", other)
	}

	for _, path := range []string{"/healthz", "/readyz"} {
		eventually(t, path+" answers 200", func(ctx context.Context) (bool, error) {
			code, body, err := httpGet(ctx, "http://"+probeAddr+path, "")
			return code == http.StatusOK && body == "ok", err
		})
	}
	eventually(t, "/metrics counts the reconciler's passes", func(ctx context.Context) (bool, error) {
		code, body, err := httpGet(ctx, "https://"+metricsAddr+"/metrics", scraper)
		return code == http.StatusOK && strings.Contains(body, `controller_runtime_reconcile_total{controller="greeter",result="success"}`), err
	})
	for token, want := range map[string]int{"": http.StatusUnauthorized, stranger: http.StatusForbidden} {
		if code, _, err := httpGet(ctx, "https://"+metricsAddr+"/metrics", token); err != nil || code != want {
			t.Errorf("GET /metrics with token %t: %d %v, want %d", token != "", code, err, want)
		}
	}
	if code, _, err := httpGet(ctx, "http://"+metricsAddr+"/metrics", ""); err == nil && code == http.StatusOK {
		t.Error("/metrics answered plain HTTP")
	}
	lease := &coordinationv1.Lease{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "greeter-operator.test"}, lease); err != nil ||
		lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("the leader's Lease %s/greeter-operator.test: %v %+v", ns, err, lease.Spec)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run returned %v after its context ended, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of its context ending")
	}
	for _, addr := range []string{probeAddr, metricsAddr} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("%s is still held after Run returned: %v", addr, err)
			continue
		}
		_ = l.Close()
	}
}

// --metrics-secure=false serves /metrics as plain HTTP to anyone (the explicit choice
// of a local run); --leader-elect=false takes no Lease.
func TestRunPlainMetricsWhenAsked(t *testing.T) {
	ns := env.Namespace(t)
	opts := testOptions(ns)
	opts.LeaderElect, opts.LeaderElectionID = true, "plain-operator.test"
	metricsAddr := testenv.FreeAddress(t)
	fs := flag.NewFlagSet("operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--metrics-secure=false", "--leader-elect=false", "--metrics-bind-address", metricsAddr}); err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, func(ctx context.Context) error { return operator.Run(ctx, env.Config, opts, setupGreeter) })
	eventually(t, "/metrics answers plain HTTP without a token", func(ctx context.Context) (bool, error) {
		code, body, err := httpGet(ctx, "http://"+metricsAddr+"/metrics", "")
		return code == http.StatusOK && strings.Contains(body, "go_goroutines"), err
	})
	var leases coordinationv1.LeaseList
	if err := env.Client.List(t.Context(), &leases, client.InNamespace(ns)); err != nil || len(leases.Items) != 0 {
		t.Errorf("--leader-elect=false took Leases %v (%v)", leases.Items, err)
	}
}

// What Run refuses, it refuses before anything starts: the setup never runs, and a
// setup's error is returned wrapped with the probe address freed.
func TestRunFails(t *testing.T) {
	boom := errors.New("boom")
	probeAddr := testenv.FreeAddress(t)
	cases := map[string]struct {
		reason string
		opts   func(o *operator.Options)
		noCfg  bool
		setup  operator.Setup
		is     error
		want   string
	}{
		"NilSetup": {reason: "A nil setup is refused.", is: operator.ErrInvalidOptions, want: "setup function is nil"},
		"NilConfig": {reason: "A nil rest config is refused.", noCfg: true, setup: setupGreeter,
			is: operator.ErrInvalidOptions, want: "rest config is nil"},
		"BadOptions": {reason: "Options Validate refuses are refused.", setup: setupGreeter,
			opts: func(o *operator.Options) { o.Namespace = "No" }, is: operator.ErrInvalidOptions, want: `--namespace "No"`},
		"LeaseOutsideACluster": {reason: "Leader election outside a cluster needs the Lease's namespace: the error names the flags.",
			setup: setupGreeter, opts: func(o *operator.Options) { o.LeaderElect, o.LeaderElectionID = true, "greeter.test" },
			want: "give --leader-election-namespace, or --leader-elect=false"},
		"SetupError": {reason: "The setup's error is returned, wrapped; the manager never starts.",
			opts:  func(o *operator.Options) { o.HealthProbeBindAddress = probeAddr },
			setup: func(context.Context, operator.Operator) error { return boom }, is: boom, want: "operator setup: boom"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := testOptions(env.Namespace(t))
			if tc.opts != nil {
				tc.opts(&opts)
			}
			cfg := env.Config
			if tc.noCfg {
				cfg = nil
			}
			err := operator.Run(context.Background(), cfg, opts, tc.setup)
			if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("\n%s\nRun = %v, want an error saying %q", tc.reason, err, tc.want)
			}
		})
	}
	l, err := net.Listen("tcp", probeAddr)
	if err != nil {
		t.Fatalf("the probe address is still held after a failed setup: %v", err)
	}
	_ = l.Close()
}

// httpGet returns the status code and body of a GET of url with a bearer token (none
// when empty), not verifying a server certificate (the metrics server's is self-signed).
func httpGet(ctx context.Context, url, token string) (int, string, error) {
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

// eventually polls cond every 100 ms for up to 30 s and fails the test with what when
// it never holds; an error of cond is retried.
func eventually(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			last = err
			return ok, nil
		})
	if err != nil {
		t.Fatalf("%s: not within 30s (last error: %v)", what, last)
	}
}
