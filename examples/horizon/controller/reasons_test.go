package controller_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/health"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/netpol"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// newStepReconciler builds the Horizon reconciler on env as cmd does, with opts, but
// does not start its manager (testenv's StepResolver): the test drives single steps
// through controller.ReasonsRunStep.
func newStepReconciler(t *testing.T, opts controller.Options) *controller.Reconciler {
	return testenv.StepReconciler(t, env, controller.FieldManager, func(resolver *multicluster.ClusterResolver) (*controller.Reconciler, error) {
		return controller.NewReconciler(resolver, opts)
	})
}

// stepTarget is the management cluster as a pass writes to it, an Applier under the
// operator's field manager, over c (env.Client or a wrapper of it).
func stepTarget(c client.Client) *multicluster.Target {
	return testenv.StepTarget(c, controller.FieldManager)
}

// wantCondition is a condition a test expects: its type, status and reason, and a part
// of its message.
type wantCondition struct {
	condType string
	status   metav1.ConditionStatus
	reason   string
	message  string
}

// matches reports whether c is w, written for generation.
func (w wantCondition) matches(c *metav1.Condition, generation int64) bool {
	return c != nil && c.Status == w.status && c.Reason == w.reason &&
		strings.Contains(c.Message, w.message) && c.ObservedGeneration == generation
}

func (w wantCondition) String() string {
	return fmt.Sprintf("%s=%s reason %s message containing %q", w.condType, w.status, w.reason, w.message)
}

