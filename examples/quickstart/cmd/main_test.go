package main

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/quickstart/controller"
	"github.com/c5c3/reconciler-sdk/operator"
	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDPaths: []string{"../config/crd/bases"}}, &env))
}

// What main runs (operator.Run of defaultOptions and setup), given only a rest.Config
// and its flags, reconciles the sample Memo of its --namespace as the user its
// generated ClusterRole makes, with leader election on (the default) and its Lease in
// that namespace: the ConfigMap turns ConfigReady True (no Deployment controller runs
// here, so the Deployment does not roll out).
func TestRunReconcilesAMemo(t *testing.T) {
	ns := env.Namespace(t)
	roles, err := testenv.LoadClusterRoles("../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts := defaultOptions()
	fs := flag.NewFlagSet("memo-operator", flag.ContinueOnError)
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--namespace", ns, "--leader-election-namespace", ns,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0"}); err != nil {
		t.Fatal(err)
	}
	opts.Manager.Controller.SkipNameValidation = new(true)
	cfg := env.ConfigAs(t, "memo-operator", roles...)
	testenv.Go(t, func(ctx context.Context) error { return operator.Run(ctx, cfg, opts, setup) })

	memo := testenv.ReadSample(t, "../config/samples/quickstart_v1alpha1_memo.yaml", &v1alpha1.Memo{})
	memo.Namespace = ns
	if err := env.Client.Create(context.Background(), memo); err != nil {
		t.Fatal(err)
	}
	testenv.ExpectCondition(t, env.Client, memo, "ConfigReady", metav1.ConditionTrue)
}

// A Memo has no target cluster: the command has no --clusters-namespace flag, and its
// defaults are the secure ones (leader election on, metrics behind authentication).
func TestFlags(t *testing.T) {
	opts := defaultOptions()
	fs := flag.NewFlagSet("memo-operator", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts.BindFlags(fs)
	if err := fs.Parse([]string{"--clusters-namespace", "clusters"}); err == nil || !strings.Contains(err.Error(), "clusters-namespace") {
		t.Fatalf("parsing --clusters-namespace = %v, want an error naming the flag", err)
	}
	if !opts.LeaderElect || opts.InsecureMetrics || opts.FieldManager != controller.FieldManager {
		t.Errorf("defaults: leader election %v, insecure metrics %v, field manager %q", opts.LeaderElect, opts.InsecureMetrics, opts.FieldManager)
	}
}
