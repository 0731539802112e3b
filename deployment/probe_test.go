package deployment_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/c5c3/reconciler-sdk/deployment"
)

func TestHTTPProbes(t *testing.T) {
	get := func(failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromString("http"),
			}},
			PeriodSeconds: 10, TimeoutSeconds: 5, FailureThreshold: failures,
		}
	}
	readiness, startup := deployment.HTTPProbes("/healthz")
	for _, tc := range []struct {
		name      string
		got, want *corev1.Probe
	}{
		{"readiness", readiness, get(3)},
		{"startup", startup, get(30)},
		{"HTTPProbe", deployment.HTTPProbe("/healthz", 7), get(7)},
	} {
		if d := cmp.Diff(tc.want, tc.got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
	if readiness == startup || readiness.HTTPGet == startup.HTTPGet {
		t.Error("HTTPProbes shares one probe between readiness and startup: a change of one would change the other")
	}
}

// Workload keeps DefaultRevisionHistoryLimit old ReplicaSets and leaves the replica
// count to the autoscaler when autoscaled.
func TestWorkload(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "app", Namespace: "ns", Labels: map[string]string{"a": "b"}}
	sel := map[string]string{"app": "x"}
	tpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	for _, tc := range []struct {
		name       string
		replicas   *int32
		autoscaled bool
		want       *int32
	}{
		{"fixed", ptr.To[int32](3), false, ptr.To[int32](3)},
		{"default", nil, false, nil},
		{"autoscaled", ptr.To[int32](3), true, nil},
	} {
		want := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Replicas: tc.want, RevisionHistoryLimit: ptr.To(deployment.DefaultRevisionHistoryLimit),
			Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: tpl}}
		if d := cmp.Diff(want, deployment.Workload(meta, sel, tc.replicas, tc.autoscaled, tpl)); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}
