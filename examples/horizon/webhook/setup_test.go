package webhook_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/webhook"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// startWebhooks starts a manager serving the Horizon webhooks until the test ends;
// from then on the API server calls them for every Horizon created or updated.
func startWebhooks(t *testing.T) {
	t.Helper()
	mgr, _ := env.StartManager(t, ctrl.Options{})
	if err := webhook.SetupWebhookWithManager(mgr); err != nil {
		t.Fatalf("SetupWebhookWithManager: %v", err)
	}
}

// create creates h in namespace ns as a user's manifest would reach the API server:
// untyped JSON, with strict field validation.
func create(ctx context.Context, ns string, h *v1alpha1.Horizon) error {
	obj, err := toUnstructured(h)
	if err != nil {
		return err
	}
	obj.SetNamespace(ns)
	return client.WithFieldValidation(env.Client, metav1.FieldValidationStrict).Create(ctx, obj)
}

// toUnstructured is h as the untyped object a manifest decodes to.
func toUnstructured(h *v1alpha1.Horizon) (*unstructured.Unstructured, error) {
	data, err := yaml.Marshal(h)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		return nil, err
	}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("Horizon")
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// withCRDDefaults sets what the CRD defaults on a Horizon that leaves it out.
func withCRDDefaults(h *v1alpha1.Horizon) {
	h.Spec.Replicas = ptr.To[int32](1)
	h.Spec.TimeZone = "UTC"
	h.Spec.SecretKey.Property = "secret_key"
	h.Spec.SecretKey.RefreshInterval = &metav1.Duration{Duration: time.Hour}
}

// TestWebhookDefaultsOnCreate creates a Horizon that leaves every webhook default out
// and reads back the stored object: the API server called the mutating webhook.
func TestWebhookDefaultsOnCreate(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	if err := create(ctx, ns, minimal(withWebSSO, withGateway(""))); err != nil {
		t.Fatalf("create: %v", err)
	}
	got := &v1alpha1.Horizon{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "horizon"}, got); err != nil {
		t.Fatal(err)
	}
	want := minimal(withWebSSO, withGateway(ns), withCRDDefaults, storeRef(sharedStore.Kind, sharedStore.Name),
		func(h *v1alpha1.Horizon) {
			h.Spec.WebSSO.InitialChoice = "credentials"
			h.Spec.Gateway.Path = "/"
		})
	if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
		t.Errorf("stored desired state (-want +got):\n%s", diff)
	}
}

// TestWebhookRefusesOnCreate creates Horizons the validating webhook refuses and checks
// the API server's answer: Invalid, naming the fields, never the extraConfig value.
func TestWebhookRefusesOnCreate(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	const token = "s3cr3t-t0ken"
	tests := map[string]struct {
		h    *v1alpha1.Horizon
		want []string
	}{
		"an extraConfig key websso.choices sets": {
			h: minimal(withWebSSO, withExtra("WEBSSO_CHOICES", "'"+token+"'")),
			want: []string{`Horizon.horizon.openstack.c5c3.io "horizon" is invalid`,
				"spec.extraConfig.WEBSSO_CHOICES: Forbidden: also set by spec.websso.choices; remove one of them"},
		},
		"an extraConfig value that is not a literal": {
			h: minimal(withExtra("SESSION_TIMEOUT", token+"()")),
			want: []string{`spec.extraConfig.SESSION_TIMEOUT: Invalid value: invalid Horizon settings: ` +
				`Settings.ExtraConfig["SESSION_TIMEOUT"]: the value is not a single-line Python literal`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := create(context.Background(), ns, tc.h)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("err = %v, want Invalid", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v\nwant it to contain %s", err, w)
				}
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("err echoes the extraConfig value: %v", err)
			}
		})
	}
}

// TestWebhookRefusesOnUpdate updates a stored Horizon: an edit that introduces a
// conflict is refused and leaves the object as it was, a valid edit is admitted and
// defaulted again.
func TestWebhookRefusesOnUpdate(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	if err := create(ctx, ns, minimal(withMultiDomain, withExtra("SESSION_TIMEOUT", "3600"))); err != nil {
		t.Fatalf("create: %v", err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "horizon"}
	h := &v1alpha1.Horizon{}
	if err := env.Client.Get(ctx, key, h); err != nil {
		t.Fatal(err)
	}
	stored := h.DeepCopy()

	h.Spec.ExtraConfig["OPENSTACK_KEYSTONE_DOMAIN_CHOICES"] = "()"
	err := env.Client.Update(ctx, h)
	want := "spec.extraConfig.OPENSTACK_KEYSTONE_DOMAIN_CHOICES: Forbidden: also set by spec.multiDomain.domains; remove one of them"
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("update adding a conflict: err = %v, want Invalid containing %s", err, want)
	}
	got := &v1alpha1.Horizon{}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored, got); diff != "" {
		t.Errorf("object after the refused update (-want +got):\n%s", diff)
	}

	got.Spec.Gateway = &v1alpha1.GatewaySpec{ParentRef: v1alpha1.GatewayParentRef{Name: "public"}, Hostname: "dashboard.example.com"}
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatalf("valid update: %v", err)
	}
	if ns := got.Spec.Gateway.ParentRef.Namespace; ns != key.Namespace {
		t.Errorf("gateway.parentRef.namespace after the update = %q, want the Horizon's %q", ns, key.Namespace)
	}
}

// TestWebhookAdmitsSamples creates the samples of config/samples through the webhooks
// and checks that the stored desired state is the sample's with only defaults added.
func TestWebhookAdmitsSamples(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	// defaults are what the CRD and the webhook add to each sample.
	defaults := map[string]func(*v1alpha1.Horizon){
		"horizon_v1alpha1_horizon_minimal.yaml": func(h *v1alpha1.Horizon) {
			withCRDDefaults(h)
			storeRef(sharedStore.Kind, sharedStore.Name)(h)
		},
		"horizon_v1alpha1_horizon_full.yaml": func(*v1alpha1.Horizon) {}, // sets every field
	}
	for file, addDefaults := range defaults {
		t.Run(file, func(t *testing.T) {
			ctx := context.Background()
			data, err := os.ReadFile("../config/samples/" + file)
			if err != nil {
				t.Fatal(err)
			}
			want := &v1alpha1.Horizon{}
			if err := yaml.UnmarshalStrict(data, want); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			addDefaults(want)
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(data, &u.Object); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			u.SetNamespace(ns)
			if err := client.WithFieldValidation(env.Client, metav1.FieldValidationStrict).Create(ctx, u); err != nil {
				t.Fatalf("create %s: %v", file, err)
			}
			got := &v1alpha1.Horizon{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Spec, got.Spec); diff != "" {
				t.Errorf("stored desired state of %s (-want +got):\n%s", file, diff)
			}
		})
	}
}

// TestSetupWebhookWithManagerNeedsHorizon sets the webhooks up on a manager whose scheme
// lacks Horizon: the error names the missing type.
func TestSetupWebhookWithManagerNeedsHorizon(t *testing.T) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 testenv.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	err = webhook.SetupWebhookWithManager(mgr)
	if err == nil || !strings.Contains(err.Error(), "register the Horizon admission webhooks") ||
		!strings.Contains(err.Error(), "v1alpha1.Horizon") {
		t.Fatalf("err = %v, want the Horizon type missing from the scheme", err)
	}
}
