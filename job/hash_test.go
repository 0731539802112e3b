package job_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/c5c3/reconciler-sdk/job"
)

func TestPodTemplateHash(t *testing.T) {
	base := func() *corev1.PodTemplateSpec {
		tpl := desiredJob("ns", "registry.example/identity:1").Spec.Template
		tpl.Annotations = map[string]string{"a": "1", "b": "2", "c": "3"}
		return &tpl
	}
	want, err := job.PodTemplateHash(base())
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 64 {
		t.Fatalf("hash %q is not a hex SHA-256", want)
	}
	// Deterministic: built again (maps re-created, iteration order differs) gives
	// the same digest, every time.
	for range 20 {
		if got, _ := job.PodTemplateHash(base()); got != want {
			t.Fatalf("hash not deterministic: %s vs %s", got, want)
		}
	}
	cases := map[string]func(*corev1.PodTemplateSpec){
		"image":              func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "registry.example/identity:2" },
		"pod annotation":     func(p *corev1.PodTemplateSpec) { p.Annotations["config-hash"] = "abc" },
		"env var":            func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", Value: "1"}} },
		"command":            func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Command = []string{"true"} },
		"restart policy":     func(p *corev1.PodTemplateSpec) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
		"volume from secret": func(p *corev1.PodTemplateSpec) { p.Spec.Volumes = []corev1.Volume{{Name: "v"}} },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			tpl := base()
			change(tpl)
			got, err := job.PodTemplateHash(tpl)
			if err != nil {
				t.Fatal(err)
			}
			if got == want {
				t.Errorf("changing the %s did not change the hash", name)
			}
		})
	}
}