// expectReasons waits until the Horizon h on e carries every condition of want, each
// written for the Horizon's current generation, and returns the Horizon as read then.
func expectReasons(t *testing.T, e *testenv.Env, h *v1alpha1.Horizon, want ...wantCondition) *v1alpha1.Horizon {
	t.Helper()
	got := &v1alpha1.Horizon{}
	var missing []string
	deadline := time.Now().Add(testenv.ConditionTimeout + 15*time.Second)
	for {
		missing = missing[:0]
		if err := e.Client.Get(context.Background(), clientKey(h), got); err != nil {
			missing = append(missing, err.Error())
		} else {
			for _, w := range want {
				if !w.matches(meta.FindStatusCondition(got.Status.Conditions, w.condType), got.Generation) {
					missing = append(missing, w.String())
				}
			}
		}
		if len(missing) == 0 {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("Horizon %s: still waiting for %v; has %s", clientKey(h), missing,
				testenv.DescribeConditions(got.Generation, got.Status.Conditions))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// expectStepCondition fails t unless h carries w for its generation.
func expectStepCondition(t *testing.T, h *v1alpha1.Horizon, w wantCondition) {
	t.Helper()
	if c := meta.FindStatusCondition(h.Status.Conditions, w.condType); !w.matches(c, h.Generation) {
		t.Fatalf("want %s for generation %d; has %s", w, h.Generation, testenv.DescribeConditions(h.Generation, h.Status.Conditions))
	}
}

// readyBlockedBy is Ready False naming the blocking sub-condition condType with reason
// and the start of its message.
func readyBlockedBy(condType, reason, messageStart string) wantCondition {
	return wantCondition{reconcile.ConditionReady, metav1.ConditionFalse, reason, condType + " is False: " + messageStart}
}

// updateHorizon applies change to h, retrying on conflict, and returns the
// updated Horizon.
func updateHorizon(t *testing.T, e *testenv.Env, h *v1alpha1.Horizon, change func(*v1alpha1.Horizon)) *v1alpha1.Horizon {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := e.Client.Get(context.Background(), clientKey(h), h); err != nil {
			return err
		}
		change(h)
		return e.Client.Update(context.Background(), h)
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// createHorizon creates h on e.
func createHorizon(t *testing.T, e *testenv.Env, h *v1alpha1.Horizon) {
	t.Helper()
	if err := e.Client.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
}

// secretKeyOf is the key of h's ExternalSecret and SECRET_KEY Secret.
func secretKeyOf(h *v1alpha1.Horizon) client.ObjectKey {
	return client.ObjectKey{Namespace: h.Namespace, Name: controller.SecretKeyName(h)}
}

// syncKeyOn plays ESO on e: once h's ExternalSecret exists it writes data into the
// SECRET_KEY Secret and marks the ExternalSecret synced.
func syncKeyOn(t *testing.T, e *testenv.Env, h *v1alpha1.Horizon, data map[string][]byte) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, "ExternalSecret "+secretKeyOf(h).String()+" synced", func(ctx context.Context) (bool, error) {
		_, err := simulate.MarkExternalSecretSynced(ctx, e.Client, secretKeyOf(h), data)
		return err == nil, err
	})
}

// countIn returns how many objects of list's kind exist in ns on e.
func countIn(t *testing.T, e *testenv.Env, ns string, list client.ObjectList) int {
	t.Helper()
	if err := e.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return meta.LenList(list)
}

// The reasons every sub-condition of a converged Horizon gives: a minimal Horizon
// reports the NotRequired reasons of its optional children; once it asks for an
// autoscaler, a VerticalPodAutoscaler and a NetworkPolicy their Ready reasons follow for
// the new generation; taking them out again reports NotRequired and deletes them.
func TestReasonsConvergedHorizon(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	storeReady(t)
	h := newHorizon(ns, "dashboard")
	createHorizon(t, env, h)
	syncKeyOn(t, env, h, map[string][]byte{controller.SecretKeyDataKey: []byte("converged-key")})
	key := ns + "/dashboard"
	got := expectReasons(t, env, h,
		wantCondition{controller.ConditionSecretsReady, metav1.ConditionTrue, controller.ReasonSecretsAvailable,
			"SECRET_KEY synced into Secret " + key + "-secret-key"},
		wantCondition{controller.ConditionWebSSOReady, metav1.ConditionTrue, controller.ReasonIdentityBackendsNotRequired,
			"websso is not enabled: no identity backend is read"},
		wantCondition{controller.ConditionConfigReady, metav1.ConditionTrue, controller.ReasonConfigRendered,
			"local_settings.py rendered into ConfigMap dashboard-config-"},
		wantCondition{controller.ConditionDeploymentReady, metav1.ConditionTrue, controller.ReasonDeploymentReady,
			"Deployment " + key + " is available"},
		wantCondition{controller.ConditionHTTPRouteReady, metav1.ConditionTrue, "HTTPRouteNotRequired",
			"no gateway configured: HTTPRoute not required"},
		wantCondition{controller.ConditionHorizonAPIReady, metav1.ConditionTrue, health.ReasonHealthy,
			"returned 200 OK"},
		wantCondition{controller.ConditionHPAReady, metav1.ConditionTrue, "HPANotRequired",
			"no HorizontalPodAutoscaler is requested"},
		wantCondition{controller.ConditionVPAReady, metav1.ConditionTrue, "VPANotRequired",
			"no VerticalPodAutoscaler is requested"},
		wantCondition{controller.ConditionNetworkPolicyReady, metav1.ConditionTrue, netpol.ReasonNotRequired,
			"no network policy configured: NetworkPolicy not required"},
		wantCondition{reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady, ""},
	)
	if c := meta.FindStatusCondition(got.Status.Conditions, controller.ConditionConfigReady); !strings.HasSuffix(c.Message, got.Status.ConfigMap) {
		t.Errorf("ConfigReady message %q does not name status.configMap %q", c.Message, got.Status.ConfigMap)
	}
	for _, c := range got.Status.Conditions {
		if strings.Contains(c.Message, "converged-key") {
			t.Errorf("condition %s quotes the SECRET_KEY: %q", c.Type, c.Message)
		}
	}

	h = updateHorizon(t, env, h, func(h *v1alpha1.Horizon) {
		h.Spec.Autoscaling = &commonv1.AutoscalingSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 4}
		h.Spec.VPA = &v1alpha1.VPASpec{Enabled: true}
		h.Spec.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": "gateway"}}}},
		}}}
	})
	if h.Generation < 2 {
		t.Fatalf("generation = %d after a spec change", h.Generation)
	}
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHPAReady, metav1.ConditionTrue, "HPAReady",
			"HorizontalPodAutoscaler " + key + " scales Deployment dashboard between 2 and 4 replicas"},
		wantCondition{controller.ConditionVPAReady, metav1.ConditionTrue, "VPAReady",
			"VerticalPodAutoscaler applied: " + key},
		wantCondition{controller.ConditionNetworkPolicyReady, metav1.ConditionTrue, netpol.ReasonReady,
			"NetworkPolicy " + key + " applied with 1 ingress rule(s)"},
		wantCondition{reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady, ""},
	)
	for _, list := range []client.ObjectList{&autoscalingv2.HorizontalPodAutoscalerList{}, &vpav1.VerticalPodAutoscalerList{}, &networkingv1.NetworkPolicyList{}} {
		if n := countIn(t, env, ns, list); n != 1 {
			t.Errorf("%T: %d objects, want the Horizon's one", list, n)
		}
	}

	h = updateHorizon(t, env, h, func(h *v1alpha1.Horizon) {
		h.Spec.Autoscaling, h.Spec.VPA, h.Spec.NetworkPolicy = nil, nil, nil
	})
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHPAReady, metav1.ConditionTrue, "HPANotRequired", "no HorizontalPodAutoscaler is requested"},
		wantCondition{controller.ConditionVPAReady, metav1.ConditionTrue, "VPANotRequired", "no VerticalPodAutoscaler is requested"},
		wantCondition{controller.ConditionNetworkPolicyReady, metav1.ConditionTrue, netpol.ReasonNotRequired, "NetworkPolicy not required"},
		wantCondition{reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady, ""},
	)
	for _, list := range []client.ObjectList{&autoscalingv2.HorizontalPodAutoscalerList{}, &vpav1.VerticalPodAutoscalerList{}, &networkingv1.NetworkPolicyList{}} {
		if n := countIn(t, env, ns, list); n != 0 {
			t.Errorf("%T: %d objects left after the Horizon stopped asking for them", list, n)
		}
	}
}

