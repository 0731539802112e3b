package v1alpha1_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// *Horizon is what the SDK's reconcile loop drives.
var _ reconcile.Object = &v1alpha1.Horizon{}

// fullSpec returns a valid HorizonSpec with every field set to a value other than its
// zero value and default, so that a copy or a write that drops a field shows up.
func fullSpec() v1alpha1.HorizonSpec {
	return v1alpha1.HorizonSpec{
		Image:            "quay.io/openstack.kolla/horizon:2025.1-ubuntu-noble",
		Replicas:         ptr.To[int32](3),
		KeystoneEndpoint: "http://keystone.openstack.svc:5000/v3",
		SecretStoreRef:   &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-store"},
		SecretKey: v1alpha1.SecretKeySpec{
			RemoteKey:       "openstack/horizon/secret-key",
			Property:        "key",
			RefreshInterval: &metav1.Duration{Duration: 30 * time.Minute},
		},
		MemcachedServers: []string{"memcached-0.memcached:11211", "[fd00::1]:11211"},
		Debug:            true,
		TimeZone:         "Europe/Berlin",
		WebSSO: &v1alpha1.WebSSOSpec{
			Enabled: true,
			Choices: []v1alpha1.WebSSOChoice{
				{ID: "credentials", Label: "Keystone credentials"},
				{ID: "oidc", Label: "Company single sign-on"},
			},
			InitialChoice:    "oidc",
			IDPMapping:       map[string]v1alpha1.IDPMapping{"oidc": {IDP: "company-idp", Protocol: "openid"}},
			KeystoneURL:      "https://keystone.example.com/v3",
			IdentityBackends: []v1alpha1.IdentityBackendRef{{Name: "corp-sso"}},
		},
		MultiDomain: &v1alpha1.MultiDomainSpec{
			Enabled:       true,
			DefaultDomain: "customers",
			Dropdown:      true,
			Domains:       []v1alpha1.DomainChoice{{ID: "customers", Label: "Customers"}},
		},
		ExtraConfig: map[string]string{"SESSION_TIMEOUT": "3600"},
		Gateway: &v1alpha1.GatewaySpec{
			ParentRef: v1alpha1.GatewayParentRef{Name: "public", Namespace: "gateway-system", SectionName: "https"},
			Hostname:  "dashboard.example.com",
			Path:      "/dashboard",
		},
		Autoscaling: &commonv1.AutoscalingSpec{
			MinReplicas:          ptr.To[int32](2),
			MaxReplicas:          6,
			TargetCPUUtilization: ptr.To[int32](70),
		},
		VPA: &v1alpha1.VPASpec{Enabled: true, UpdateMode: v1alpha1.VPAUpdateModeInitial},
		NetworkPolicy: &v1alpha1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": "gateway-system"},
			}}},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(8080))}},
		}}},
		TargetClusterRef: &commonv1.TargetClusterRefSpec{Name: "region-one"},
	}
}

// fullHorizon returns a Horizon with every field, desired and observed, set.
func fullHorizon() *v1alpha1.Horizon {
	return &v1alpha1.Horizon{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Horizon"},
		ObjectMeta: metav1.ObjectMeta{Name: "horizon", Namespace: "openstack", Labels: map[string]string{"team": "dashboard"}},
		Spec:       fullSpec(),
		Status: v1alpha1.HorizonStatus{
			ObservedGeneration: 4,
			Conditions: []metav1.Condition{{
				Type: "Ready", Status: metav1.ConditionTrue, Reason: "Ready", Message: "the dashboard is available",
				ObservedGeneration: 4, LastTransitionTime: metav1.NewTime(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)),
			}},
			Endpoint:  "http://horizon.openstack.svc:8080/",
			ConfigMap: "horizon-settings-5d8f7c",
		},
	}
}

// zeroFields lists the fields under v that hold their zero value, descending into the
// structs, pointers, slices and maps of this package's types; a field of another
// package's type only has to be non-zero.
func zeroFields(v reflect.Value, path string) []string {
	if v.IsZero() {
		return []string{path}
	}
	switch v.Kind() {
	case reflect.Pointer:
		return zeroFields(v.Elem(), path)
	case reflect.Slice:
		var out []string
		for i := range v.Len() {
			out = append(out, zeroFields(v.Index(i), path+"[]")...)
		}
		return out
	case reflect.Map:
		var out []string
		for _, k := range v.MapKeys() {
			out = append(out, zeroFields(v.MapIndex(k), path+"{}")...)
		}
		return out
	case reflect.Struct:
		if !strings.HasPrefix(v.Type().PkgPath(), "github.com/c5c3/reconciler-sdk/") {
			return nil
		}
		var out []string
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out = append(out, zeroFields(v.Field(i), path+"."+f.Name)...)
			}
		}
		return out
	default:
		return nil
	}
}

// TestFullHorizonSetsEveryField keeps the deep-copy and round-trip tests honest: a
// field added to the API and left out of fullHorizon fails here.
func TestFullHorizonSetsEveryField(t *testing.T) {
	if zero := zeroFields(reflect.ValueOf(fullHorizon()), "Horizon"); len(zero) > 0 {
		t.Errorf("fullHorizon leaves fields at their zero value: %v", zero)
	}
}

