package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/reconcile"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	scheme, err := testenv.NewSchemeWith(v1alpha1.AddToScheme)
	if err != nil {
		panic(err)
	}
	os.Exit(testenv.Main(m, testenv.Options{Scheme: scheme, CRDPaths: []string{"../config/crd/bases"}, Controllers: true}, &env))
}

// The command's run, given only a rest.Config and its flags, reconciles a Horizon of its
// namespace on a real control plane: every step up to the Deployment turns True. The
// health check requests the cluster-local Service URL, which this machine cannot
// resolve or reach, so HorizonAPIReady stays False for a reason of its table.
func TestRunReconcilesAHorizon(t *testing.T) {
	ns := env.Namespace(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, env.Config, flags{metricsAddr: "0", probeAddr: "0", namespace: ns})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	store := &esov1.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: "openbao", Namespace: ns},
		Spec: esov1.SecretStoreSpec{Provider: &apiextensionsv1.JSON{
			Raw: []byte(`{"vault":{"server":"http://openbao.openbao.svc:8200","path":"secret","version":"v2"}}`)}},
	}
	if err := env.Client.Create(ctx, store); err != nil {
		t.Fatal(err)
	}
	if _, err := testenv.MarkSecretStoreReady(ctx, env.Client, client.ObjectKeyFromObject(store)); err != nil {
		t.Fatal(err)
	}
	h := &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dashboard"},
		Spec: v1alpha1.HorizonSpec{
			Image:            "registry.example/horizon:2025.1",
			KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
			SecretKey:        v1alpha1.SecretKeySpec{RemoteKey: "horizon/secret-key"},
			SecretStoreRef:   &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: store.Name},
		},
	}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatal(err)
	}
	esKey := client.ObjectKey{Namespace: ns, Name: controller.SecretKeyName(h)}
	poll(t, "ExternalSecret synced", func(ctx context.Context) bool {
		_, err := testenv.MarkExternalSecretSynced(ctx, env.Client, esKey,
			map[string][]byte{controller.SecretKeyDataKey: []byte("k")})
		return err == nil
	})
	poll(t, "every step up to the Deployment True, HorizonAPIReady False", func(ctx context.Context) bool {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(h), h); err != nil {
			return false
		}
		for _, c := range []string{controller.ConditionSecretsReady, controller.ConditionConfigReady,
			controller.ConditionDeploymentReady} {
			if !reconcile.IsTrue(h, c) {
				return false
			}
		}
		api := meta(h, controller.ConditionHorizonAPIReady)
		t.Logf("conditions: %s", testenv.DescribeConditions(h.Generation, h.Status.Conditions))
		return api != nil && api.Status == metav1.ConditionFalse &&
			(api.Reason == "EndpointNotReady" || api.Reason == "ConnectionFailed" || api.Reason == "HealthCheckTimeout")
	})
	if h.Status.Endpoint != controller.Endpoint(h) {
		t.Fatalf("status.endpoint = %q, want %q", h.Status.Endpoint, controller.Endpoint(h))
	}
}

func meta(h *v1alpha1.Horizon, condType string) *metav1.Condition {
	for i := range h.Status.Conditions {
		if h.Status.Conditions[i].Type == condType {
			return &h.Status.Conditions[i]
		}
	}
	return nil
}

func poll(t *testing.T, what string, cond func(ctx context.Context) bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 90*time.Second, true,
		func(ctx context.Context) (bool, error) { return cond(ctx), nil })
	if err != nil {
		t.Fatalf("%s: not within 90s", what)
	}
}