// A Horizon whose target cluster is not registered reports TargetClusterUnavailable on
// SecretsReady with the resolver's error, requeues after 15 s and has nothing written
// for it anywhere.
func TestReasonTargetClusterUnavailable(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	op := startOperator(t, ns, operatorOptions{})
	storeReady(t)
	h := newHorizon(ns, "dashboard")
	h.Spec.TargetClusterRef = &commonv1.TargetClusterRefSpec{Name: "nowhere"}
	createHorizon(t, env, h)
	const msg = `target cluster "nowhere" is not registered`
	expectReasons(t, env, h,
		wantCondition{controller.ConditionSecretsReady, metav1.ConditionFalse, multicluster.TargetClusterUnavailable, msg},
		readyBlockedBy(controller.ConditionSecretsReady, multicluster.TargetClusterUnavailable, msg),
	)
	res, err := op.rec.Reconcile(context.Background(), ctrl.Request{NamespacedName: clientKey(h)})
	if err != nil || res.RequeueAfter != multicluster.RetryInterval {
		t.Fatalf("Reconcile = %+v, %v; want a requeue after %s", res, err, multicluster.RetryInterval)
	}
	for _, list := range []client.ObjectList{&esov1.ExternalSecretList{}, &corev1.ConfigMapList{}, &appsv1.DeploymentList{},
		&corev1.ServiceList{}} {
		if err := env.Client.List(context.Background(), list, client.InNamespace(ns),
			client.MatchingLabels{"app.kubernetes.io/instance": "dashboard"}); err != nil {
			t.Fatal(err)
		}
		if n := meta.LenList(list); n != 0 {
			t.Errorf("%T: %d objects written for a Horizon whose target cluster is unavailable", list, n)
		}
	}
	if got := expectReasons(t, env, h); len(got.Status.Conditions) != 2 {
		t.Errorf("conditions = %s, want SecretsReady and Ready only", testenv.DescribeConditions(got.Generation, got.Status.Conditions))
	}
}

// The Secrets row walks its reasons in order: a SecretStore of the Horizon's namespace
// that is not ready (SecretStoreNotReady), an ExternalSecret ESO has not synced, a
// synced Secret without the key (both WaitingForSecretKey), and the key
// (SecretsAvailable). Ready names SecretsReady as the blocker with its reason until then.
func TestReasonsSecretsReady(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	store := &esov1.SecretStore{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vault"},
		Spec:       esov1.SecretStoreSpec{Provider: simulate.OpenBaoProvider()},
	}
	if err := env.Client.Create(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkSecretStoreNotReady(context.Background(), env.Client, clientKey(store), esov1.ReasonValidationFailed); err != nil {
		t.Fatal(err)
	}
	h := newHorizon(ns, "dashboard")
	h.Spec.SecretStoreRef = &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "vault"}
	createHorizon(t, env, h)

	const notReady = `SecretStore "vault" is not ready; upstream secret backend unreachable`
	expectReasons(t, env, h,
		wantCondition{controller.ConditionSecretsReady, metav1.ConditionFalse, secrets.ReasonSecretStoreNotReady, notReady},
		readyBlockedBy(controller.ConditionSecretsReady, secrets.ReasonSecretStoreNotReady, notReady),
	)
	if n := countIn(t, env, ns, &esov1.ExternalSecretList{}); n != 0 {
		t.Errorf("%d ExternalSecrets created through a store that is not ready", n)
	}

	if _, err := simulate.MarkSecretStoreReady(context.Background(), env.Client, clientKey(store)); err != nil {
		t.Fatal(err)
	}
	waiting := fmt.Sprintf("waiting for ExternalSecret %s to sync remote key %q", secretKeyOf(h), h.Spec.SecretKey.RemoteKey)
	expectReasons(t, env, h,
		wantCondition{controller.ConditionSecretsReady, metav1.ConditionFalse, controller.ReasonWaitingForSecretKey, waiting},
		readyBlockedBy(controller.ConditionSecretsReady, controller.ReasonWaitingForSecretKey, waiting),
	)

	syncKeyOn(t, env, h, map[string][]byte{"unrelated": []byte("x")})
	noKey := fmt.Sprintf("Secret %s holds no %q yet", secretKeyOf(h), controller.SecretKeyDataKey)
	expectReasons(t, env, h,
		wantCondition{controller.ConditionSecretsReady, metav1.ConditionFalse, controller.ReasonWaitingForSecretKey, noKey},
	)
	if n := countIn(t, env, ns, &appsv1.DeploymentList{}); n != 0 {
		t.Errorf("%d Deployments created before the SECRET_KEY was synced", n)
	}

	syncKeyOn(t, env, h, map[string][]byte{controller.SecretKeyDataKey: []byte("the-key")})
	expectReasons(t, env, h,
		wantCondition{controller.ConditionSecretsReady, metav1.ConditionTrue, controller.ReasonSecretsAvailable,
			"SECRET_KEY synced into Secret " + secretKeyOf(h).String()},
		wantCondition{reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady, ""},
	)
}

// A namespace-scoped operator refuses the default ClusterSecretStore with
// ClusterSecretStoreUnsupported, names the namespace to put a SecretStore in, and
// creates nothing.
func TestReasonClusterSecretStoreUnsupported(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{mgmt: env, namespaceScoped: true})
	storeReady(t)
	h := newHorizon(ns, "dashboard")
	createHorizon(t, env, h)
	msg := fmt.Sprintf(`ClusterSecretStore %q cannot be read by a namespace-scoped operator; set spec.secretStoreRef to a SecretStore in namespace %q`,
		secrets.OpenBaoClusterStoreName, ns)
	expectReasons(t, env, h,
		wantCondition{controller.ConditionSecretsReady, metav1.ConditionFalse, secrets.ReasonClusterSecretStoreUnsupported, msg},
		readyBlockedBy(controller.ConditionSecretsReady, secrets.ReasonClusterSecretStoreUnsupported, msg),
	)
	if n := countIn(t, env, ns, &esov1.ExternalSecretList{}); n != 0 {
		t.Errorf("%d ExternalSecrets created by a namespace-scoped operator for a ClusterSecretStore", n)
	}
}

