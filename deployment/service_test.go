package deployment_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/deployment"
)

func desiredService(ns string, typ corev1.ServiceType) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: map[string]string{"app": "web"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

// TestEnsureServiceKeepsAssignedFields: the server assigns clusterIP, clusterIPs,
// ipFamilies and nodePort; the SDK's field manager owns none of them, and converged
// calls write nothing and need no GET beyond apply.EnsureObject's control check.
func TestEnsureServiceKeepsAssignedFields(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")

	first := desiredService(ns, corev1.ServiceTypeNodePort)
	if err := deployment.EnsureService(ctx, env.Client, env.Scheme, owner, first); err != nil {
		t.Fatal(err)
	}
	if first.Spec.ClusterIP == "" || len(first.Spec.ClusterIPs) == 0 || len(first.Spec.IPFamilies) == 0 || first.Spec.Ports[0].NodePort == 0 {
		t.Fatalf("server did not assign the fields: %+v", first.Spec)
	}
	if ref := metav1.GetControllerOf(first); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}
	for _, mf := range first.ManagedFields {
		if mf.Manager != apply.FieldManager {
			continue
		}
		for _, f := range []string{`"f:clusterIP"`, `"f:clusterIPs"`, `"f:ipFamilies"`, `"f:nodePort"`} {
			if strings.Contains(string(mf.FieldsV1.GetRawBytes()), f) {
				t.Errorf("field manager owns %s: %s", f, mf.FieldsV1.GetRawString())
			}
		}
	}

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	if err := deployment.EnsureService(ctx, c, env.Scheme, owner, desiredService(ns, corev1.ServiceTypeNodePort)); err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	again := desiredService(ns, corev1.ServiceTypeNodePort)
	if err := deployment.EnsureService(ctx, c, env.Scheme, owner, again); err != nil {
		t.Fatal(err)
	}
	if counter.Total() != 2 || counter.Method("GET") != 1 || counter.Method("PATCH") != 1 {
		t.Errorf("converged call sent %d requests (%d GET, %d PATCH), want the control check's GET and the apply",
			counter.Total(), counter.Method("GET"), counter.Method("PATCH"))
	}
	if again.ResourceVersion != first.ResourceVersion || again.Spec.ClusterIP != first.Spec.ClusterIP ||
		again.Spec.Ports[0].NodePort != first.Spec.Ports[0].NodePort {
		t.Errorf("converged call changed the Service: rv %s -> %s, clusterIP %s -> %s, nodePort %d -> %d",
			first.ResourceVersion, again.ResourceVersion, first.Spec.ClusterIP, again.Spec.ClusterIP,
			first.Spec.Ports[0].NodePort, again.Spec.Ports[0].NodePort)
	}

	// A spec change is applied; the assigned fields survive it.
	changed := desiredService(ns, corev1.ServiceTypeNodePort)
	changed.Spec.Ports[0].TargetPort = intstr.FromInt32(9090)
	if err := deployment.EnsureService(ctx, env.Client, env.Scheme, owner, changed); err != nil {
		t.Fatal(err)
	}
	if changed.Spec.Ports[0].TargetPort.IntVal != 9090 || changed.Spec.ClusterIP != first.Spec.ClusterIP ||
		changed.Spec.Ports[0].NodePort != first.Spec.Ports[0].NodePort {
		t.Errorf("after a change: targetPort %v, clusterIP %s (was %s), nodePort %d (was %d)",
			changed.Spec.Ports[0].TargetPort, changed.Spec.ClusterIP, first.Spec.ClusterIP,
			changed.Spec.Ports[0].NodePort, first.Spec.Ports[0].NodePort)
	}
}

