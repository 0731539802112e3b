package httproute_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/c5c3/reconciler-sdk/httproute"
)

func TestBuild(t *testing.T) {
	key := client.ObjectKey{Namespace: "openstack", Name: "dashboard"}
	backend := httproute.Backend{ServiceName: "dashboard", Port: 8080}
	route := func(parent gatewayv1.ParentReference, path string, hostnames ...gatewayv1.Hostname) *gatewayv1.HTTPRoute {
		return &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "dashboard", Namespace: "openstack"},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{parent}},
				Hostnames:       hostnames,
				Rules: []gatewayv1.HTTPRouteRule{{
					Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{
						Type: new(gatewayv1.PathMatchPathPrefix), Value: new(path)}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
						BackendObjectReference: gatewayv1.BackendObjectReference{
							Name: "dashboard", Port: new(gatewayv1.PortNumber(8080))}}}},
				}},
			},
		}
	}
	cases := map[string]struct {
		key     client.ObjectKey
		spec    httproute.Spec
		backend httproute.Backend
		want    *gatewayv1.HTTPRoute
		wantErr []string // substrings of the error; nil: no error
	}{
		"minimal": {
			key: key, spec: httproute.Spec{ParentRef: httproute.ParentRef{Name: "public"}}, backend: backend,
			want: route(gatewayv1.ParentReference{Name: "public"}, "/"),
		},
		"full": {
			key: key, backend: backend,
			spec: httproute.Spec{
				ParentRef: httproute.ParentRef{Name: "public", Namespace: "gateways", SectionName: "https"},
				Hostnames: []string{"dashboard.example.org"}, Path: "/dashboard",
			},
			want: route(gatewayv1.ParentReference{Name: "public", Namespace: new(gatewayv1.Namespace("gateways")),
				SectionName: new(gatewayv1.SectionName("https"))}, "/dashboard", "dashboard.example.org"),
		},
		"everything wrong": {
			key:     client.ObjectKey{Name: "dashboard"},
			spec:    httproute.Spec{Path: "dashboard", Hostnames: []string{"ok.example.org", ""}},
			backend: httproute.Backend{Port: 70000},
			wantErr: []string{"HTTPRoute /dashboard", "route name and namespace", "parentRef.name must not be empty",
				`path "dashboard" must start with "/"`, "hostnames[1] must not be empty",
				"backend service name", "backend port 70000"},
		},
		"port zero": {
			key: key, spec: gatewayv1Spec(), backend: httproute.Backend{ServiceName: "dashboard"},
			wantErr: []string{"backend port 0 must be within 1-65535"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := httproute.Build(tc.key, tc.spec, tc.backend)
			if tc.wantErr != nil {
				if !errors.Is(err, httproute.ErrInvalidSpec) || got != nil {
					t.Fatalf("Build = (%v, %v), want ErrInvalidSpec", got, err)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("route (-want +got):\n%s", diff)
			}
		})
	}
}

func gatewayv1Spec() httproute.Spec {
	return httproute.Spec{ParentRef: httproute.ParentRef{Name: "public"}}
}

func TestSpecDeepCopy(t *testing.T) {
	var nilSpec *httproute.Spec
	if nilSpec.DeepCopy() != nil {
		t.Error("DeepCopy of nil is not nil")
	}
	orig := &httproute.Spec{ParentRef: httproute.ParentRef{Name: "public"}, Hostnames: []string{"a.example.org"}, Path: "/x"}
	cp := orig.DeepCopy()
	if diff := cmp.Diff(orig, cp); diff != "" {
		t.Fatalf("copy differs (-orig +copy):\n%s", diff)
	}
	cp.Hostnames[0] = "b.example.org"
	cp.ParentRef.Name = "private"
	if orig.Hostnames[0] != "a.example.org" || orig.ParentRef.Name != "public" {
		t.Errorf("mutating the copy changed the original: %+v", orig)
	}
}