// An extraConfig value the CRD admits (no admission webhook runs here) but that is not
// a Python literal is refused by Render: ConfigError without quoting the value, no
// ConfigMap and no Deployment; a literal in the next generation renders.
func TestReasonConfigErrorRender(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	storeReady(t)
	h := newHorizon(ns, "dashboard")
	const code = "__import__('os').system('id')"
	h.Spec.ExtraConfig = map[string]string{"SESSION_TIMEOUT": code}
	createHorizon(t, env, h)
	syncKeyOn(t, env, h, map[string][]byte{controller.SecretKeyDataKey: []byte("k")})
	const msg = `invalid Horizon settings: Settings.ExtraConfig["SESSION_TIMEOUT"]: the value is not a single-line Python literal`
	got := expectReasons(t, env, h,
		wantCondition{controller.ConditionSecretsReady, metav1.ConditionTrue, controller.ReasonSecretsAvailable, ""},
		wantCondition{controller.ConditionConfigReady, metav1.ConditionFalse, controller.ReasonConfigError, msg},
		readyBlockedBy(controller.ConditionConfigReady, controller.ReasonConfigError, msg),
	)
	if c := meta.FindStatusCondition(got.Status.Conditions, controller.ConditionConfigReady); strings.Contains(c.Message, "__import__") {
		t.Errorf("ConfigError quotes the extraConfig value: %q", c.Message)
	}
	if got.Status.ConfigMap != "" {
		t.Errorf("status.configMap = %q for settings that do not render", got.Status.ConfigMap)
	}
	if n := countIn(t, env, ns, &appsv1.DeploymentList{}); n != 0 {
		t.Errorf("%d Deployments created without settings", n)
	}

	h = updateHorizon(t, env, h, func(h *v1alpha1.Horizon) { h.Spec.ExtraConfig["SESSION_TIMEOUT"] = "3600" })
	expectReasons(t, env, h,
		wantCondition{controller.ConditionConfigReady, metav1.ConditionTrue, controller.ReasonConfigRendered, "rendered into ConfigMap dashboard-config-"},
	)
}

// A namespace whose quota admits no pods keeps the Deployment from rolling out:
// DeploymentReady False WaitingForDeployment, Ready names it, and the pass ends there
// (the exposure steps do not run).
func TestReasonWaitingForDeployment(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}},
	}
	if err := env.Client.Create(context.Background(), quota); err != nil {
		t.Fatal(err)
	}
	// The quota controller does not run: write the usage it would.
	quota.Status = corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")},
		Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")},
	}
	if err := env.Client.Status().Update(context.Background(), quota); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns, operatorOptions{})
	storeReady(t)
	h := newHorizon(ns, "dashboard")
	createHorizon(t, env, h)
	syncKeyOn(t, env, h, map[string][]byte{controller.SecretKeyDataKey: []byte("k")})
	msg := fmt.Sprintf("waiting for Deployment %s/dashboard to roll out", ns)
	got := expectReasons(t, env, h,
		wantCondition{controller.ConditionConfigReady, metav1.ConditionTrue, controller.ReasonConfigRendered, ""},
		wantCondition{controller.ConditionDeploymentReady, metav1.ConditionFalse, controller.ReasonWaitingForDeployment, msg},
		readyBlockedBy(controller.ConditionDeploymentReady, controller.ReasonWaitingForDeployment, msg),
	)
	for _, later := range []string{controller.ConditionHTTPRouteReady, controller.ConditionHorizonAPIReady, controller.ConditionHPAReady} {
		if c := meta.FindStatusCondition(got.Status.Conditions, later); c != nil {
			t.Errorf("%s = %s/%s although the pass ends at the Deployment", later, c.Status, c.Reason)
		}
	}
	if got.Status.Endpoint != "" {
		t.Errorf("status.endpoint = %q before the Deployment is available", got.Status.Endpoint)
	}
	if n := countIn(t, env, ns, &corev1.PodList{}); n != 0 {
		t.Fatalf("%d pods in a namespace whose quota admits none", n)
	}
}

