package webhook_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/webhook"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// startWebhooks starts a manager serving the Keystone webhooks until the test ends;
// from then on the API server calls them for every Keystone and
// KeystoneIdentityBackend created or updated.
func startWebhooks(t *testing.T) {
	t.Helper()
	mgr, _ := env.StartManager(t, ctrl.Options{})
	if err := webhook.SetupWebhookWithManager(mgr); err != nil {
		t.Fatalf("SetupWebhookWithManager: %v", err)
	}
}

// create creates obj of kind in namespace ns as a user's manifest would reach the API
// server: untyped JSON, with strict field validation.
func create(ctx context.Context, ns, kind string, obj any) error {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		return err
	}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind(kind)
	u.SetNamespace(ns)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return client.WithFieldValidation(env.Client, metav1.FieldValidationStrict).Create(ctx, u)
}

// TestWebhookDefaultsOnCreate creates a Keystone that leaves every webhook default out
// and reads back the stored object: the API server called the mutating webhook, and
// the CRD's own defaults are there too.
func TestWebhookDefaultsOnCreate(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	if err := create(ctx, ns, "Keystone", minimal(withGateway(""))); err != nil {
		t.Fatalf("create: %v", err)
	}
	got := &v1alpha1.Keystone{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keystone"}, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&sharedStore, got.Spec.SecretStoreRef); diff != "" {
		t.Errorf("secretStoreRef (-want +got):\n%s", diff)
	}
	if got := got.Spec.Database.MariaDBRef.Namespace; got != ns {
		t.Errorf("database.mariaDBRef.namespace = %q, want the Keystone's %q", got, ns)
	}
	if got := got.Spec.Gateway.ParentRef.Namespace; got != ns {
		t.Errorf("gateway.parentRef.namespace = %q, want the Keystone's %q", got, ns)
	}
	if got.Spec.Fernet.MaxActiveKeys != 3 || got.Spec.Token.Expiration == nil {
		t.Errorf("fernet %+v, token %+v: want the CRD defaults", got.Spec.Fernet, got.Spec.Token)
	}
}

// TestWebhookRotationSafety creates Keystones through the webhooks: an unsafe rotation
// is refused at admission naming the field, and nothing is stored; the same rotation
// with enough keys is admitted.
func TestWebhookRotationSafety(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	ctx := context.Background()

	err := create(ctx, ns, "Keystone", minimal(fernet(3, "24h")))
	want := `Keystone.keystone.openstack.c5c3.io "keystone" is invalid: spec.fernet.maxActiveKeys: ` + unsafeFernet
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("unsafe rotation: err = %v\nwant Invalid containing %s", err, want)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keystone"}, &v1alpha1.Keystone{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after the refusal: err = %v, want NotFound", err)
	}

	if err := create(ctx, ns, "Keystone", minimal(fernet(5, "24h"))); err != nil {
		t.Fatalf("safe rotation: %v", err)
	}
}

// TestWebhookRefusesOnUpdate updates a stored Keystone: an edit that lengthens the
// token lifetime beyond what the keys cover is refused and leaves the object as it
// was; a valid edit is admitted.
func TestWebhookRefusesOnUpdate(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	if err := create(ctx, ns, "Keystone", minimal(fernet(5, "24h"))); err != nil {
		t.Fatalf("create: %v", err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "keystone"}
	k := &v1alpha1.Keystone{}
	if err := env.Client.Get(ctx, key, k); err != nil {
		t.Fatal(err)
	}
	stored := k.DeepCopy()

	k.Spec.Token.Expiration = duration("72h")
	err := env.Client.Update(ctx, k)
	want := "spec.fernet.maxActiveKeys: Invalid value: 5: unsafe key rotation"
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "maxActiveKeys must be at least 7") {
		t.Fatalf("update lengthening the tokens: err = %v, want Invalid containing %s and the smallest safe value", err, want)
	}
	got := &v1alpha1.Keystone{}
	if err := env.Client.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored, got); diff != "" {
		t.Errorf("object after the refused update (-want +got):\n%s", diff)
	}

	got.Spec.Fernet.MaxActiveKeys = 7
	got.Spec.Token.Expiration = duration("72h")
	if err := env.Client.Update(ctx, got); err != nil {
		t.Fatalf("valid update: %v", err)
	}
}

// TestWebhookRefusesSettings creates a Keystone whose keystone.conf the Config step
// could not render: the API server's answer names each field.
func TestWebhookRefusesSettings(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	err := create(context.Background(), ns, "Keystone", minimal(func(k *v1alpha1.Keystone) {
		k.Spec.MemcachedServers = []string{"memcached:11211", ""}
		k.Spec.ExtraConfig = map[string]map[string]string{"database": {"connection": "mysql://keystone:pw@db/keystone"}}
	}))
	if !apierrors.IsInvalid(err) {
		t.Fatalf("err = %v, want Invalid", err)
	}
	for _, want := range []string{"spec.extraConfig[database][connection]: Invalid value", "spec.memcachedServers[1]: Invalid value"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "keystone:pw") {
		t.Errorf("err echoes the extraConfig value: %v", err)
	}
}

// TestWebhookIdentityBackend creates KeystoneIdentityBackends through the webhooks: a
// bind password in config is refused naming the field, a valid backend is admitted.
func TestWebhookIdentityBackend(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	err := create(ctx, ns, "KeystoneIdentityBackend", backend(func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Spec.Config["ldap"]["password"] = "s3cr3t-bind"
	}))
	want := `KeystoneIdentityBackend.keystone.openstack.c5c3.io "corp-ldap" is invalid: spec.config[ldap][password]: Forbidden`
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cr3t-bind") {
		t.Fatalf("err = %v\nwant Invalid containing %s, without the password", err, want)
	}
	if err := create(ctx, ns, "KeystoneIdentityBackend", backend()); err != nil {
		t.Fatalf("valid backend: %v", err)
	}
}

// TestWebhookAdmitsSamples creates the samples of config/samples through the webhooks.
func TestWebhookAdmitsSamples(t *testing.T) {
	startWebhooks(t)
	ns := env.Namespace(t)
	for _, file := range []string{
		"keystone_v1alpha1_keystone_minimal.yaml",
		"keystone_v1alpha1_keystone_full.yaml",
		"keystone_v1alpha1_keystoneidentitybackend.yaml",
	} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile("../config/samples/" + file)
			if err != nil {
				t.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(data, &u.Object); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			u.SetNamespace(ns)
			u.SetName(strings.TrimSuffix(file, ".yaml")[len("keystone_v1alpha1_"):])
			u.SetName(strings.ReplaceAll(u.GetName(), "_", "-"))
			if err := client.WithFieldValidation(env.Client, metav1.FieldValidationStrict).Create(context.Background(), u); err != nil {
				t.Fatalf("create %s: %v", file, err)
			}
		})
	}
}

// TestSetupWebhookWithManagerNeedsTheKinds sets the webhooks up on a manager whose
// scheme lacks the Keystone kinds: the error names the missing type.
func TestSetupWebhookWithManagerNeedsTheKinds(t *testing.T) {
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 testenv.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	err = webhook.SetupWebhookWithManager(mgr)
	if err == nil || !strings.Contains(err.Error(), "register the Keystone admission webhooks") ||
		!strings.Contains(err.Error(), "v1alpha1.Keystone") {
		t.Fatalf("err = %v, want the Keystone type missing from the scheme", err)
	}
}
