package capability_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/c5c3/reconciler-sdk/capability"
)

var (
	httpRouteGVK   = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}
	certificateGVK = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}
	vpaGVK         = schema.GroupVersionKind{Group: "autoscaling.k8s.io", Version: "v1", Kind: "VerticalPodAutoscaler"}
)

// newMapper returns a fresh dynamic RESTMapper for cfg, as every controller-runtime
// client and manager has: nothing discovered yet.
func newMapper(t testing.TB, cfg *rest.Config) meta.RESTMapper {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// installWidgetCRD installs a namespaced CRD Widget in a fresh made-up group, waits until
// it is Established and returns its kind. The CRD is deleted when the test ends.
func installWidgetCRD(t testing.TB, group string) schema.GroupVersionKind {
	t.Helper()
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: new(true)}},
			}},
		},
	}
	if err := env.Client.Create(ctx, crd); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Client.Delete(context.Background(), crd); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete CRD %s: %v", crd.Name, err)
		}
	})
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), got); err != nil {
			return false, err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s not established: %v", crd.Name, err)
	}
	return schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}
}

func madeUpGroup() string { return "cap-" + rand.String(8) + ".example.com" }

func TestIsKindServed(t *testing.T) {
	cases := map[string]struct {
		gvk  schema.GroupVersionKind
		want bool
	}{
		"Gateway API HTTPRoute":    {gvk: httpRouteGVK, want: true},
		"cert-manager Certificate": {gvk: certificateGVK, want: true},
		"VPA":                      {gvk: vpaGVK, want: true},
		"core ConfigMap":           {gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, want: true},
		"made-up group":            {gvk: schema.GroupVersionKind{Group: "nothing.example.com", Version: "v1", Kind: "Thing"}, want: false},
		"unknown kind in a served group": {
			gvk: schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "SpaceRoute"}, want: false},
		"unserved version of a served group": {
			gvk: schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v9", Kind: "HTTPRoute"}, want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// Both a fresh mapper (first probe runs the initial, aggregated discovery) and
			// a warm one (a miss re-discovers only the group/version) must agree.
			fresh := newMapper(t, env.Config)
			warm := newMapper(t, env.Config)
			if _, err := capability.IsKindServed(warm, schema.GroupVersionKind{Version: "v1", Kind: "Pod"}); err != nil {
				t.Fatal(err)
			}
			for mapperName, m := range map[string]meta.RESTMapper{"fresh": fresh, "warm": warm} {
				got, err := capability.IsKindServed(m, tc.gvk)
				if err != nil {
					t.Fatalf("%s mapper: IsKindServed(%s): %v", mapperName, tc.gvk, err)
				}
				if got != tc.want {
					t.Errorf("%s mapper: IsKindServed(%s) = %v, want %v", mapperName, tc.gvk, got, tc.want)
				}
			}
		})
	}
}

func TestIsKindServedNoticesCRDInstalledLater(t *testing.T) {
	mapper := newMapper(t, env.Config)
	group := madeUpGroup()
	gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Widget"}

	if served, err := capability.IsKindServed(mapper, gvk); err != nil || served {
		t.Fatalf("before install: (%v, %v), want (false, nil)", served, err)
	}
	installWidgetCRD(t, group)
	// Established is set before discovery publishes the group; poll the probe itself.
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true,
		func(context.Context) (bool, error) { return capability.IsKindServed(mapper, gvk) })
	if err != nil {
		t.Fatalf("the same mapper never reported the installed CRD as served: %v", err)
	}
}

func TestIsKindServedDiscoveryFailure(t *testing.T) {
	// A cluster whose API server is gone: a closed port on 127.0.0.1.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = "https://" + addr
	cfg.Timeout = 5 * time.Second
	unreachable := newMapper(t, cfg)

	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "example.com"}, "v1")
	unavailable := apierrors.NewServiceUnavailable("metrics.k8s.io/v1beta1 is unavailable")
	gvMissing := schema.GroupVersion{Group: "example.com", Version: "v1"}
	gvBroken := schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}

	cases := map[string]struct {
		mapper     meta.RESTMapper
		wantServed bool
		wantFailed bool
	}{
		"API server unreachable": {mapper: unreachable, wantFailed: true},
		"mapper error":           {mapper: failingMapper{err: errors.New("etcdserver: leader changed")}, wantFailed: true},
		"discovery 503": {mapper: failingMapper{err: &apiutil.ErrResourceDiscoveryFailed{gvBroken: unavailable}},
			wantFailed: true},
		"discovery 404 and 503": {mapper: failingMapper{err: &apiutil.ErrResourceDiscoveryFailed{gvMissing: notFound, gvBroken: unavailable}},
			wantFailed: true},
		"empty discovery failure": {mapper: failingMapper{err: &apiutil.ErrResourceDiscoveryFailed{}}, wantFailed: true},
		"discovery 404 only is not installed": {
			mapper: failingMapper{err: &apiutil.ErrResourceDiscoveryFailed{gvMissing: notFound}}},
		"wrapped no-match is not installed": {
			mapper: failingMapper{err: &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "example.com", Kind: "Thing"}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			served, err := capability.IsKindServed(tc.mapper, httpRouteGVK)
			if served != tc.wantServed {
				t.Errorf("served = %v, want %v", served, tc.wantServed)
			}
			if got := errors.Is(err, capability.ErrProbeFailed); got != tc.wantFailed {
				t.Fatalf("err = %v, want ErrProbeFailed: %v", err, tc.wantFailed)
			}
			if tc.wantFailed && err != nil {
				if want := "HTTPRoute.gateway.networking.k8s.io/v1"; !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name the kind %q", err, want)
				}
			}
		})
	}
}

func TestIsKindServedErrorNamesCoreKind(t *testing.T) {
	_, err := capability.IsKindServed(failingMapper{err: errors.New("boom")}, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	if !errors.Is(err, capability.ErrProbeFailed) || !strings.Contains(err.Error(), "is ConfigMap/v1 served") {
		t.Errorf("err = %v, want ErrProbeFailed naming ConfigMap/v1", err)
	}
}

func TestIsKindServedBadInput(t *testing.T) {
	if _, err := capability.IsKindServed(nil, httpRouteGVK); !errors.Is(err, capability.ErrNilMapper) {
		t.Errorf("nil mapper: err = %v, want ErrNilMapper", err)
	}
	m := failingMapper{err: errors.New("must not be called")}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute"},
		{Group: "gateway.networking.k8s.io", Version: "v1"},
	} {
		if _, err := capability.IsKindServed(m, gvk); !errors.Is(err, capability.ErrIncompleteGVK) {
			t.Errorf("%v: err = %v, want ErrIncompleteGVK", gvk, err)
		}
	}
}

// failingMapper is a RESTMapper whose RESTMapping fails with err; it stands in for
// discovery failures the API server cannot be made to produce on demand.
type failingMapper struct {
	meta.RESTMapper
	err error
}

func (f failingMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, f.err
}