// The HTTPRoute row reports the Gateway's verdict: not yet given, rejected (both
// HTTPRouteNotAccepted, Ready naming it) and accepted (HTTPRouteAccepted); dropping the
// gateway reports HTTPRouteNotRequired for the new generation and deletes the route.
func TestReasonsHTTPRoute(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	storeReady(t)
	h := newHorizon(ns, "dashboard")
	h.Spec.Gateway = &v1alpha1.GatewaySpec{ParentRef: v1alpha1.GatewayParentRef{Name: "public"}, Hostname: "dashboard.example.com"}
	createHorizon(t, env, h)
	syncKeyOn(t, env, h, map[string][]byte{controller.SecretKeyDataKey: []byte("k")})
	route := client.ObjectKey{Namespace: ns, Name: "dashboard"}
	waiting := fmt.Sprintf("waiting for Gateway %s/public to accept HTTPRoute %s", ns, route)
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHTTPRouteReady, metav1.ConditionFalse, "HTTPRouteNotAccepted", waiting},
		readyBlockedBy(controller.ConditionHTTPRouteReady, "HTTPRouteNotAccepted", waiting),
	)

	if _, err := simulate.SetHTTPRouteAccepted(context.Background(), env.Client, route, metav1.ConditionFalse,
		string(gatewayv1.RouteReasonNotAllowedByListeners), "hostname not allowed", 0); err != nil {
		t.Fatal(err)
	}
	rejected := fmt.Sprintf("Gateway %s/public did not accept HTTPRoute %s: NotAllowedByListeners: hostname not allowed", ns, route)
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHTTPRouteReady, metav1.ConditionFalse, "HTTPRouteNotAccepted", rejected},
		readyBlockedBy(controller.ConditionHTTPRouteReady, "HTTPRouteNotAccepted", rejected),
	)

	if _, err := simulate.SetHTTPRouteAccepted(context.Background(), env.Client, route, metav1.ConditionTrue,
		string(gatewayv1.RouteReasonAccepted), "accepted", 0); err != nil {
		t.Fatal(err)
	}
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHTTPRouteReady, metav1.ConditionTrue, "HTTPRouteAccepted",
			fmt.Sprintf("HTTPRoute %s accepted by Gateway %s/public", route, ns)},
		wantCondition{reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady, ""},
	)

	h = updateHorizon(t, env, h, func(h *v1alpha1.Horizon) { h.Spec.Gateway = nil })
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHTTPRouteReady, metav1.ConditionTrue, "HTTPRouteNotRequired", "no gateway configured"},
		wantCondition{reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady, ""},
	)
	if n := countIn(t, env, ns, &gatewayv1.HTTPRouteList{}); n != 0 {
		t.Errorf("%d HTTPRoutes left after the gateway was dropped", n)
	}
}

// The health check through the running operator: a 200 without the login form is
// APIUnhealthy, a 500 HealthCheckFailed, each with Ready naming HorizonAPIReady, and the
// login page APIHealthy again, each picked up by the health-check retry.
func TestReasonsHealthCheckOperator(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	op := startOperator(t, ns, operatorOptions{})
	op.login.Answer(notLoginPage)
	storeReady(t)
	h := newHorizon(ns, "dashboard")
	createHorizon(t, env, h)
	syncKeyOn(t, env, h, map[string][]byte{controller.SecretKeyDataKey: []byte("k")})
	probe := "GET " + op.login.URL(controller.LoginPath)
	unhealthy := probe + " returned 200 OK but the answer is not healthy: login page has no form posting to /auth/login/"
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHorizonAPIReady, metav1.ConditionFalse, health.ReasonUnhealthy, unhealthy},
		readyBlockedBy(controller.ConditionHorizonAPIReady, health.ReasonUnhealthy, unhealthy),
	)
	op.login.Answer(testenv.StatusAnswer(http.StatusInternalServerError))
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHorizonAPIReady, metav1.ConditionFalse, health.ReasonCheckFailed, probe + " returned 500 Internal Server Error"},
		readyBlockedBy(controller.ConditionHorizonAPIReady, health.ReasonCheckFailed, probe+" returned 500 Internal Server Error"),
	)
	op.login.Reset()
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHorizonAPIReady, metav1.ConditionTrue, health.ReasonHealthy, probe + " returned 200 OK"},
		wantCondition{reconcile.ConditionReady, metav1.ConditionTrue, reconcile.ReasonAllReady, ""},
	)
}

// The HealthCheck row maps every kind of answer to its reason: True with no requeue
// only for the login page, False with the 10 s retry otherwise, never an error.
func TestReasonsHealthCheckStep(t *testing.T) {
	t.Parallel()
	login := newLoginPage(t)
	notLogin := newLoginPage(t)
	notLogin.Answer(notLoginPage)
	failing := newLoginPage(t)
	failing.Answer(testenv.StatusAnswer(http.StatusInternalServerError))
	closed := newLoginPage(t)
	closed.Close()
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	t.Cleanup(hanging.Close)
	t.Cleanup(func() { close(release) }) // runs before hanging.Close

	po := health.DefaultOptions()
	po.Timeout = 300 * time.Millisecond
	po.Validate = controller.LoginPageValid
	po.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	cases := []struct {
		name     string
		endpoint string // status.endpoint; empty: none published yet
		url      string // what the probe requests; empty: the default URL from status.endpoint
		want     wantCondition
	}{
		{"login page", "x", login.URL(controller.LoginPath),
			wantCondition{"", metav1.ConditionTrue, health.ReasonHealthy, "returned 200 OK"}},
		{"200 without the login form", "x", notLogin.URL(controller.LoginPath),
			wantCondition{"", metav1.ConditionFalse, health.ReasonUnhealthy, "login page has no form posting to /auth/login/"}},
		{"500", "x", failing.URL(controller.LoginPath),
			wantCondition{"", metav1.ConditionFalse, health.ReasonCheckFailed, "returned 500 Internal Server Error"}},
		{"closed server", "x", closed.URL(controller.LoginPath),
			wantCondition{"", metav1.ConditionFalse, health.ReasonConnectionFailed, "connection refused"}},
		{"hanging server", "x", hanging.URL + controller.LoginPath,
			wantCondition{"", metav1.ConditionFalse, health.ReasonTimeout, "did not answer within 300ms"}},
		{"no endpoint", "", "",
			wantCondition{"", metav1.ConditionFalse, health.ReasonEndpointNotReady, "no endpoint to probe yet"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := controller.DefaultOptions()
			opts.Prober = health.NewProber(po)
			if tc.url != "" {
				opts.ProbeURL = func(*v1alpha1.Horizon) string { return tc.url }
			}
			rec := newStepReconciler(t, opts)
			h := newHorizon("ns", "dashboard")
			h.UID, h.Generation, h.Status.Endpoint = "uid-health", 3, tc.endpoint
			res, err := controller.ReasonsRunStep(context.Background(), rec, "HealthCheck", stepTarget(env.Client), h)
			if err != nil {
				t.Fatalf("err = %v; every answer of the endpoint is a condition", err)
			}
			want := tc.want
			want.condType = controller.ConditionHorizonAPIReady
			expectStepCondition(t, h, want)
			wantRes := ctrl.Result{RequeueAfter: health.RetryInterval}
			if want.status == metav1.ConditionTrue {
				wantRes = ctrl.Result{}
			}
			if res != wantRes {
				t.Errorf("result = %+v, want %+v", res, wantRes)
			}
		})
	}
}