// TestDeepCopy copies a full Horizon and checks that the copy equals the original and
// shares no memory with it: mutating everything reachable from the copy leaves the
// original as it was.
func TestDeepCopy(t *testing.T) {
	orig := fullHorizon()
	cp := orig.DeepCopy()
	if diff := cmp.Diff(fullHorizon(), cp); diff != "" {
		t.Fatalf("copy differs from the original (-want +got):\n%s", diff)
	}

	s := &cp.Spec
	*s.Replicas = 9
	s.SecretStoreRef.Name = "changed"
	s.SecretKey.RefreshInterval.Duration = time.Second
	s.MemcachedServers[0] = "changed:1"
	s.WebSSO.Choices[0].Label = "changed"
	s.WebSSO.IDPMapping["oidc"] = v1alpha1.IDPMapping{IDP: "changed", Protocol: "changed"}
	s.WebSSO.IdentityBackends[0].Name = "changed"
	s.MultiDomain.Domains[0].Label = "changed"
	s.ExtraConfig["SESSION_TIMEOUT"] = "1"
	s.Gateway.ParentRef.Name = "changed"
	*s.Autoscaling.MinReplicas = 5
	*s.Autoscaling.TargetCPUUtilization = 5
	s.VPA.UpdateMode = v1alpha1.VPAUpdateModeOff
	s.NetworkPolicy.Ingress[0].From[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] = "changed"
	*s.NetworkPolicy.Ingress[0].Ports[0].Port = intstr.FromInt32(1)
	s.TargetClusterRef.Name = "changed"
	cp.Status.Conditions[0].Status = metav1.ConditionFalse
	cp.Labels["team"] = "changed"
	if diff := cmp.Diff(fullHorizon(), orig); diff != "" {
		t.Errorf("mutating the copy changed the original (-want +got):\n%s", diff)
	}

	obj := fullHorizon().DeepCopyObject()
	if diff := cmp.Diff(fullHorizon(), obj); diff != "" {
		t.Errorf("DeepCopyObject (-want +got):\n%s", diff)
	}
	list := &v1alpha1.HorizonList{Items: []v1alpha1.Horizon{*fullHorizon()}}
	listCopy := list.DeepCopyObject().(*v1alpha1.HorizonList)
	listCopy.Items[0].Spec.WebSSO.Choices[1].ID = "changed"
	if diff := cmp.Diff(fullSpec(), list.Items[0].Spec); diff != "" {
		t.Errorf("mutating the list copy changed the original (-want +got):\n%s", diff)
	}
	if (*v1alpha1.Horizon)(nil).DeepCopy() != nil {
		t.Error("DeepCopy of a nil Horizon is not nil")
	}
}

// TestTypedRoundTrip writes a full Horizon from the Go types with strict field
// validation and reads it back, so every JSON name matches the CRD's schema and no
// value is pruned or altered on the way.
func TestTypedRoundTrip(t *testing.T) {
	ctx := context.Background()
	h := &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Name: "typed", Namespace: env.Namespace(t)},
		Spec:       fullSpec(),
	}
	strict := client.WithFieldValidation(env.Client, metav1.FieldValidationStrict)
	if err := strict.Create(ctx, h); err != nil {
		t.Fatalf("create: %v", err)
	}
	got := &v1alpha1.Horizon{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if diff := cmp.Diff(fullSpec(), got.Spec); diff != "" {
		t.Errorf("spec read back (-want +got):\n%s", diff)
	}

	// The status subresource: a full status is written through it and read back.
	got.Status = fullHorizon().Status
	got.Status.ObservedGeneration = got.Generation
	want := *got.Status.DeepCopy()
	if err := env.Client.Status().Update(ctx, got); err != nil {
		t.Fatalf("status update: %v", err)
	}
	back := &v1alpha1.Horizon{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(h), back); err != nil {
		t.Fatalf("get: %v", err)
	}
	if diff := cmp.Diff(want, back.Status); diff != "" {
		t.Errorf("status read back (-want +got):\n%s", diff)
	}
}

// TestStatusIsASubresource checks that a write of the main resource does not change the
// status, so users cannot overwrite what the operator reports.
func TestStatusIsASubresource(t *testing.T) {
	ctx := context.Background()
	h := &v1alpha1.Horizon{
		ObjectMeta: metav1.ObjectMeta{Name: "status", Namespace: env.Namespace(t)},
		Spec:       fullSpec(),
		Status:     v1alpha1.HorizonStatus{Endpoint: "http://elsewhere/"},
	}
	if err := env.Client.Create(ctx, h); err != nil {
		t.Fatalf("create: %v", err)
	}
	got := &v1alpha1.Horizon{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(h), got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.Status.Endpoint != "" {
		t.Errorf("status.endpoint = %q after a create, want it ignored", got.Status.Endpoint)
	}
}

// TestConditions checks that Conditions points at the status' list itself.
func TestConditions(t *testing.T) {
	h := &v1alpha1.Horizon{}
	conds := h.Conditions()
	*conds = append(*conds, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue})
	if len(h.Status.Conditions) != 1 || h.Status.Conditions[0].Type != "Ready" {
		t.Errorf("status.conditions = %v after appending through Conditions()", h.Status.Conditions)
	}
}
