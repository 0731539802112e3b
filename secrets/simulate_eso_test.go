package secrets_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// TestESOSimulator pins the behaviour of the testenv ESO simulator that the tests of
// this package stand on: it writes the target Secret per creationPolicy, as ESO does.
func TestESOSimulator(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	ref := secrets.EffectiveStoreRef(nil)
	data := map[string][]byte{"password": []byte("from-backend")}
	createSecret(t, ns, "merge-into", map[string][]byte{"username": []byte("admin")})

	cases := map[string]struct {
		policy     esov1.ExternalSecretCreationPolicy
		target     string
		template   *esov1.ExternalSecretTemplate
		wantSecret map[string][]byte // nil: no Secret written
		wantOwned  bool
		wantType   corev1.SecretType
	}{
		"default policy is Owner": {
			target: "", wantSecret: data, wantOwned: true, wantType: corev1.SecretTypeOpaque,
		},
		"Orphan: no owner reference": {
			policy: esov1.CreatePolicyOrphan, target: "orphan", wantSecret: data, wantType: corev1.SecretTypeOpaque,
		},
		"Merge: into the existing Secret": {
			policy: esov1.CreatePolicyMerge, target: "merge-into",
			wantSecret: map[string][]byte{"username": []byte("admin"), "password": []byte("from-backend")},
			wantType:   corev1.SecretTypeOpaque,
		},
		"None: no Secret": {policy: esov1.CreatePolicyNone, target: "none"},
		"template type and labels": {
			target: "templated", template: &esov1.ExternalSecretTemplate{Type: corev1.SecretTypeBasicAuth,
				Metadata: esov1.ExternalSecretTemplateMetadata{Labels: map[string]string{"team": "identity"}}},
			wantSecret: data, wantOwned: true, wantType: corev1.SecretTypeBasicAuth,
		},
	}
	i := 0
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			i++
			esName := fmt.Sprintf("es-%d", i)
			es := desiredExternalSecret(ns, esName, tc.target, ref)
			es.Spec.Target.CreationPolicy = tc.policy
			es.Spec.Target.Template = tc.template
			if err := env.Client.Create(ctx, es); err != nil {
				t.Fatal(err)
			}
			got, err := simulate.MarkExternalSecretSynced(ctx, env.Client, client.ObjectKeyFromObject(es), data)
			if err != nil {
				t.Fatal(err)
			}
			target := tc.target
			if target == "" {
				target = esName
			}
			if got.Status.Binding.Name != target || got.Status.RefreshTime.IsZero() || len(got.Status.Conditions) != 1 ||
				got.Status.Conditions[0].Reason != esov1.ConditionReasonSecretSynced {
				t.Errorf("status = %+v", got.Status)
			}
			s := &corev1.Secret{}
			err = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: target}, s)
			if tc.wantSecret == nil {
				if err == nil {
					t.Errorf("policy None wrote Secret %s", target)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Data) != len(tc.wantSecret) {
				t.Errorf("data keys %d, want %d", len(s.Data), len(tc.wantSecret))
			}
			for k, v := range tc.wantSecret {
				if string(s.Data[k]) != string(v) {
					t.Errorf("data[%s] differs", k)
				}
			}
			if owned := metav1.IsControlledBy(s, got); owned != tc.wantOwned {
				t.Errorf("controlled by the ExternalSecret = %v, want %v", owned, tc.wantOwned)
			}
			if s.Type != tc.wantType {
				t.Errorf("type %q, want %q", s.Type, tc.wantType)
			}
			if tc.template != nil && s.Labels["team"] != "identity" {
				t.Errorf("template labels not applied: %v", s.Labels)
			}
		})
	}

	// Merge into a Secret that does not exist fails, as in ESO.
	es := desiredExternalSecret(ns, "merge-missing", "absent", ref)
	es.Spec.Target.CreationPolicy = esov1.CreatePolicyMerge
	if err := env.Client.Create(ctx, es); err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.MarkExternalSecretSynced(ctx, env.Client, client.ObjectKeyFromObject(es), data); err == nil {
		t.Error("Merge into a missing Secret succeeded")
	}
}
