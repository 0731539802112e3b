package webhook_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/admit/admittest"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/webhook"
)

// sampleDefaults are, for each sample of config/samples, what the CRD and the webhook
// add to it.
var sampleDefaults = map[string]func(*v1alpha1.Horizon){
	"horizon_v1alpha1_horizon_minimal.yaml": func(h *v1alpha1.Horizon) {
		withCRDDefaults(h)
		storeRef(sharedStore.Kind, sharedStore.Name)(h)
	},
	"horizon_v1alpha1_horizon_websso.yaml": func(h *v1alpha1.Horizon) {
		withCRDDefaults(h)
		storeRef(sharedStore.Kind, sharedStore.Name)(h)
	},
	"horizon_v1alpha1_horizon_full.yaml": func(*v1alpha1.Horizon) {}, // sets every field
}

// TestWebhookDefaultsOnCreate creates a Horizon that leaves every webhook default out
// and reads back the stored object: the API server called the mutating webhook.
func TestWebhookDefaultsOnCreate(t *testing.T) {
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
	ns := env.Namespace(t)
	got := admittest.Admitted(t, env.Client, ns, minimal(withWebSSO, withGateway("")))
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
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
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
			err := admittest.CreateManifest(context.Background(), env.Client, ns, tc.h)
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
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
	ns := env.Namespace(t)
	h := admittest.Admitted(t, env.Client, ns, minimal(withMultiDomain, withExtra("SESSION_TIMEOUT", "3600")))
	admittest.ExpectRefusedUpdate(t, env.Client, h, func(h *v1alpha1.Horizon) {
		h.Spec.ExtraConfig["OPENSTACK_KEYSTONE_DOMAIN_CHOICES"] = "()"
	}, "spec.extraConfig.OPENSTACK_KEYSTONE_DOMAIN_CHOICES: Forbidden: also set by spec.multiDomain.domains; remove one of them")

	got := h.DeepCopy()
	got.Spec.Gateway = &v1alpha1.GatewaySpec{ParentRef: v1alpha1.GatewayParentRef{Name: "public"}, Hostname: "dashboard.example.com"}
	if err := env.Client.Update(context.Background(), got); err != nil {
		t.Fatalf("valid update: %v", err)
	}
	if got := got.Spec.Gateway.ParentRef.Namespace; got != ns {
		t.Errorf("gateway.parentRef.namespace after the update = %q, want the Horizon's %q", got, ns)
	}
}

// TestWebhookAdmitsSamples creates the samples of config/samples through the webhooks
// and checks that the stored desired state is the sample's with only defaults added.
func TestWebhookAdmitsSamples(t *testing.T) {
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
	ns := env.Namespace(t)
	for file, addDefaults := range sampleDefaults {
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
			u, err := admittest.CreateFile(ctx, env.Client, ns, "../config/samples/"+file, "")
			if err != nil {
				t.Fatal(err)
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
	admittest.ExpectNotInScheme(t, webhook.SetupWebhookWithManager,
		"register the Horizon admission webhooks", "v1alpha1.Horizon")
}
