package secrets_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// existingState says who holds an object that is there before the helper runs.
type existingState struct {
	controller bool // another object (the ConfigMap "helm-release") is its controller
	adopt      bool // apply.AdoptAnnotation="true"
	deleting   bool // deletionTimestamp set (a finalizer holds it)
}

// prepareExisting sets the metadata of obj, which is about to be created in the
// namespace of owner, per st; it returns the other controller when there is one.
func prepareExisting(t *testing.T, ns string, obj client.Object, st existingState) *corev1.ConfigMap {
	t.Helper()
	var other *corev1.ConfigMap
	if st.controller {
		other = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "helm-release", Namespace: ns}}
		if err := env.Client.Create(context.Background(), other); err != nil {
			t.Fatal(err)
		}
		if err := controllerutil.SetControllerReference(other, obj, env.Scheme); err != nil {
			t.Fatal(err)
		}
	}
	if st.adopt {
		obj.SetAnnotations(map[string]string{apply.AdoptAnnotation: "true"})
	}
	if st.deleting {
		obj.SetFinalizers([]string{testenv.HoldFinalizer})
	}
	return other
}

// TestEnsureGeneratedSecretRefusesSecretsItDoesNotControl: the generated Secret's name
// is taken by a Secret the owner does not control. It is neither read as the
// credential nor written, unless its maker opted in to adoption.
func TestEnsureGeneratedSecretRefusesSecretsItDoesNotControl(t *testing.T) {
	const theirs = "Their0Value0Of0Sixteen0Plus0Chars"
	cases := map[string]struct {
		st        existingState
		withKey   bool
		nilOwner  bool
		wantErr   error  // nil: accepted
		wantText  string // in the error
		wantAdopt bool   // accepted and now controlled by the owner
	}{
		"unowned, holding the key": {
			withKey: true, wantErr: apply.ErrNotControlled, wantText: "has no controller",
		},
		"unowned, without the key": {
			wantErr: apply.ErrNotControlled, wantText: "annotate it " + apply.AdoptAnnotation + "=true",
		},
		"controlled by someone else, holding the key": {
			st: existingState{controller: true}, withKey: true, wantErr: apply.ErrNotControlled,
			wantText: "is controlled by ConfigMap helm-release",
		},
		"controlled by someone else, adopt annotation ignored": {
			st: existingState{controller: true, adopt: true}, wantErr: apply.ErrNotControlled,
			wantText: "is controlled by ConfigMap helm-release",
		},
		"controlled by someone else, nil owner": {
			st: existingState{controller: true}, withKey: true, nilOwner: true, wantErr: apply.ErrNotControlled,
			wantText: "is controlled by ConfigMap helm-release",
		},
		"being deleted": {
			st: existingState{deleting: true}, withKey: true, wantErr: apply.ErrBeingDeleted,
		},
		"being deleted, owned": {
			st: existingState{deleting: true}, wantErr: apply.ErrBeingDeleted,
		},
		"unowned with adopt annotation, holding the key: adopted, value kept": {
			st: existingState{adopt: true}, withKey: true, wantAdopt: true,
		},
		"unowned with adopt annotation, without the key: adopted, key added": {
			st: existingState{adopt: true}, wantAdopt: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
			existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: gs.Key.Name, Namespace: ns},
				Data: map[string][]byte{"username": []byte("admin")}}
			if tc.withKey {
				existing.Data["password"] = []byte(theirs)
			}
			other := prepareExisting(t, ns, existing, tc.st)
			if name == "being deleted, owned" {
				if err := controllerutil.SetControllerReference(owner, existing, env.Scheme); err != nil {
					t.Fatal(err)
				}
			}
			if err := env.Client.Create(ctx, existing); err != nil {
				t.Fatal(err)
			}
			if tc.st.deleting {
				env.DeleteHeld(t, existing)
			}

			var o client.Object = owner
			if tc.nilOwner {
				o = nil
			}
			for pass := range 2 {
				outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, o, gs)
				if tc.wantErr == nil {
					if err != nil {
						t.Fatalf("pass %d: %v", pass+1, err)
					}
					continue
				}
				if !errors.Is(err, tc.wantErr) || outcome != secrets.SecretKept {
					t.Fatalf("pass %d = %v, %v; want %v", pass+1, outcome, err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), "Secret "+ns+"/"+gs.Key.Name) || !strings.Contains(err.Error(), tc.wantText) {
					t.Errorf("error %q does not name the Secret and %q", err, tc.wantText)
				}
				if other != nil && !strings.Contains(err.Error(), string(other.UID)) {
					t.Errorf("error %q does not name the controller's UID", err)
				}
				if strings.Contains(err.Error(), theirs) {
					t.Error("the error carries the Secret's value")
				}
			}

			stored := &corev1.Secret{}
			if err := env.Client.Get(ctx, gs.Key, stored); err != nil {
				t.Fatalf("the existing Secret is gone or was replaced: %v", err)
			}
			if stored.UID != existing.UID {
				t.Fatal("the existing Secret was re-created")
			}
			if tc.wantErr != nil {
				if stored.ResourceVersion != existing.ResourceVersion {
					t.Errorf("a refused Secret was written: resourceVersion %s -> %s", existing.ResourceVersion, stored.ResourceVersion)
				}
				return
			}
			if !metav1.IsControlledBy(stored, owner) || len(stored.OwnerReferences) != 1 {
				t.Errorf("owner references %v, want the owner as controller", stored.OwnerReferences)
			}
			if string(stored.Data["username"]) != "admin" {
				t.Error("an existing key was lost")
			}
			if tc.withKey && string(stored.Data["password"]) != theirs {
				t.Error("the adopted Secret's credential was replaced")
			}
			if !tc.withKey && len(stored.Data["password"]) != secrets.DefaultGeneratedLength {
				t.Errorf("added credential has %d bytes", len(stored.Data["password"]))
			}
		})
	}
}

