package keystone_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

func sampleKeystone() *v1alpha1.Keystone {
	return &v1alpha1.Keystone{ObjectMeta: metav1.ObjectMeta{Name: "keystone", Namespace: "openstack"}}
}

// TestKeyStepNames: the names, remote keys and conditions of the two steps.
func TestKeyStepNames(t *testing.T) {
	opts := keystone.KeyStepOptions{FieldManager: "keystone-operator", OperatorImage: "operator:v1"}
	k := sampleKeystone()
	for _, tc := range []struct {
		step                                           *keystone.KeyRepositoryStep
		condition, secret, restore, push, cron, remote string
	}{
		{keystone.NewFernetKeysStep(opts), "FernetKeysReady", "keystone-fernet-keys", "keystone-fernet-keys-restore",
			"keystone-fernet-keys", "keystone-fernet-rotate", "openstack/keystone/openstack/keystone/fernet-keys"},
		{keystone.NewCredentialKeysStep(opts), "CredentialKeysReady", "keystone-credential-keys", "keystone-credential-keys-restore",
			"keystone-credential-keys", "keystone-credential-rotate", "openstack/keystone/openstack/keystone/credential-keys"},
	} {
		got := []string{tc.step.Condition(), tc.step.SecretName(k), tc.step.RestoreName(k), tc.step.PushSecretName(k),
			tc.step.CronJobName(k), tc.step.RemoteKey(k)}
		want := []string{tc.condition, tc.secret, tc.restore, tc.push, tc.cron, tc.remote}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("got %q, want %q", got[i], want[i])
			}
		}
	}
	if got := names.FernetKeysSecretName(k); got != "keystone-fernet-keys" {
		t.Errorf("FernetKeysSecretName = %q", got)
	}
}

// TestKeyStepOptionsValidate: missing options are refused naming the field, and a step
// built with them returns a terminal error before any request.
func TestKeyStepOptionsValidate(t *testing.T) {
	for field, opts := range map[string]keystone.KeyStepOptions{
		"FieldManager":          {OperatorImage: "operator:v1"},
		"OperatorImage":         {FieldManager: "keystone-operator"},
		"BackupRefreshInterval": {FieldManager: "keystone-operator", OperatorImage: "operator:v1", BackupRefreshInterval: -1},
	} {
		err := opts.Validate()
		if !errors.Is(err, keystone.ErrInvalidKeyStepOptions) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: Validate = %v", field, err)
		}
		ctx := multicluster.WithTarget(context.Background(), &multicluster.Target{Client: fake.NewClientBuilder().Build()})
		res, err := keystone.NewFernetKeysStep(opts).Reconcile(ctx, sampleKeystone())
		if !res.IsZero() || !reconcile.IsTerminal(err) || !errors.Is(err, keystone.ErrInvalidKeyStepOptions) {
			t.Errorf("%s: Reconcile = %v, %v; want a terminal ErrInvalidKeyStepOptions", field, res, err)
		}
	}
	if err := (keystone.KeyStepOptions{FieldManager: "m", OperatorImage: "i"}).Validate(); err != nil {
		t.Errorf("complete options: %v", err)
	}
}

// TestKeyStepNeedsTarget: a step run without a target in the context fails.
func TestKeyStepNeedsTarget(t *testing.T) {
	step := keystone.NewCredentialKeysStep(keystone.KeyStepOptions{FieldManager: "m", OperatorImage: "i"})
	res, err := step.Reconcile(context.Background(), sampleKeystone())
	if !res.IsZero() || !errors.Is(err, keystone.ErrNoTarget) || !strings.Contains(err.Error(), "openstack/keystone") {
		t.Errorf("Reconcile = %v, %v; want ErrNoTarget naming the Keystone", res, err)
	}
}