// A VerticalPodAutoscaler of the Horizon's name that someone else made is not taken
// over: VPAReady False VPAError naming it, Ready naming VPAReady, the object untouched.
func TestReasonVPAError(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	foreign := &vpav1.VerticalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dashboard", Labels: map[string]string{"team": "capacity"}},
		Spec: vpav1.VerticalPodAutoscalerSpec{
			TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "dashboard"},
		},
	}
	if err := env.Client.Create(context.Background(), foreign); err != nil {
		t.Fatal(err)
	}
	startOperator(t, ns, operatorOptions{})
	storeReady(t)
	h := newHorizon(ns, "dashboard")
	h.Spec.VPA = &v1alpha1.VPASpec{Enabled: true}
	createHorizon(t, env, h)
	syncKeyOn(t, env, h, map[string][]byte{controller.SecretKeyDataKey: []byte("k")})
	msg := fmt.Sprintf("reconcile VerticalPodAutoscalers: VerticalPodAutoscaler %s/dashboard exists and has no controller; Horizon %s/dashboard does not take it over", ns, ns)
	expectReasons(t, env, h,
		wantCondition{controller.ConditionHPAReady, metav1.ConditionTrue, "HPANotRequired", ""},
		wantCondition{controller.ConditionVPAReady, metav1.ConditionFalse, "VPAError", msg},
		wantCondition{controller.ConditionNetworkPolicyReady, metav1.ConditionTrue, netpol.ReasonNotRequired, ""},
		readyBlockedBy(controller.ConditionVPAReady, "VPAError", msg),
	)
	after := &vpav1.VerticalPodAutoscaler{}
	if err := env.Client.Get(context.Background(), clientKey(foreign), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != foreign.ResourceVersion || len(after.OwnerReferences) != 0 {
		t.Errorf("the foreign VerticalPodAutoscaler was changed: resourceVersion %s -> %s, ownerReferences %v",
			foreign.ResourceVersion, after.ResourceVersion, after.OwnerReferences)
	}
}

// An empty ingress list (which the CRD refuses, so only a bypassed admission produces
// it) is refused by the NetworkPolicy row: the error propagates with no requeue, the
// condition keeps its last verdict and the existing policy stays as it was.
func TestReasonNetworkPolicyEmptyIngressRefused(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, controller.DefaultOptions())
	h := newHorizon(ns, "dashboard")
	h.Spec.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
		From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}},
	}}}
	createHorizon(t, env, h)
	target := stepTarget(env.Client)
	if _, err := controller.ReasonsRunStep(context.Background(), rec, "NetworkPolicy", target, h); err != nil {
		t.Fatal(err)
	}
	ready := wantCondition{controller.ConditionNetworkPolicyReady, metav1.ConditionTrue, netpol.ReasonReady, "applied with 1 ingress rule(s)"}
	expectStepCondition(t, h, ready)
	before := &networkingv1.NetworkPolicy{}
	if err := env.Client.Get(context.Background(), clientKey(h), before); err != nil {
		t.Fatal(err)
	}

	verdict := *meta.FindStatusCondition(h.Status.Conditions, controller.ConditionNetworkPolicyReady)
	h.Spec.NetworkPolicy.Ingress = []networkingv1.NetworkPolicyIngressRule{}
	res, err := controller.ReasonsRunStep(context.Background(), rec, "NetworkPolicy", target, h)
	if !errors.Is(err, netpol.ErrEmptyIngress) || !res.IsZero() {
		t.Fatalf("NetworkPolicy row = %+v, %v; want no result and an error wrapping netpol.ErrEmptyIngress", res, err)
	}
	if !strings.Contains(err.Error(), "NetworkPolicy "+clientKey(h).String()) {
		t.Errorf("error %q does not name the NetworkPolicy", err)
	}
	if c := meta.FindStatusCondition(h.Status.Conditions, controller.ConditionNetworkPolicyReady); c == nil || *c != verdict {
		t.Errorf("NetworkPolicyReady = %+v, want the last verdict %+v left as it was", c, verdict)
	}
	after := &networkingv1.NetworkPolicy{}
	if err := env.Client.Get(context.Background(), clientKey(h), after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != before.ResourceVersion || len(after.Spec.Ingress) != 1 {
		t.Errorf("the NetworkPolicy changed: resourceVersion %s -> %s, %d ingress rules", before.ResourceVersion,
			after.ResourceVersion, len(after.Spec.Ingress))
	}
}

