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

	ps := desiredPushSecret(ns, "identity-admin", secrets.EffectiveStoreRef(nil))
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

	first := desiredPushSecret(ns, "identity-admin", ref)
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, first); err != nil {
		t.Fatal(err)
	}
	for pass := range 3 {
		again := desiredPushSecret(ns, "identity-admin", ref)
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
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, desiredPushSecret(ns, "identity-admin", ref)); err != nil {
		t.Fatal(err)
	}

	// An administrator tunes the refresh interval and the update policy (fields the
	// SDK leaves to the server) and points the selector elsewhere (a field it owns).
	edited := &esov1alpha1.PushSecret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "identity-admin"}, edited); err != nil {
		t.Fatal(err)
	}
	edited.Spec.RefreshInterval = &metav1.Duration{Duration: 10 * time.Minute}
	edited.Spec.UpdatePolicy = esov1alpha1.PushSecretUpdatePolicyIfNotExists
	edited.Spec.Selector.Secret.Name = "hijacked"
	if err := env.Client.Update(ctx, edited, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}

	got := desiredPushSecret(ns, "identity-admin", ref)
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Selector.Secret.Name != "identity-admin" {
		t.Errorf("selector.secret.name = %q, want the SDK's value restored", got.Spec.Selector.Secret.Name)
	}
	if got.Spec.RefreshInterval == nil || got.Spec.RefreshInterval.Duration != 10*time.Minute {
		t.Errorf("refreshInterval = %v, want the administrator's 10m kept", got.Spec.RefreshInterval)
	}
	if got.Spec.UpdatePolicy != esov1alpha1.PushSecretUpdatePolicyIfNotExists {
		t.Errorf("updatePolicy = %q, want the administrator's IfNotExists kept", got.Spec.UpdatePolicy)
	}

	// A builder that does set the update policy owns it.
	pinned := desiredPushSecret(ns, "identity-admin", ref)
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
			return apierrors.NewForbidden(schema.GroupResource{Group: esov1alpha1.Group, Resource: "pushsecrets"}, "identity-admin", errors.New("denied"))
		},
	})
	err = secrets.EnsurePushSecret(ctx, failing, env.Scheme, owner, desiredPushSecret(ns, "identity-admin", secrets.EffectiveStoreRef(nil)))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "PushSecret "+ns+"/identity-admin") {
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

// TestGeneratedPushSecret: the PushSecret of a generated credential never replaces a
// value the backend holds (updatePolicy IfNotExists) and never deletes it with the
// PushSecret (deletionPolicy None); ESO's CRD accepts it, the SDK's field manager owns
// both policies, and a converged apply does not write.
func TestGeneratedPushSecret(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	push := secrets.GeneratedPush{
		StoreRef:  commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
		RemoteKey: "identity/admin", Property: "password",
		RefreshInterval: &metav1.Duration{Duration: time.Minute},
	}
	ps, err := secrets.GeneratedPushSecret(gs, push)
	if err != nil {
		t.Fatal(err)
	}
	want := esov1alpha1.PushSecretSpec{
		RefreshInterval: &metav1.Duration{Duration: time.Minute},
		SecretStoreRefs: []esov1alpha1.PushSecretStoreRef{{Kind: "SecretStore", Name: "tenant-bao"}},
		UpdatePolicy:    esov1alpha1.PushSecretUpdatePolicyIfNotExists,
		DeletionPolicy:  esov1alpha1.PushSecretDeletionPolicyNone,
		Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: "identity-admin-source"}},
		Data: []esov1alpha1.PushSecretData{{Match: esov1alpha1.PushSecretMatch{
			SecretKey: "password", RemoteRef: esov1alpha1.PushSecretRemoteRef{RemoteKey: "identity/admin", Property: "password"},
		}}},
	}
	if diff := cmp.Diff(want, ps.Spec); diff != "" || ps.Name != gs.Key.Name || ps.Namespace != ns {
		t.Fatalf("%s/%s spec (-want +got):\n%s", ps.Namespace, ps.Name, diff)
	}
	push.RefreshInterval.Duration = time.Hour
	if ps.Spec.RefreshInterval.Duration != time.Minute {
		t.Error("the PushSecret shares the caller's refresh interval")
	}

	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, ps); err != nil {
		t.Fatal(err)
	}
	if ps.Spec.UpdatePolicy != esov1alpha1.PushSecretUpdatePolicyIfNotExists || ps.Spec.DeletionPolicy != esov1alpha1.PushSecretDeletionPolicyNone {
		t.Errorf("stored policies: update %q, deletion %q", ps.Spec.UpdatePolicy, ps.Spec.DeletionPolicy)
	}
	owned := ownedFields(t, ps, apply.FieldManager)
	for _, f := range []string{`"f:updatePolicy"`, `"f:deletionPolicy"`} {
		if !strings.Contains(owned, f) {
			t.Errorf("field manager %s does not own %s: %s", apply.FieldManager, f, owned)
		}
	}
	again, err := secrets.GeneratedPushSecret(gs, secrets.GeneratedPush{
		StoreRef:  commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "tenant-bao"},
		RemoteKey: "identity/admin", Property: "password", RefreshInterval: &metav1.Duration{Duration: time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != ps.ResourceVersion {
		t.Errorf("converged apply wrote: resourceVersion %s -> %s", ps.ResourceVersion, again.ResourceVersion)
	}

	// Defaults: the PushSecret is named after the Secret and pushes through the shared
	// cluster store.
	def, err := secrets.GeneratedPushSecret(gs, secrets.GeneratedPush{Name: "admin-push", RemoteKey: "identity/admin"})
	if err != nil {
		t.Fatal(err)
	}
	if def.Name != "admin-push" || def.Spec.RefreshInterval != nil ||
		cmp.Diff(secrets.PushSecretStoreRefs(secrets.EffectiveStoreRef(nil)), def.Spec.SecretStoreRefs) != "" {
		t.Errorf("defaults: name %q, refresh %v, stores %v", def.Name, def.Spec.RefreshInterval, def.Spec.SecretStoreRefs)
	}

	// Invalid input.
	bad := gs
	bad.DataKey = ""
	for name, tc := range map[string]struct {
		gs   secrets.GeneratedSecret
		push secrets.GeneratedPush
		want error
	}{
		"invalid generated Secret": {gs: bad, push: secrets.GeneratedPush{RemoteKey: "k"}, want: secrets.ErrInvalidGeneratedSecret},
		"no remote key":            {gs: gs, want: secrets.ErrInvalidGeneratedSecret},
		"unknown store kind": {gs: gs, push: secrets.GeneratedPush{RemoteKey: "k",
			StoreRef: commonv1.SecretStoreRefSpec{Kind: "VaultStore", Name: "x"}}, want: secrets.ErrUnknownStoreKind},
		"SecretStore without name": {gs: gs, push: secrets.GeneratedPush{RemoteKey: "k",
			StoreRef: commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind}}, want: secrets.ErrMissingStoreName},
	} {
		if ps, err := secrets.GeneratedPushSecret(tc.gs, tc.push); !errors.Is(err, tc.want) || ps != nil {
			t.Errorf("%s: = %v, %v; want %v", name, ps, err, tc.want)
		} else if !strings.Contains(err.Error(), "Secret "+ns+"/identity-admin-source") {
			t.Errorf("%s: error %q does not name the Secret", name, err)
		}
	}
}
