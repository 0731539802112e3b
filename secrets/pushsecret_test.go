package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

func TestEnsurePushSecretCreatesWithServerDefaults(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	ps := desiredPushSecret(ns, "keystone-admin", secrets.EffectiveStoreRef(nil))
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, ps); err != nil {
		t.Fatal(err)
	}
	if ref := metav1.GetControllerOf(ps); ref == nil || ref.UID != owner.UID {
		t.Errorf("controller reference = %+v, want the owner %s", ref, owner.UID)
	}
	// ESO's CRD defaults what the builder left out; the response carries them.
	if ps.Spec.UpdatePolicy != esov1alpha1.PushSecretUpdatePolicyReplace {
		t.Errorf("updatePolicy = %q, want the server default Replace", ps.Spec.UpdatePolicy)
	}
	if ps.Spec.RefreshInterval == nil || ps.Spec.RefreshInterval.Duration != time.Hour {
		t.Errorf("refreshInterval = %v, want the server default 1h", ps.Spec.RefreshInterval)
	}
	if ps.Spec.DeletionPolicy != esov1alpha1.PushSecretDeletionPolicyNone {
		t.Errorf("deletionPolicy = %q, want the server default None", ps.Spec.DeletionPolicy)
	}
	if diff := cmp.Diff(secrets.PushSecretStoreRefs(secrets.EffectiveStoreRef(nil)), ps.Spec.SecretStoreRefs); diff != "" {
		t.Errorf("secretStoreRefs (-want +got):\n%s", diff)
	}
	// The defaults are not claimed by the SDK's field manager.
	owned := ownedFields(t, ps, apply.FieldManager)
	for _, f := range []string{`"f:updatePolicy"`, `"f:refreshInterval"`, `"f:deletionPolicy"`} {
		if strings.Contains(owned, f) {
			t.Errorf("field manager %s claims %s: %s", apply.FieldManager, f, owned)
		}
	}
	if !strings.Contains(owned, `"f:secretStoreRefs"`) || !strings.Contains(owned, `"f:selector"`) {
		t.Errorf("field manager does not own the fields it set: %s", owned)
	}
}

func TestEnsurePushSecretConvergedIsNotRewritten(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	ref := commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"}

	first := desiredPushSecret(ns, "keystone-admin", ref)
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, first); err != nil {
		t.Fatal(err)
	}
	for pass := range 3 {
		again := desiredPushSecret(ns, "keystone-admin", ref)
		if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, again); err != nil {
			t.Fatal(err)
		}
		if again.ResourceVersion != first.ResourceVersion || again.Generation != first.Generation {
			t.Fatalf("pass %d rewrote a converged PushSecret: resourceVersion %s -> %s, generation %d -> %d",
				pass+2, first.ResourceVersion, again.ResourceVersion, first.Generation, again.Generation)
		}
	}
	stored := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(first), stored); err != nil {
		t.Fatal(err)
	}
	if stored.ResourceVersion != first.ResourceVersion {
		t.Errorf("stored resourceVersion %s, want %s", stored.ResourceVersion, first.ResourceVersion)
	}
}

func TestEnsurePushSecretKeepsOthersFieldsAndRestoresOurs(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	ref := secrets.EffectiveStoreRef(nil)
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, desiredPushSecret(ns, "keystone-admin", ref)); err != nil {
		t.Fatal(err)
	}

	// An administrator tunes the refresh interval and the update policy (fields the
	// SDK leaves to the server) and points the selector elsewhere (a field it owns).
	edited := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keystone-admin"}, edited); err != nil {
		t.Fatal(err)
	}
	edited.Spec.RefreshInterval = &metav1.Duration{Duration: 10 * time.Minute}
	edited.Spec.UpdatePolicy = esov1alpha1.PushSecretUpdatePolicyIfNotExists
	edited.Spec.Selector.Secret.Name = "hijacked"
	if err := env.Client.Update(ctx, edited, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}

	got := desiredPushSecret(ns, "keystone-admin", ref)
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Selector.Secret.Name != "keystone-admin" {
		t.Errorf("selector.secret.name = %q, want the SDK's value restored", got.Spec.Selector.Secret.Name)
	}
	if got.Spec.RefreshInterval == nil || got.Spec.RefreshInterval.Duration != 10*time.Minute {
		t.Errorf("refreshInterval = %v, want the administrator's 10m kept", got.Spec.RefreshInterval)
	}
	if got.Spec.UpdatePolicy != esov1alpha1.PushSecretUpdatePolicyIfNotExists {
		t.Errorf("updatePolicy = %q, want the administrator's IfNotExists kept", got.Spec.UpdatePolicy)
	}

	// A builder that does set the update policy owns it.
	pinned := desiredPushSecret(ns, "keystone-admin", ref)
	pinned.Spec.UpdatePolicy = esov1alpha1.PushSecretUpdatePolicyReplace
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, pinned); err != nil {
		t.Fatal(err)
	}
	stored := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pinned), stored); err != nil {
		t.Fatal(err)
	}
	if stored.Spec.UpdatePolicy != esov1alpha1.PushSecretUpdatePolicyReplace {
		t.Errorf("stored updatePolicy = %q, want the builder's Replace", stored.Spec.UpdatePolicy)
	}
}

func TestEnsurePushSecretErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, nil); !errors.Is(err, secrets.ErrNilPushSecret) {
		t.Errorf("nil PushSecret: %v, want ErrNilPushSecret", err)
	}
	unpersisted := owner.DeepCopy()
	unpersisted.UID = ""
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, unpersisted, desiredPushSecret(ns, "x", secrets.EffectiveStoreRef(nil))); !errors.Is(err, apply.ErrOwnerNotPersisted) {
		t.Errorf("owner without UID: %v, want apply.ErrOwnerNotPersisted", err)
	}

	// The CRD refuses a PushSecret without store refs; the error names it.
	invalid := desiredPushSecret(ns, "no-stores", secrets.EffectiveStoreRef(nil))
	invalid.Spec.SecretStoreRefs = []esov1alpha1.PushSecretStoreRef{{Kind: "VaultStore", Name: "x"}}
	err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, invalid)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "PushSecret "+ns+"/no-stores") {
		t.Errorf("invalid store kind: %v, want Invalid naming the PushSecret", err)
	}

	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	failing := interceptor.NewClient(base, interceptor.Funcs{
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: esov1alpha1.Group, Resource: "pushsecrets"}, "keystone-admin", errors.New("denied"))
		},
	})
	err = secrets.EnsurePushSecret(ctx, failing, env.Scheme, owner, desiredPushSecret(ns, "keystone-admin", secrets.EffectiveStoreRef(nil)))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "PushSecret "+ns+"/keystone-admin") {
		t.Errorf("apply refused: %v, want Forbidden naming the PushSecret", err)
	}
}

// ownedFields returns the managedFields entry of manager as JSON.
func ownedFields(t *testing.T, obj client.Object, manager string) string {
	t.Helper()
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager && mf.FieldsV1 != nil {
			return mf.FieldsV1.GetRawString()
		}
	}
	t.Fatalf("no managedFields entry for %s", manager)
	return ""
}
