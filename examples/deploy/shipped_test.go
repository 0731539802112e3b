package deploy_test

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	horizonv1alpha1 "github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	horizon "github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	keystonev1alpha1 "github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	memov1alpha1 "github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/internal/deploy"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// shipped builds e's config/default, applies all of it but the manager Deployment and
// the webhook configurations (applyAllButManager), and runs the binary of e's image
// (built from the main package pkg) as the Deployment would, as its ServiceAccount with
// only the shipped RBAC, reading the ConfigMaps mounted at mounts, with the extra flags.
func shipped(t *testing.T, e example, pkg string, mounts []string, extra ...string) {
	t.Helper()
	objs, err := deploy.Build(e.config+"/default", deploy.BuildOptions{Image: e.image()})
	if err != nil {
		t.Fatal(err)
	}
	applyAllButManager(t, objs)
	d := manager(t, objs)
	dirs := map[string]string{}
	for _, m := range mounts {
		dirs[m] = writeConfigMap(t, d, m)
	}
	startOperator(t, imageBinary(t, pkg), d, dirs, extra...)
}

// The quick-start operator's binary, out of its image, as the shipped ServiceAccount:
// the sample Memo turns Ready (its Deployment rolls out on the fake node).
func TestShippedQuickstart(t *testing.T) {
	shipped(t, examples[0], "./examples/quickstart/cmd", nil)
	memo := testenv.ReadSample(t, "../quickstart/config/samples/quickstart_v1alpha1_memo.yaml", &memov1alpha1.Memo{})
	memo.Namespace = env.Namespace(t)
	if err := env.Client.Create(t.Context(), memo); err != nil {
		t.Fatal(err)
	}
	testenv.ExpectCondition(t, env.Client, memo, reconcile.ConditionReady, metav1.ConditionTrue)
}

// healthCheckFlags point the health checks of an operator outside the cluster network
// at stand-in, as its administrator would point them at a port-forward: the base URL,
// and loopback opened in the outbound policy, which refuses it by default.
func healthCheckFlags(standIn *testenv.StandIn) []string {
	return []string{"--health-check-base-url=" + standIn.URL(""), "--outbound-allow=127.0.0.1"}
}

// The Horizon operator's binary, out of its image, as the shipped ServiceAccount: the
// minimal sample, its SECRET_KEY read through the shared ClusterSecretStore (played by
// the world), gets every step up to its Deployment (rolled out on the fake node) True,
// and, its health check pointed at a stand-in of the login page (healthCheckFlags),
// turns Ready. Without those flags the check would request the cluster-local Service
// URL, which this machine cannot resolve.
func TestShippedHorizon(t *testing.T) {
	login := testenv.NewStandIn(t, testenv.Answer{ContentType: "text/html; charset=utf-8",
		Body: `<html><body><form method="post" action="` + horizon.LoginPath + `"></form></body></html>`})
	shipped(t, examples[1], "./examples/horizon/cmd", nil, healthCheckFlags(login)...)
	h := testenv.ReadSample(t, "../horizon/config/samples/horizon_v1alpha1_horizon_minimal.yaml", &horizonv1alpha1.Horizon{})
	h.Namespace = env.Namespace(t)
	if err := env.Client.Create(t.Context(), h); err != nil {
		t.Fatal(err)
	}
	play := world.New(env.Client, world.WithSecret(h.Spec.SecretKey.RemoteKey,
		map[string][]byte{"secret_key": []byte("shipped-horizon-secret-key-0123456789abcdef")})).Hook(h)
	for _, c := range []string{horizon.ConditionSecretsReady, horizon.ConditionConfigReady, horizon.ConditionDeploymentReady} {
		testenv.ExpectConditionWhile(t, env.Client, h, c, metav1.ConditionTrue, play)
	}
	testenv.ExpectConditionWhile(t, env.Client, h, reconcile.ConditionReady, metav1.ConditionTrue, play)
}