// TestEnsureServicePinnedFields: a pinned server-assigned field that matches the stored
// value is applied; one that conflicts is refused before any write, with an error
// naming the Service and the field.
func TestEnsureServicePinnedFields(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	stored := desiredService(ns, corev1.ServiceTypeNodePort)
	if err := deployment.EnsureService(ctx, env.Client, env.Scheme, owner, stored); err != nil {
		t.Fatal(err)
	}
	otherIP := "10.0.0.250"
	if stored.Spec.ClusterIP == otherIP {
		otherIP = "10.0.0.251"
	}
	otherPort := stored.Spec.Ports[0].NodePort + 1

	cases := map[string]struct {
		pin       func(*corev1.Service)
		wantField string // empty: no conflict
	}{
		"clusterIP matches":       {pin: func(s *corev1.Service) { s.Spec.ClusterIP = stored.Spec.ClusterIP }},
		"clusterIPs match":        {pin: func(s *corev1.Service) { s.Spec.ClusterIPs = stored.Spec.ClusterIPs }},
		"ipFamilies match":        {pin: func(s *corev1.Service) { s.Spec.IPFamilies = stored.Spec.IPFamilies }},
		"nodePort matches":        {pin: func(s *corev1.Service) { s.Spec.Ports[0].NodePort = stored.Spec.Ports[0].NodePort }},
		"clusterIP conflicts":     {pin: func(s *corev1.Service) { s.Spec.ClusterIP = otherIP }, wantField: "spec.clusterIP"},
		"headless conflicts":      {pin: func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }, wantField: "spec.clusterIP"},
		"clusterIPs conflict":     {pin: func(s *corev1.Service) { s.Spec.ClusterIPs = []string{otherIP} }, wantField: "spec.clusterIPs[0]"},
		"ipFamilies conflict":     {pin: func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} }, wantField: "spec.ipFamilies[0]"},
		"nodePort conflicts":      {pin: func(s *corev1.Service) { s.Spec.Ports[0].NodePort = otherPort }, wantField: "spec.ports[http].nodePort"},
		"unnamed port's nodePort": {pin: func(s *corev1.Service) { s.Spec.Ports[0].Name = ""; s.Spec.Ports[0].NodePort = otherPort }, wantField: "spec.ports[8080].nodePort"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			svc := desiredService(ns, corev1.ServiceTypeNodePort)
			tc.pin(svc)
			err = deployment.EnsureService(ctx, c, env.Scheme, owner, svc)
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("matching pinned value refused: %v", err)
				}
				return
			}
			if !errors.Is(err, deployment.ErrImmutableField) {
				t.Fatalf("err = %v, want ErrImmutableField", err)
			}
			for _, want := range []string{"Service " + ns + "/web", tc.wantField} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			if counter.Method("PATCH") != 0 || counter.Writes() != 0 {
				t.Errorf("conflict sent %d PATCHes (%d writes), want none", counter.Method("PATCH"), counter.Writes())
			}
			now := &corev1.Service{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(stored), now); err != nil {
				t.Fatal(err)
			}
			if now.Spec.ClusterIP != stored.Spec.ClusterIP || now.Spec.Ports[0].NodePort != stored.Spec.Ports[0].NodePort {
				t.Errorf("stored Service changed: %+v", now.Spec)
			}
		})
	}
}

// TestEnsureServicePinnedOnCreate: pinned values on a Service that does not exist yet
// are simply applied (a headless Service), and re-applying them converges.
func TestEnsureServicePinnedOnCreate(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")
	headless := func() *corev1.Service {
		s := desiredService(ns, corev1.ServiceTypeClusterIP)
		s.Spec.ClusterIP = corev1.ClusterIPNone
		return s
	}
	first := headless()
	if err := deployment.EnsureService(ctx, env.Client, env.Scheme, owner, first); err != nil {
		t.Fatal(err)
	}
	if first.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Fatalf("clusterIP = %q, want None", first.Spec.ClusterIP)
	}
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	again := headless()
	if err := deployment.EnsureService(ctx, c, env.Scheme, owner, again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != first.ResourceVersion {
		t.Errorf("converged headless Service: rv %s -> %s", first.ResourceVersion, again.ResourceVersion)
	}
	if counter.Method("GET") < 1 {
		t.Errorf("pinned fields were not checked against the stored Service (no GET)")
	}
}

func TestEnsureServiceErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "dashboard")

	t.Run("bad input", func(t *testing.T) {
		c, counter, err := env.CountingClient()
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			owner client.Object
			svc   *corev1.Service
			want  error
		}{
			{owner, nil, apply.ErrNilObject},
			{nil, desiredService(ns, ""), apply.ErrNilOwner},
			{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}}, desiredService(ns, ""), apply.ErrOwnerNotPersisted},
		} {
			if err := deployment.EnsureService(ctx, c, env.Scheme, tc.owner, tc.svc); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		}
		if counter.Total() != 0 {
			t.Errorf("bad input sent %d requests, want 0", counter.Total())
		}
	})

	t.Run("get fails", func(t *testing.T) {
		failing := interceptor.NewClient(withWatch(t), interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				return apierrors.NewServiceUnavailable("etcd is down")
			},
		})
		svc := desiredService(ns, "")
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		err := deployment.EnsureService(ctx, failing, env.Scheme, owner, svc)
		if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "Service "+ns+"/web") {
			t.Errorf("err = %v, want ServiceUnavailable naming the Service", err)
		}
	})

	t.Run("apply fails", func(t *testing.T) {
		failing := interceptor.NewClient(withWatch(t), interceptor.Funcs{
			Apply: func(ctx context.Context, c client.WithWatch, obj runtimeApplyConfiguration, opts ...client.ApplyOption) error {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "web", errors.New("denied"))
			},
		})
		err := deployment.EnsureService(ctx, failing, env.Scheme, owner, desiredService(ns, ""))
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "Service "+ns+"/web") {
			t.Errorf("err = %v, want Forbidden naming the Service", err)
		}
	})
}
