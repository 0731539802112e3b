package webhook_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/admit/admittest"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/webhook"
)

// TestWebhookRotationSafety creates Keystones through the webhooks: an unsafe rotation
// is refused at admission naming the field, and nothing is stored; the same rotation
// with enough keys is admitted.
func TestWebhookRotationSafety(t *testing.T) {
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
	ns := env.Namespace(t)
	ctx := context.Background()

	err := admittest.CreateManifest(ctx, env.Client, ns, minimal(fernet(3, "24h")))
	want := `Keystone.keystone.openstack.c5c3.io "keystone" is invalid: spec.fernet.maxActiveKeys: ` + unsafeFernet.Message
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("unsafe rotation: err = %v\nwant Invalid containing %s", err, want)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keystone"}, &v1alpha1.Keystone{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after the refusal: err = %v, want NotFound", err)
	}

	if err := admittest.CreateManifest(ctx, env.Client, ns, minimal(fernet(5, "24h"))); err != nil {
		t.Fatalf("safe rotation: %v", err)
	}
}

// TestWebhookDefaultsOnCreate creates a Keystone that leaves every webhook default out
// and reads back the stored object: the API server called the mutating webhook, and
// the CRD's own defaults are there too.
func TestWebhookDefaultsOnCreate(t *testing.T) {
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
	ns := env.Namespace(t)
	got := admittest.Admitted(t, env.Client, ns, minimal(withGateway("")))
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

// TestWebhookRefusesOnUpdate updates a stored Keystone: an edit that lengthens the
// token lifetime beyond what the keys cover is refused and leaves the object as it
// was; a valid edit is admitted.
func TestWebhookRefusesOnUpdate(t *testing.T) {
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
	ns := env.Namespace(t)
	got := admittest.Admitted(t, env.Client, ns, minimal(fernet(5, "24h")))
	admittest.ExpectRefusedUpdate(t, env.Client, got, func(k *v1alpha1.Keystone) { k.Spec.Token.Expiration = duration("72h") },
		"spec.fernet.maxActiveKeys: Invalid value: 5: unsafe key rotation", "maxActiveKeys must be at least 7")

	got.Spec.Fernet.MaxActiveKeys = 7
	got.Spec.Token.Expiration = duration("72h")
	if err := env.Client.Update(context.Background(), got); err != nil {
		t.Fatalf("valid update: %v", err)
	}
}

// TestWebhookRefusesSettings creates a Keystone whose keystone.conf the Config step
// could not render: the API server's answer names each field.
func TestWebhookRefusesSettings(t *testing.T) {
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
	ns := env.Namespace(t)
	err := admittest.CreateManifest(context.Background(), env.Client, ns, minimal(func(k *v1alpha1.Keystone) {
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
// bind password in config and a remote id on two identity providers are refused
// naming the field, valid backends (with and without federation) are admitted.
func TestWebhookIdentityBackend(t *testing.T) {
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
	ns := env.Namespace(t)
	ctx := context.Background()
	err := admittest.CreateManifest(ctx, env.Client, ns, backend(func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Spec.Config["ldap"]["password"] = "s3cr3t-bind"
	}))
	want := `KeystoneIdentityBackend.keystone.openstack.c5c3.io "corp-ldap" is invalid: spec.config[ldap][password]: Forbidden`
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cr3t-bind") {
		t.Fatalf("err = %v\nwant Invalid containing %s, without the password", err, want)
	}
	if err := admittest.CreateManifest(ctx, env.Client, ns, backend()); err != nil {
		t.Fatalf("valid backend: %v", err)
	}

	// A remote id on two providers passes the CRD's schema; the webhook refuses it,
	// naming the field.
	err = admittest.CreateManifest(ctx, env.Client, ns, backend(func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Name = "corp-sso"
		withFederation(func(f *v1alpha1.FederationSpec) {
			f.IdentityProviders[1].RemoteIDs = f.IdentityProviders[0].RemoteIDs
		})(b)
	}))
	want = `KeystoneIdentityBackend.keystone.openstack.c5c3.io "corp-sso" is invalid: spec.federation.identityProviders[1].remoteIDs[0]: Invalid value`
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant Invalid containing %s", err, want)
	}
	if err := admittest.CreateManifest(ctx, env.Client, ns, backend(func(b *v1alpha1.KeystoneIdentityBackend) {
		b.Name = "corp-sso"
		withFederation(nil)(b)
	})); err != nil {
		t.Fatalf("valid federated backend: %v", err)
	}
}

// TestWebhookAdmitsSamples creates the samples of config/samples through the webhooks.
func TestWebhookAdmitsSamples(t *testing.T) {
	admittest.Serve(t, env, webhook.SetupWebhookWithManager)
	ns := env.Namespace(t)
	for _, file := range []string{
		"keystone_v1alpha1_keystone_minimal.yaml",
		"keystone_v1alpha1_keystone_full.yaml",
		"keystone_v1alpha1_keystoneidentitybackend.yaml",
		"keystone_v1alpha1_keystoneidentitybackend_federation.yaml",
	} {
		t.Run(file, func(t *testing.T) {
			name := strings.ReplaceAll(strings.TrimSuffix(file, ".yaml")[len("keystone_v1alpha1_"):], "_", "-")
			if _, err := admittest.CreateFile(context.Background(), env.Client, ns, "../config/samples/"+file, name); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSetupWebhookWithManagerNeedsTheKinds sets the webhooks up on a manager whose
// scheme lacks the Keystone kinds: the error names the missing type.
func TestSetupWebhookWithManagerNeedsTheKinds(t *testing.T) {
	admittest.ExpectNotInScheme(t, webhook.SetupWebhookWithManager,
		"register the Keystone admission webhooks", "v1alpha1.Keystone")
}
