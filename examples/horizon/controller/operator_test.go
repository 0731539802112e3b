package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
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
	login *loginPage
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

// loginPage answers the health check like the dashboard's login page; answer switches
// it, while the operator probes, to 200 with an HTML page without the login form or to
// another status code sent without a body.
type loginPage struct {
	srv    *httptest.Server
	answer atomic.Int32 // 0: the login page
}

func newLoginPage(t *testing.T) *loginPage {
	l := &loginPage{}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch a := int(l.answer.Load()); a {
		case 0:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = fmt.Fprint(w, `<html><body><form method="post" action="/auth/login/"></form></body></html>`)
		case http.StatusOK:
			w.Header().Set("Content-Type", "text/html")
			_, _ = fmt.Fprint(w, `<html><body>It works!</body></html>`)
		default:
			w.WriteHeader(a)
		}
	}))
	t.Cleanup(l.srv.Close)
	return l
}

// startOperator runs the Horizon operator for namespace ns (its cache sees ns and the
// clusters namespace only) until the test ends.
func startOperator(t *testing.T, ns string, o operatorOptions) *operator {
	t.Helper()
	mgmt := o.mgmt
	if mgmt == nil {
		mgmt = env
	}
	login := newLoginPage(t)
	var rec *controller.Reconciler
	opts := testenv.OperatorOptions{Config: o.cfg}
	opts.FieldManager, opts.Namespace, opts.ClustersNamespace = controller.FieldManager, ns, mgmt.Namespace(t)
	opts.Resolver.ReachabilityTTL = time.Second
	op := mgmt.StartOperator(t, opts, func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
		ropts := controller.DefaultOptions()
		ropts.NamespaceScoped = o.namespaceScoped
		ropts.Cleanup = o.cleanup
		ropts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes} // the login page listens on loopback
		ropts.ProbeURL = func(h *v1alpha1.Horizon) string {
			if h.Status.Endpoint == "" {
				return ""
			}
			return login.srv.URL + controller.LoginPath
		}
		var err error
		if rec, err = controller.NewReconciler(resolver, ropts); err != nil {
			return err
		}
		return rec.SetupWithManager(ctx, mgr)
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

// openBaoProvider is the provider block of the test stores (no provider runs).
func openBaoProvider() *apiextensionsv1.JSON {
	return &apiextensionsv1.JSON{Raw: []byte(`{"vault":{"server":"http://openbao.openbao.svc:8200","path":"secret","version":"v2"}}`)}
}

// storeReady marks the shared ClusterSecretStore openbao-cluster-store Ready, creating
// it when missing. Tests that need a store that is not ready use a SecretStore of their
// own namespace.
func storeReady(t *testing.T) {
	t.Helper()
	store := &esov1.ClusterSecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: secrets.OpenBaoClusterStoreName},
		Spec:       esov1.SecretStoreSpec{Provider: openBaoProvider()},
	}
	if err := env.Client.Create(context.Background(), store); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := simulate.MarkClusterSecretStoreReady(context.Background(), env.Client, secrets.OpenBaoClusterStoreName); err != nil {
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

// eventually polls cond every 100 ms for up to timeout and fails the test with what
// when it never holds.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			last = err
			return ok, nil
		})
	if err != nil {
		t.Fatalf("%s: not within %s (last error: %v)", what, timeout, last)
	}
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