// A failed prune of older ConfigMaps (a List or a Delete the API server fails) flips
// ConfigReady to False ConfigError and propagates the error; the ConfigMaps stay until
// a prune succeeds, which keeps the current one and the newest three older ones.
func TestReasonConfigErrorPrune(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, controller.DefaultOptions())
	h := newHorizon(ns, "dashboard")
	createHorizon(t, env, h)
	target := stepTarget(env.Client)
	for i := range 5 {
		h.Spec.ExtraConfig = map[string]string{"SESSION_TIMEOUT": fmt.Sprint(600 + i)}
		if _, err := controller.ReasonsRunStep(context.Background(), rec, "Config", target, h); err != nil {
			t.Fatal(err)
		}
	}
	configMaps := func() int {
		list := &corev1.ConfigMapList{}
		if err := env.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, controller.ConfigBaseName(h)+"-") {
				n++
			}
		}
		return n
	}
	if n := configMaps(); n != 5 {
		t.Fatalf("%d ConfigMaps after five renders, want 5", n)
	}
	for _, verb := range []faults.Verb{faults.VerbList, faults.VerbDelete} {
		t.Run(string(verb), func(t *testing.T) {
			inj := faults.NewInjector()
			inj.Arm(verb, 1, faults.Internal)
			h := h.DeepCopy()
			res, err := controller.ReasonsRunStep(context.Background(), rec, "Prune", stepTarget(inj.Client(env.Client)), h)
			if !inj.Fired() {
				t.Fatalf("the prune made no %s call", verb)
			}
			if !errors.Is(err, faults.ErrInjected) || !res.IsZero() {
				t.Fatalf("prune = %+v, %v; want no result and the injected error", res, err)
			}
			expectStepCondition(t, h, wantCondition{controller.ConditionConfigReady, metav1.ConditionFalse,
				controller.ReasonConfigError, "pruning older ConfigMaps: "})
			if n := configMaps(); n != 5 {
				t.Errorf("%d ConfigMaps after a failed prune, want all 5", n)
			}
		})
	}
	if _, err := controller.ReasonsRunStep(context.Background(), rec, "Prune", target, h); err != nil {
		t.Fatal(err)
	}
	expectStepCondition(t, h, wantCondition{controller.ConditionConfigReady, metav1.ConditionTrue,
		controller.ReasonConfigRendered, h.Status.ConfigMap})
	if n := configMaps(); n != 1+controller.RetainConfigMaps {
		t.Errorf("%d ConfigMaps after the prune, want the current one and %d older", n, controller.RetainConfigMaps)
	}
}

