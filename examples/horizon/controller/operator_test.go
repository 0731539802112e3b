package controller_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// operator is a Horizon operator running against a management cluster, as cmd/main.go
// runs it.
type operator struct {
	mgr      mcmanager.Manager
	resolver *multicluster.ClusterResolver
	rec      *controller.Reconciler
	// counter counts the requests of the operator's manager (its cache and clients).
	counter *testenv.RequestCounter
	// login is the stand-in for the dashboard's login page that the health check probes.
	login *testenv.StandIn
	// clustersNS is the namespace of the target clusters' kubeconfig Secrets.
	clustersNS string
}

// operatorOptions vary how startOperator runs the operator.
type operatorOptions struct {
	// cfg reaches the management cluster; nil means env.Config (cluster admin).
	cfg *rest.Config
	// namespaceScoped runs the operator as with --namespace=<the test's namespace>.
	namespaceScoped bool
	// cleanup overrides the target-cluster sweep.
	cleanup *multicluster.Cleanup
	// mgmt is the management cluster; nil means env.
	mgmt *testenv.Env
}

// loginPage is the dashboard's login page, what the stand-in the health check probes
// answers by default; notLoginPage is a 200 HTML page without the login form.
var (
	loginPage    = testenv.Answer{ContentType: "text/html; charset=utf-8", Body: `<html><body><form method="post" action="/auth/login/"></form></body></html>`}
	notLoginPage = testenv.Answer{ContentType: "text/html", Body: `<html><body>It works!</body></html>`}
)

// newLoginPage stands in for the dashboard's login page until the test ends.
func newLoginPage(t *testing.T) *testenv.StandIn { return testenv.NewStandIn(t, loginPage) }

// startOperator runs the Horizon operator for namespace ns (its cache sees ns and the
// clusters namespace only) until the test ends.
func startOperator(t *testing.T, ns string, o operatorOptions) *operator {
	t.Helper()
	mgmt := o.mgmt
	if mgmt == nil {
		mgmt = env
	}
	login := newLoginPage(t)
	opts := testenv.OperatorOptions{Config: o.cfg}
	opts.FieldManager, opts.Namespace, opts.ClustersNamespace = controller.FieldManager, ns, mgmt.Namespace(t)
	opts.Resolver.ReachabilityTTL = time.Second
	rec, op := testenv.StartReconciler(t, mgmt, opts, func(resolver *multicluster.ClusterResolver) (*controller.Reconciler, error) {
		ropts := controller.DefaultOptions()
		ropts.NamespaceScoped, ropts.Cleanup = o.namespaceScoped, o.cleanup
		ropts.Outbound, ropts.ProbeBase = login.Outbound(), login.URL("")
		return controller.NewReconciler(resolver, ropts)
	})
	return &operator{mgr: op.Manager, resolver: op.Resolver, rec: rec, counter: op.Counter, login: login,
		clustersNS: opts.ClustersNamespace}
}

// remoteSecretKey is the remote key of the SECRET_KEY of the test Horizons.
const remoteSecretKey = "horizon/secret-key"

// newHorizon returns a minimal Horizon named name in ns.
func newHorizon(ns, name string) *v1alpha1.Horizon {
	return &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.HorizonSpec{
			Image:            "registry.example/horizon:2025.1",
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			SecretKey:        v1alpha1.SecretKeySpec{RemoteKey: remoteSecretKey, Property: secretKeyProperty},
		},
	}
}

// storeReady marks the shared ClusterSecretStore openbao-cluster-store Ready, creating
// it when missing. Tests that need a store that is not ready use a SecretStore of their
// own namespace.
func storeReady(t *testing.T) {
	t.Helper()
	if _, err := simulate.EnsureClusterSecretStoreReady(context.Background(), env.Client, secrets.OpenBaoClusterStoreName); err != nil {
		t.Fatal(err)
	}
}

// secretKeyProperty is the property of the SECRET_KEY in the provider secret of the
// test Horizons (spec.secretKey.property).
const secretKeyProperty = "key"

// newWorld returns a world (testenv/world) that plays the store, ESO and the Gateway for
// the Horizons of newHorizon through c, their SECRET_KEY key in its backend.
func newWorld(c client.Client, key string, opts ...world.Option) *world.World {
	return world.New(c, append(opts, world.WithSecret(remoteSecretKey,
		map[string][]byte{secretKeyProperty: []byte(key)}))...)
}

// rotateKey stores key as the SECRET_KEY in w's backend: the next Play syncs it.
func rotateKey(w *world.World, key string) {
	w.Backend().Set(remoteSecretKey, map[string][]byte{secretKeyProperty: []byte(key)})
}

// waitReady waits until h is Ready=True for its current generation, playing w (nil:
// nothing) while it waits.
func waitReady(t *testing.T, h *v1alpha1.Horizon, w *world.World) {
	t.Helper()
	var hook func(context.Context) error
	if w != nil {
		hook = w.Hook(h)
	}
	testenv.ExpectConditionWhile(t, env.Client, h, reconcile.ConditionReady, metav1.ConditionTrue, hook)
}

// clientKey is the key of obj.
func clientKey(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }
