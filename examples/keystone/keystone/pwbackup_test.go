package keystone_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// The PasswordRotation row takes a staged password only once the backup PushSecret has
// pushed the Secret that holds it: not while ESO has not answered, not on a Ready
// status of the push before the password was staged, not on a failed push.
func TestPasswordRotationWaitsForBackup(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	storeReady(t)
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(env.Client)
	if _, err := runConfig(t, rec, target, k, ""); err != nil {
		t.Fatal(err)
	}
	psKey := client.ObjectKey{Namespace: ns, Name: keystone.PasswordBackupName(k)}
	pwKey := client.ObjectKey{Namespace: ns, Name: names.DatabasePasswordSecretName(k)}
	step := func() {
		t.Helper()
		if res, err := keystone.RunStep(ctx, rec, "PasswordRotation", target, k, ""); err != nil || (!res.IsZero() && err != nil) {
			t.Fatalf("PasswordRotation: %+v %v", res, err)
		}
	}
	step()
	need(t)(simulate.MarkPushSecretSynced(ctx, env.Client, psKey)) // the first push, of the password in use
	step()
	expectReason(t, k, keystone.ReasonPasswordRotationIdle)

	if staged, err := rotation.RotatePassword(ctx, env.Client, pwKey, time.Now()); err != nil || !staged {
		t.Fatalf("staging: %v %v", staged, err)
	}
	stagedStill := func(what string) {
		t.Helper()
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, pwKey, s); err != nil {
			t.Fatal(err)
		}
		if len(s.Data[rotation.DatabasePasswordStagedKey]) == 0 {
			t.Fatalf("%s: the staged password was taken before the backup held it", what)
		}
		c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionPasswordRotationReady)
		if c == nil || c.Reason != keystone.ReasonPasswordRotationInProgress || !strings.Contains(c.Message, "PushSecret "+psKey.String()) {
			t.Fatalf("%s: PasswordRotationReady %+v; want InProgress naming the PushSecret", what, c)
		}
		t.Logf("%s: %s", what, c.Message)
	}
	step()
	stagedStill("the PushSecret has just been stamped")
	step()
	stagedStill("the PushSecret's status is that of the push before the staging")

	need(t)(simulate.MarkPushSecretFailed(ctx, env.Client, psKey, "set secret failed"))
	step()
	stagedStill("the push failed")
	if c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionPasswordRotationReady); !strings.Contains(c.Message, "Ready=False (reason Errored)") {
		t.Errorf("message %q does not say the push failed", c.Message)
	}

	need(t)(simulate.MarkPushSecretSynced(ctx, env.Client, psKey))
	step()
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, pwKey, s); err != nil {
		t.Fatal(err)
	}
	if len(s.Data[rotation.DatabasePasswordStagedKey]) != 0 {
		t.Error("the staged password was not taken once the backup held it")
	}
	// The Secret changed: the PushSecret is stamped with its new version.
	ps := &esov1alpha1.PushSecret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: psKey.Name}}
	get(t, ps)
	if ps.Annotations[secrets.PushOfVersionAnnotation] != s.ResourceVersion {
		step()
		get(t, ps)
	}
	if ps.Annotations[secrets.PushOfVersionAnnotation] != s.ResourceVersion {
		t.Errorf("PushSecret stamped with version %q, the Secret is at %q",
			ps.Annotations[secrets.PushOfVersionAnnotation], s.ResourceVersion)
	}
	expectNoSecretIn(t, k, string(s.Data[names.DatabasePasswordDataKey]), string(s.Data[keystone.DatabasePasswordCurrentKey]))
}