// The Keystone operator's binary, out of its image, as the shipped ServiceAccount: the
// minimal sample, whose dependencies (the shared ClusterSecretStore, the admin password,
// MariaDB) the world plays, gets every step up to its Deployment True, its key-rotation
// CronJobs running the image the Deployment declares (OPERATOR_IMAGE), and, its health
// check pointed at a stand-in of the /v3 version document, turns Ready.
func TestShippedKeystone(t *testing.T) {
	e := examples[2]
	versions := testenv.NewStandIn(t, testenv.Answer{ContentType: "application/json", Body: `{"version": {"id": "v3.14", "status": "stable"}}`})
	shipped(t, e, "./examples/keystone/cmd", nil, healthCheckFlags(versions)...)
	ns := env.Namespace(t)
	k := testenv.ReadSample(t, "../keystone/config/samples/keystone_v1alpha1_keystone_minimal.yaml", &keystonev1alpha1.Keystone{})
	k.Namespace = ns
	if err := env.Client.Create(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	play := world.New(env.Client, world.WithMariaDB(k.Spec.Database.MariaDBRef.Name),
		world.WithSecret(k.Spec.Bootstrap.AdminPassword.RemoteKey, map[string][]byte{"password": []byte("pw")})).Hook(k)
	for _, c := range []string{keystone.ConditionSecretsReady, keystone.ConditionConfigReady,
		keystone.ConditionFernetKeysReady, keystone.ConditionCredentialKeysReady, keystone.ConditionIdentityBackendsReady,
		keystone.ConditionDatabaseReady, keystone.ConditionDeploymentReady} {
		testenv.ExpectConditionWhile(t, env.Client, k, c, metav1.ConditionTrue, play)
	}
	testenv.ExpectConditionWhile(t, env.Client, k, reconcile.ConditionReady, metav1.ConditionTrue, play)
	keyOpts := keystone.KeyStepOptions{FieldManager: keystone.FieldManager, OperatorImage: e.image()}
	for _, name := range []string{keystone.NewFernetKeysStep(keyOpts).CronJobName(k), keystone.NewCredentialKeysStep(keyOpts).CronJobName(k)} {
		cj := &unstructured.Unstructured{}
		cj.SetAPIVersion("batch/v1")
		cj.SetKind("CronJob")
		get(t, ns, name, cj)
		containers, _, _ := unstructured.NestedSlice(cj.Object, "spec", "jobTemplate", "spec", "template", "spec", "containers")
		if len(containers) != 1 || containers[0].(map[string]any)["image"] != e.image() {
			t.Errorf("CronJob %s runs %v, want the operator's own image %s", name, containers, e.image())
		}
	}
}

// The Katalog engine's binary, out of its image, as the shipped ServiceAccount, running
// the Katalogs of the ConfigMap the Deployment mounts: the sample Database and
// RegionalApp turn Ready with phase Ready once their Deployments roll out. (The sample
// Application checks its image at the registry platform.yaml names, which does not
// exist here.)
func TestShippedKatalog(t *testing.T) {
	shipped(t, examples[3], "./cmd/katalog", []string{"/etc/katalog"})
	ns := env.Namespace(t)
	var samples []*unstructured.Unstructured
	for _, path := range []string{"../katalog/samples/database.yaml", "../katalog/samples/regionalapp.yaml"} {
		u := testenv.ReadSample(t, path, &unstructured.Unstructured{})
		u.SetNamespace(ns)
		if err := env.Client.Create(t.Context(), u); err != nil {
			t.Fatal(err)
		}
		samples = append(samples, u)
	}
	for _, u := range samples {
		// The engine's conditions carry no observedGeneration: read Ready and the phase.
		testenv.Eventually(t, 2*time.Minute, u.GetKind()+" "+u.GetName()+" Ready with phase Ready", func(ctx context.Context) (bool, error) {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				return false, err
			}
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			ready := slices.ContainsFunc(conds, func(c any) bool {
				m, ok := c.(map[string]any)
				return ok && m["type"] == "Ready" && m["status"] == string(metav1.ConditionTrue)
			})
			return ready && phase == "Ready", nil
		})
	}
}