// TestEnsureGeneratedSecretNilOwnerUsesUnownedSecret: with no owner, an existing
// Secret without a controller is the caller's to use.
func TestEnsureGeneratedSecretNilOwnerUsesUnownedSecret(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	createSecret(t, ns, "creds", map[string][]byte{"username": []byte("admin")})
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "creds"}, "password")
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, nil, gs); err != nil || outcome != secrets.SecretGenerated {
		t.Fatalf("= %v, %v; want Generated", outcome, err)
	}
	// A typed nil owner is no owner too.
	var typedNil *corev1.ConfigMap
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, typedNil, gs); err != nil || outcome != secrets.SecretKept {
		t.Fatalf("typed nil owner: = %v, %v; want Kept", outcome, err)
	}
}

// TestEnsurePushSecretRefusesPushSecretsItDoesNotControl covers the PushSecret
// EnsurePushSecret (through apply.EnsureObject) would write over.
func TestEnsurePushSecretRefusesPushSecretsItDoesNotControl(t *testing.T) {
	cases := map[string]struct {
		st        existingState
		wantErr   error
		wantText  string
		wantAdopt bool
	}{
		"unowned":                       {wantErr: apply.ErrNotControlled, wantText: "has no controller"},
		"controlled by someone else":    {st: existingState{controller: true}, wantErr: apply.ErrNotControlled, wantText: "is controlled by ConfigMap helm-release"},
		"being deleted":                 {st: existingState{deleting: true}, wantErr: apply.ErrBeingDeleted},
		"unowned with adopt annotation": {st: existingState{adopt: true}, wantAdopt: true},
		"someone else's, adopt ignored": {st: existingState{controller: true, adopt: true}, wantErr: apply.ErrNotControlled},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			ref := secrets.EffectiveStoreRef(nil)
			existing := desiredPushSecret(ns, "identity-admin-source", ref)
			existing.Spec.Selector.Secret.Name = "theirs"
			other := prepareExisting(t, ns, existing, tc.st)
			if err := env.Client.Create(ctx, existing); err != nil {
				t.Fatal(err)
			}
			if tc.st.deleting {
				env.DeleteHeld(t, existing)
			}

			err := secrets.EnsurePushSecret(ctx, env.Client, env.Scheme, owner, desiredPushSecret(ns, "identity-admin-source", ref))
			stored := &esov1alpha1.PushSecret{}
			if getErr := env.Client.Get(ctx, client.ObjectKeyFromObject(existing), stored); getErr != nil {
				t.Fatalf("the existing PushSecret is gone: %v", getErr)
			}
			if tc.wantAdopt {
				if err != nil {
					t.Fatal(err)
				}
				if !metav1.IsControlledBy(stored, owner) || stored.Spec.Selector.Secret.Name != "identity-admin-source" {
					t.Errorf("not adopted: owner references %v, selector %q", stored.OwnerReferences, stored.Spec.Selector.Secret.Name)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), "PushSecret "+ns+"/identity-admin-source") || !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not name the PushSecret and %q", err, tc.wantText)
			}
			if other != nil && !strings.Contains(err.Error(), string(other.UID)) {
				t.Errorf("error %q does not name the controller's UID", err)
			}
			if stored.ResourceVersion != existing.ResourceVersion || stored.UID != existing.UID {
				t.Errorf("a refused PushSecret was written (resourceVersion %s -> %s)", existing.ResourceVersion, stored.ResourceVersion)
			}
		})
	}
}

// TestEnsureGeneratedSecretNothingCreatedOverDeletedSecret: a pass that meets the
// generated Secret being deleted creates nothing; once it is gone the next pass
// restores the credential from the synced copy instead of generating one.
func TestEnsureGeneratedSecretNothingCreatedOverDeletedSecret(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	synced := client.ObjectKey{Namespace: ns, Name: "identity-admin"}
	createSecret(t, ns, synced.Name, map[string][]byte{"password": []byte("Backend0Value0Held0In0OpenBao000")})
	gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "identity-admin-source"}, "password")
	gs.RestoreFrom = &synced
	existing := createOwnedSecret(t, owner, gs.Key.Name, map[string][]byte{"password": []byte("Backend0Value0Held0In0OpenBao000")})
	existing.Finalizers = []string{testenv.HoldFinalizer}
	if err := env.Client.Update(ctx, existing); err != nil {
		t.Fatal(err)
	}
	env.DeleteHeld(t, existing)

	if _, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs); !errors.Is(err, apply.ErrBeingDeleted) {
		t.Fatalf("err = %v, want apply.ErrBeingDeleted", err)
	}
	existing.Finalizers = nil
	if err := env.Client.Update(ctx, existing); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Get(ctx, gs.Key, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Secret still there after its finalizer was removed: %v", err)
	}
	if outcome, err := secrets.EnsureGeneratedSecret(ctx, env.Client, env.Scheme, owner, gs); err != nil || outcome != secrets.SecretRestored {
		t.Fatalf("= %v, %v; want Restored", outcome, err)
	}
}