// A missing database password Secret is restored from the backup, every data key of it;
// nothing is generated while the restore ExternalSecret has not answered, nor after a
// failed fetch; a first install (the backend holds nothing) generates one.
func TestPasswordRestore(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		answer  func(t *testing.T, key client.ObjectKey)
		restore map[string][]byte
	}{
		"restored": {answer: func(t *testing.T, key client.ObjectKey) {
			need(t)(simulate.MarkExternalSecretSynced(ctx, env.Client, key, map[string][]byte{
				names.DatabasePasswordDataKey: []byte("backed-up-password"), rotation.DatabasePasswordStagedKey: []byte("backed-up-staged")}))
		}, restore: map[string][]byte{
			names.DatabasePasswordDataKey: []byte("backed-up-password"), rotation.DatabasePasswordStagedKey: []byte("backed-up-staged")}},
		"first install": {answer: func(t *testing.T, key client.ObjectKey) {
			need(t)(simulate.MarkExternalSecretEmpty(ctx, env.Client, key))
		}},
	} {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			rec := newStepReconciler(t, defaultOptions())
			k := createKeystone(t, newKeystone(ns, "keystone"))
			target := stepTarget(env.Client)
			pwKey := client.ObjectKey{Namespace: ns, Name: names.DatabasePasswordSecretName(k)}
			restoreKey := client.ObjectKey{Namespace: ns, Name: keystone.PasswordRestoreName(k)}
			pending := func(what string) {
				t.Helper()
				res, err := keystone.RunStep(ctx, rec, "Config", target, k, "")
				c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionConfigReady)
				if err != nil || res.RequeueAfter != secrets.PollInterval || c == nil || c.Reason != secrets.ReasonRestorePending ||
					!strings.Contains(c.Message, restoreKey.String()) {
					t.Fatalf("%s: %+v %v, ConfigReady %+v; want RestorePending naming %s", what, res, err, c, restoreKey)
				}
				if err := env.Client.Get(ctx, pwKey, &corev1.Secret{}); !apierrors.IsNotFound(err) {
					t.Fatalf("%s: the password Secret: %v; want none generated", what, err)
				}
			}
			pending("the restore ExternalSecret has not answered")
			need(t)(simulate.MarkExternalSecretNotSynced(ctx, env.Client, restoreKey, "SecretSyncedError"))
			pending("the backend could not be read")

			tc.answer(t, restoreKey)
			if _, err := keystone.RunStep(ctx, rec, "Config", target, k, ""); err != nil {
				t.Fatal(err)
			}
			if c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionConfigReady); c == nil || c.Status != metav1.ConditionTrue {
				t.Fatalf("ConfigReady %+v", c)
			}
			pw := &corev1.Secret{}
			if err := env.Client.Get(ctx, pwKey, pw); err != nil {
				t.Fatal(err)
			}
			if !metav1.IsControlledBy(pw, k) {
				t.Error("the password Secret is not controlled by the Keystone")
			}
			if tc.restore != nil {
				if len(pw.Data) != len(tc.restore) {
					t.Errorf("restored %d data keys, want %d", len(pw.Data), len(tc.restore))
				}
				for key, v := range tc.restore {
					if string(pw.Data[key]) != string(v) {
						t.Errorf("data key %q not restored", key)
					}
				}
			} else if len(pw.Data[names.DatabasePasswordDataKey]) != 32 {
				t.Errorf("generated password has %d characters", len(pw.Data[names.DatabasePasswordDataKey]))
			}
			conn := &corev1.Secret{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.ConnectionSecretName(k)}, conn); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(conn.Data[database.ConnectionDataKey]), ":"+string(pw.Data[names.DatabasePasswordDataKey])+"@") {
				t.Error("the connection does not use the password Secret's password")
			}
			expectNoSecretIn(t, k, string(pw.Data[names.DatabasePasswordDataKey]))
		})
	}
}

// A restore ExternalSecret of that name that the Keystone does not control is refused
// and left alone, and no password is generated beside it.
func TestPasswordRestoreRefusals(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := createKeystone(t, newKeystone(ns, "keystone"))
	es := desiredForeignRestore(k)
	if err := env.Client.Create(ctx, es); err != nil {
		t.Fatal(err)
	}
	_, err := keystone.RunStep(ctx, rec, "Config", stepTarget(env.Client), k, "")
	if err == nil || !strings.Contains(err.Error(), keystone.PasswordRestoreName(k)) {
		t.Fatalf("unowned restore ExternalSecret: %v; want a refusal naming it", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.DatabasePasswordSecretName(k)}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("password Secret: %v; want none", err)
	}
	if c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionConfigReady); c == nil || c.Reason != keystone.ReasonConfigError {
		t.Errorf("ConfigReady %+v; want ConfigError", c)
	}
}

// desiredForeignRestore is an ExternalSecret of the restore's name that the Keystone does
// not control (made by hand).
func desiredForeignRestore(k *v1alpha1.Keystone) *esov1.ExternalSecret {
	return &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: keystone.PasswordRestoreName(k), Namespace: k.Namespace},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: secrets.ESOSecretStoreRef(secrets.EffectiveStoreRef(nil)),
			Target:         esov1.ExternalSecretTarget{Name: "elsewhere"},
		},
	}
}
