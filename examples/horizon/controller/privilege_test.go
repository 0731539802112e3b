package controller_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/controller"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// forbiddenLog records every request the API server answered with 403 Forbidden.
type forbiddenLog struct {
	mu   sync.Mutex
	seen []string
}

// wrap returns rt with every Forbidden answer recorded as "METHOD path?query".
func (f *forbiddenLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode == http.StatusForbidden {
			f.mu.Lock()
			f.seen = append(f.seen, req.Method+" "+req.URL.RequestURI())
			f.mu.Unlock()
		}
		return resp, err
	})
}

// requests returns the Forbidden requests recorded so far.
func (f *forbiddenLog) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.seen)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// fullHorizon is a Horizon in ns that asks for every optional child: an HTTPRoute, an
// HPA, a VPA and a NetworkPolicy.
func fullHorizon(ns, name string) *v1alpha1.Horizon {
	h := newHorizon(ns, name)
	h.Spec.Gateway = &v1alpha1.GatewaySpec{
		ParentRef: v1alpha1.GatewayParentRef{Name: "public"},
		Hostname:  "dashboard.example.com",
	}
	h.Spec.Autoscaling = &commonv1.AutoscalingSpec{MinReplicas: ptr.To(int32(1)), MaxReplicas: 3}
	h.Spec.VPA = &v1alpha1.VPASpec{Enabled: true}
	h.Spec.NetworkPolicy = &v1alpha1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
		From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{"kubernetes.io/metadata.name": "ingress"},
		}}},
	}}}
	return h
}

// The operator runs through a full pass to Ready — every kind of child, the watches,
// the prune with its listing of the namespace's workloads — as a user bound to nothing
// but the generated ClusterRole horizon-operator, and the API server never answers it
// with Forbidden.
func TestLeastPrivilege(t *testing.T) {
	roles, err := testenv.LoadClusterRoles("../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.ConfigAs(t, "horizon-operator", roles...))
	forbidden := &forbiddenLog{}
	cfg.Wrap(forbidden.wrap)

	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{cfg: cfg})
	h := fullHorizon(ns, "least")
	if err := env.Client.Create(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	w := newWorld(env.Client, "least-privilege-key") // store, ESO and the Gateway
	waitReady(t, h, w)

	key := client.ObjectKey{Namespace: ns, Name: h.Name}
	for _, obj := range []client.Object{
		&appsv1.Deployment{}, &gatewayv1.HTTPRoute{}, &autoscalingv2.HorizontalPodAutoscaler{},
		&vpav1.VerticalPodAutoscaler{}, &networkingv1.NetworkPolicy{},
	} {
		if err := env.Client.Get(context.Background(), key, obj); err != nil {
			t.Fatalf("%T %s: %v", obj, key, err)
		}
		if ref := metav1.GetControllerOf(obj); ref == nil || ref.UID != h.UID {
			t.Errorf("%T %s: controller reference %v, want the Horizon", obj, key, ref)
		}
	}

	// Enough settings changes that the prune has ConfigMaps to delete, so it lists the
	// namespace's workloads to spare the mounted ones.
	for _, zone := range []string{"Europe/Berlin", "Asia/Tokyo", "America/Chicago", "Europe/Lisbon", "Asia/Kolkata"} {
		renderedAfter(t, h)
		updateHorizon(t, env, h, func(h *v1alpha1.Horizon) { h.Spec.TimeZone = zone })
		waitReady(t, h, w)
	}
	if err := env.Client.Get(context.Background(), clientKey(h), h); err != nil {
		t.Fatal(err)
	}
	// Six renderings: the Deployment keeps three old ReplicaSets, as many as the prune
	// retains, so the prune deletes the two beyond the current one and the three retained.
	last := time.Now()
	testenv.Eventually(t, 60*time.Second, "the prune deletes the oldest ConfigMaps", func(ctx context.Context) (bool, error) {
		names, err := configMapsOf(ctx, h)
		if err != nil || len(names) == 1+controller.RetainConfigMaps && slices.Contains(names, h.Status.ConfigMap) {
			return err == nil, err
		}
		if time.Since(last) > 2*time.Second {
			poke(t, h)
			last = time.Now()
		}
		return false, fmt.Errorf("ConfigMaps %v (current %s)", names, h.Status.ConfigMap)
	})
	time.Sleep(2 * time.Second) // informers started by the prune meet their watches
	if seen := forbidden.requests(); len(seen) > 0 {
		t.Fatalf("the operator was refused %d requests under its ClusterRole:\n%v", len(seen), seen)
	}
}
