package v1_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
)

// strict returns env's client with strict field validation: the API server rejects a
// create or update whose body names a field the CRD schema does not have, instead of
// silently pruning it. Every write of a mirror object in these tests goes through it,
// so a wrong JSON name fails the test.
func strict() client.Client {
	return client.WithFieldValidation(env.Client, metav1.FieldValidationStrict)
}

// timeEqual compares metav1.Time values at the API's one-second precision.
var timeEqual = cmp.Comparer(func(a, b metav1.Time) bool { return a.Equal(&b) })

// now is the current time truncated to the API's precision.
func now() metav1.Time { return metav1.NewTime(time.Now().Truncate(time.Second)) }

// newOwner creates a ConfigMap in ns to act as the controlling owner of applied objects.
func newOwner(t testing.TB, ns string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatalf("create owner: %v", err)
	}
	return owner
}

// fullExternalSecret sets every field the mirror models (TestFullObjectsSetEveryField
// checks that), so writing it with strict validation proves each JSON name.
func fullExternalSecret(ns, name string) *esov1.ExternalSecret {
	return &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: esov1.SecretStoreRef{Name: "openbao-cluster-store", Kind: esov1.ClusterSecretStoreKind},
			Target: esov1.ExternalSecretTarget{
				Name:           name + "-secret",
				CreationPolicy: esov1.CreatePolicyOrphan,
				DeletionPolicy: esov1.DeletionPolicyDelete,
				Template: &esov1.ExternalSecretTemplate{
					Type:          corev1.SecretTypeOpaque,
					EngineVersion: "v2",
					Metadata: esov1.ExternalSecretTemplateMetadata{
						Annotations: map[string]string{"example.com/origin": "openbao"},
						Labels:      map[string]string{"app": "identity"},
					},
					MergePolicy: "Merge",
					Data:        map[string]string{"url": "mysql://identity:{{ .password }}@db/identity"},
				},
			},
			RefreshInterval: &metav1.Duration{Duration: 15 * time.Minute},
			Data: []esov1.ExternalSecretData{{
				SecretKey: "password",
				RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "kv/identity/db", Property: "password", Version: "3"},
			}},
			DataFrom: []esov1.ExternalSecretDataFromRemoteRef{{
				Extract: &esov1.ExternalSecretDataRemoteRef{Key: "kv/identity/extra", Property: "config", Version: "1"},
			}},
		},
	}
}

// fullExternalSecretStatus sets every status field the mirror models.
func fullExternalSecretStatus(target string) esov1.ExternalSecretStatus {
	return esov1.ExternalSecretStatus{
		RefreshTime:           now(),
		SyncedResourceVersion: "1-0123456789abcdef",
		Conditions: []esov1.ExternalSecretStatusCondition{{
			Type:               esov1.ExternalSecretReady,
			Status:             corev1.ConditionTrue,
			Reason:             esov1.ConditionReasonSecretSynced,
			Message:            "secret synced",
			LastTransitionTime: now(),
		}},
		Binding: corev1.LocalObjectReference{Name: target},
	}
}

// fakeProvider is an ESO provider block (the fake provider) as opaque JSON.
func fakeProvider() *apiextensionsv1.JSON {
	return &apiextensionsv1.JSON{Raw: []byte(`{"fake":{"data":[{"key":"kv/identity/db","value":"not-a-real-secret"}]}}`)}
}

// fullStoreStatus sets every status field the mirror models for a store.
func fullStoreStatus() esov1.SecretStoreStatus {
	return esov1.SecretStoreStatus{
		Conditions: []esov1.SecretStoreStatusCondition{{
			Type:               esov1.SecretStoreReady,
			Status:             corev1.ConditionTrue,
			Reason:             esov1.ReasonStoreValid,
			Message:            "store validated",
			LastTransitionTime: now(),
		}},
		Capabilities: esov1.SecretStoreReadWrite,
	}
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, want, got []byte) string {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("unmarshal %s: %v", want, err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("unmarshal %s: %v", got, err)
	}
	return cmp.Diff(w, g)
}