// On a cluster without the Gateway API, VPA and Keystone CRDs, a Horizon that asks for
// a route and a VerticalPodAutoscaler and names an identity backend gets
// GatewayAPINotInstalled, VPANotInstalled and IdentityBackendsNotInstalled, Ready names
// the first of them (WebSSOReady, earliest in the pipeline), and the rest of the
// dashboard runs: the operator starts without the backend watch.
func TestReasonsAPINotInstalled(t *testing.T) {
	t.Parallel()
	bare, err := testenv.Start(testenv.Options{
		Scheme: env.Scheme,
		CRDSources: []testenv.CRDSource{{Module: testenv.ESOModule, Version: testenv.ESOVersion, Files: []string{
			"config/crds/bases/external-secrets.io_externalsecrets.yaml",
			"config/crds/bases/external-secrets.io_secretstores.yaml",
			"config/crds/bases/external-secrets.io_clustersecretstores.yaml",
		}}},
		CRDPaths: []string{"../config/crd/bases"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := bare.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	ns := bare.Namespace(t)
	startOperator(t, ns, operatorOptions{mgmt: bare})
	store := &esov1.ClusterSecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: secrets.OpenBaoClusterStoreName},
		Spec:       esov1.SecretStoreSpec{Provider: simulate.OpenBaoProvider()},
	}
	if err := bare.Client.Create(context.Background(), store); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkClusterSecretStoreReady(context.Background(), bare.Client, store.Name); err != nil {
		t.Fatal(err)
	}
	h := ssoHorizon(ns, "dashboard", "corp")
	h.Spec.Gateway = &v1alpha1.GatewaySpec{ParentRef: v1alpha1.GatewayParentRef{Name: "public"}, Hostname: "dashboard.example.com"}
	h.Spec.VPA = &v1alpha1.VPASpec{Enabled: true}
	createHorizon(t, bare, h)
	syncKeyOn(t, bare, h, map[string][]byte{controller.SecretKeyDataKey: []byte("k")})
	// No controllers run on this cluster: play the Deployment controller.
	testenv.Eventually(t, 30*time.Second, "Deployment marked available", func(ctx context.Context) (bool, error) {
		_, err := simulate.MarkDeploymentAvailable(ctx, bare.Client, clientKey(h))
		return err == nil, err
	})
	const noRoutes = "a gateway is configured but the cluster does not serve gateway.networking.k8s.io/v1 HTTPRoute"
	const noBackends = "the management cluster does not serve KeystoneIdentityBackends (keystone.openstack.c5c3.io/v1alpha1)"
	expectReasons(t, bare, h,
		wantCondition{controller.ConditionDeploymentReady, metav1.ConditionTrue, controller.ReasonDeploymentReady, ""},
		wantCondition{controller.ConditionHTTPRouteReady, metav1.ConditionFalse, "GatewayAPINotInstalled", noRoutes},
		wantCondition{controller.ConditionHorizonAPIReady, metav1.ConditionTrue, health.ReasonHealthy, ""},
		wantCondition{controller.ConditionVPAReady, metav1.ConditionFalse, "VPANotInstalled",
			fmt.Sprintf("the cluster does not serve autoscaling.k8s.io/v1 VerticalPodAutoscaler; install the VerticalPodAutoscaler CRDs to honour the request for %s/dashboard", ns)},
		wantCondition{controller.ConditionWebSSOReady, metav1.ConditionFalse, controller.ReasonIdentityBackendsNotInstalled, noBackends},
		readyBlockedBy(controller.ConditionWebSSOReady, controller.ReasonIdentityBackendsNotInstalled, noBackends),
	)
}

// No row of the step table returns a requeue together with an error: every call of
// every verb each row makes is failed once, and each failure surfaces as an error
// (wrapping the injected one) with a zero result.
func TestStepsNeverResultWithError(t *testing.T) {
	t.Parallel()
	ns := env.Namespace(t)
	storeReady(t)
	login := newLoginPage(t)
	opts := controller.DefaultOptions()
	opts.ProbeURL = func(*v1alpha1.Horizon) string { return login.URL(controller.LoginPath) }
	opts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}
	rec := newStepReconciler(t, opts)
	h := newHorizon(ns, "dashboard")
	h.Spec.Gateway = &v1alpha1.GatewaySpec{ParentRef: v1alpha1.GatewayParentRef{Name: "public"}, Hostname: "dashboard.example.com"}
	h.Spec.Autoscaling = &commonv1.AutoscalingSpec{MaxReplicas: 3}
	h.Spec.VPA = &v1alpha1.VPASpec{Enabled: true}
	h.Spec.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{}}}
	createHorizon(t, env, h)

	// Bring every row to its converged state once, playing ESO, the Deployment
	// controller and the Gateway.
	target := stepTarget(env.Client)
	run := func(name string) (ctrl.Result, error) {
		return controller.ReasonsRunStep(context.Background(), rec, name, target, h)
	}
	if _, err := run("Secrets"); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkExternalSecretSynced(context.Background(), env.Client, secretKeyOf(h),
		map[string][]byte{controller.SecretKeyDataKey: []byte("k")}); err != nil {
		t.Fatal(err)
	}
	for _, name := range controller.ReasonsStepNames(rec) {
		if _, err := run(name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		switch name {
		case "Deployment":
			if _, err := simulate.MarkDeploymentAvailable(context.Background(), env.Client, clientKey(h)); err != nil {
				t.Fatal(err)
			}
		case "HTTPRoute":
			if _, err := simulate.SetHTTPRouteAccepted(context.Background(), env.Client, clientKey(h), metav1.ConditionTrue,
				"Accepted", "accepted", 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, name := range controller.ReasonsStepNames(rec) {
		if res, err := run(name); err != nil || !res.IsZero() {
			t.Fatalf("%s on a converged Horizon = %+v, %v; want zero and nil", name, res, err)
		}
	}

	faulted := map[string]int{}
	for _, name := range controller.ReasonsStepNames(rec) {
		for _, verb := range faults.Verbs() {
			counter := faults.NewInjector()
			if _, err := controller.ReasonsRunStep(context.Background(), rec, name, stepTarget(counter.Client(env.Client)), h.DeepCopy()); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for nth := 1; nth <= counter.Calls(verb); nth++ {
				inj := faults.NewInjector()
				inj.Arm(verb, nth, faults.Internal)
				res, err := controller.ReasonsRunStep(context.Background(), rec, name, stepTarget(inj.Client(env.Client)), h.DeepCopy())
				switch {
				case err != nil && !res.IsZero():
					t.Errorf("%s, %s call %d failed: result %+v returned together with %v", name, verb, nth, res, err)
				case inj.Fired() && !errors.Is(err, faults.ErrInjected):
					t.Errorf("%s, %s call %d failed: returned %+v, %v; want the injected error", name, verb, nth, res, err)
				}
				faulted[name+" "+string(verb)]++
			}
		}
	}
	for _, row := range []string{"Secrets Get", "Config Get", "Deployment Apply", "Prune List", "HTTPRoute Apply",
		"HPA Apply", "VPA Apply", "VPA List", "NetworkPolicy Apply"} {
		if faulted[row] == 0 {
			t.Errorf("no call failed for %s; faulted calls: %v", row, faulted)
		}
	}
	t.Logf("faulted calls: %v", faulted)
}
