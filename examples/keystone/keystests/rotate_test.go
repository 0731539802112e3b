package keystests

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// week is the default rotation interval.
const week = 168 * time.Hour

// sign is a token-like signature of msg: HMAC-SHA256 under the signing half of an
// encoded key, as a fernet token is signed.
func sign(t testing.TB, key []byte, msg string) []byte {
	t.Helper()
	raw, err := base64.URLEncoding.DecodeString(string(key))
	if err != nil || len(raw) != keys.KeySize {
		t.Fatalf("not a key: %v", err)
	}
	m := hmac.New(sha256.New, raw[:16])
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// verifies reports whether a key of repo verifies sig, as Keystone tries every key of
// its repository.
func verifies(t testing.TB, repo keys.Repository, msg string, sig []byte) bool {
	t.Helper()
	for _, key := range repo {
		if hmac.Equal(sign(t, key, msg), sig) {
			return true
		}
	}
	return false
}

// rotate calls RotateKeys on the world's Secret through env.Client.
func (w *world) rotate(maxActiveKeys int, interval time.Duration, at time.Time) bool {
	w.t.Helper()
	rotated, err := rotation.RotateKeys(context.Background(), env.Client, w.secretKey(), maxActiveKeys, interval, at)
	if err != nil {
		w.t.Fatalf("RotateKeys at %s: %v", at, err)
	}
	return rotated
}

// TestRotationEndToEnd: a generated repository is rotated at most once per interval
// after its generation and after every rotation; the staged key becomes the primary,
// the previous primary stays to verify what it signed, the number of keys never exceeds
// maxActiveKeys, the step reports the rotated repository without writing it, and the
// PushSecret backs up the new version.
func TestRotationEndToEnd(t *testing.T) {
	for _, kd := range kinds {
		t.Run(kd.name, func(t *testing.T) {
			w := newWorld(t, kd, nil)
			before := w.converge()
			const msg = "a token issued before the rotation"
			token := sign(t, before[before.Primary()], msg)

			if w.rotate(3, week, t0.Add(time.Hour)) {
				t.Fatal("rotated an hour after the generation, want once the interval has passed")
			}
			at := t0.Add(week)
			if !w.rotate(3, week, at) {
				t.Fatal("not rotated once the interval had passed")
			}
			for _, again := range []time.Time{at, at.Add(time.Hour), at.Add(week - time.Second)} {
				if w.rotate(3, week, again) {
					t.Fatalf("rotated again at %s, within the interval after %s", again, at)
				}
			}
			after := w.repo()
			switch {
			case after.Primary() != 2 || string(after[2]) != string(before[0]):
				t.Errorf("primary is %d, want 2 holding the former staged key", after.Primary())
			case string(after[1]) != string(before[1]):
				t.Error("the former primary 1 is gone")
			case string(after[0]) == string(before[0]):
				t.Error("no new staged key")
			}
			if !verifies(t, after, msg, token) {
				t.Error("a token signed by the former primary no longer verifies after one rotation")
			}
			s, _ := w.secret()
			if got := s.Annotations[rotation.RotatedAtAnnotation]; got != at.Format(time.RFC3339) {
				t.Errorf("%s = %q, want %s", rotation.RotatedAtAnnotation, got, at.Format(time.RFC3339))
			}

			// The step keeps the rotated repository and reports it.
			testenv.ExpectUnchanged(t, env.Client, w.k, func(context.Context) error {
				_, err := w.pass()
				return err
			}, childLists()...)
			w.expectCondition(metav1.ConditionTrue, keystone.ReasonKeysReady, "3 active", "primary 2")
			w.eso()
			if got, _ := w.bao.Get(w.step.RemoteKey(w.k)); got["2"] != string(after[2]) || got["0"] != string(after[0]) || len(got) != 3 {
				t.Error("the backend does not hold the rotated repository")
			}

			// Every interval one more rotation, never more than maxActiveKeys keys.
			for i := 2; i <= 5; i++ {
				at = at.Add(week)
				if !w.rotate(3, week, at) {
					t.Fatalf("rotation %d did not happen", i)
				}
				if repo := w.repo(); len(repo) != 3 || repo.Primary() != i+1 {
					t.Fatalf("after rotation %d: %s, want 3 keys with primary %d", i, repo, i+1)
				}
			}
			if verifies(t, w.repo(), msg, token) {
				t.Error("a token of a key removed long ago still verifies: the check above cannot fail")
			}

			// maxActiveKeys 5 keeps five keys.
			for range 4 {
				at = at.Add(week)
				w.rotate(5, week, at)
			}
			if repo := w.repo(); len(repo) != 5 {
				t.Errorf("with maxActiveKeys 5: %s", repo)
			}
		})
	}
}

// TestRotateKeysOptimisticLock: a rotation that lands between RotateKeys' read and its
// write makes the write fail with a Conflict; the repository is rotated exactly once.
func TestRotateKeysOptimisticLock(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, fernet, nil)
	w.converge()
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(week)
	var once sync.Once
	racing := interceptor.NewClient(base, interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			once.Do(func() {
				if !w.rotate(3, week, at) {
					t.Error("the concurrent rotation did not rotate")
				}
			})
			return c.Update(ctx, obj, opts...)
		},
	})
	rotated, err := rotation.RotateKeys(ctx, racing, w.secretKey(), 3, week, at)
	if rotated || !apierrors.IsConflict(err) {
		t.Fatalf("RotateKeys = %v, %v; want a Conflict and no rotation", rotated, err)
	}
	if repo := w.repo(); repo.Primary() != 2 {
		t.Errorf("primary %d after two racing rotations, want 2 (one rotation)", repo.Primary())
	}
}

// TestRotateKeysFaults: a fault injected into RotateKeys' read or write surfaces as an
// error without a rotation reported, never leaves a broken repository, and a retry at
// the same time never rotates twice, whether the failed write took effect or not.
func TestRotateKeysFaults(t *testing.T) {
	for _, verb := range []faults.Verb{faults.VerbGet, faults.VerbUpdate} {
		matrix := faults.All()
		if verb == faults.VerbGet {
			matrix = faults.Reads()
		}
		for _, fault := range matrix {
			t.Run(fmt.Sprintf("%s/%s", verb, fault.Name), func(t *testing.T) {
				ctx := context.Background()
				w := newWorld(t, credential, nil)
				w.converge()
				inj := faults.NewInjector()
				inj.Arm(verb, 1, fault)
				at := t0.Add(week)
				rotated, err := rotation.RotateKeys(ctx, inj.Client(env.Client), w.secretKey(), 3, week, at)
				if !inj.Fired() {
					t.Fatal("the fault was not injected")
				}
				if err == nil || !errors.Is(err, faults.ErrInjected) || rotated {
					t.Fatalf("RotateKeys = %v, %v; want the injected error and no rotation reported", rotated, err)
				}
				w.repo() // valid
				w.rotate(3, week, at)
				if repo := w.repo(); repo.Primary() != 2 {
					t.Errorf("primary %d after a failed and a retried rotation, want 2 (one rotation)", repo.Primary())
				}
			})
		}
	}
}

// TestRotateKeysRefuses: RotateKeys writes nothing to a Secret that holds no valid
// repository, has an unparsable rotated-at annotation or is being deleted, and makes no
// request at all for invalid arguments.
func TestRotateKeysRefuses(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	repo := newRepository(t, 0, 3)
	create := func(name string, data map[string][]byte, annotations map[string]string) client.ObjectKey {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annotations}, Data: data}
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		return client.ObjectKeyFromObject(s)
	}
	unchanged := func(key client.ObjectKey, rv string) {
		t.Helper()
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, key, s); err != nil {
			t.Fatal(err)
		}
		if s.ResourceVersion != rv {
			t.Errorf("Secret %s was written", key)
		}
	}
	rvOf := func(key client.ObjectKey) string {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, key, s); err != nil {
			t.Fatal(err)
		}
		return s.ResourceVersion
	}

	invalid := create("invalid", map[string][]byte{"0": repo[0], "1": []byte("not-a-key")}, nil)
	rv := rvOf(invalid)
	if _, err := rotation.RotateKeys(ctx, env.Client, invalid, 3, week, t0); !errors.Is(err, keys.ErrInvalidRepository) {
		t.Errorf("invalid repository: %v", err)
	}
	unchanged(invalid, rv)

	badTime := create("bad-time", repo.SecretData(), map[string]string{rotation.RotatedAtAnnotation: "last tuesday"})
	rv = rvOf(badTime)
	if _, err := rotation.RotateKeys(ctx, env.Client, badTime, 3, week, t0); !errors.Is(err, rotation.ErrInvalidRotatedAt) {
		t.Errorf("unparsable annotation: %v", err)
	}
	unchanged(badTime, rv)

	deleting := env.CreateBeingDeleted(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "deleting", Namespace: ns}, Data: repo.SecretData()})
	if _, err := rotation.RotateKeys(ctx, env.Client, client.ObjectKeyFromObject(deleting), 3, week, t0); !errors.Is(err, apply.ErrBeingDeleted) {
		t.Errorf("being deleted: %v", err)
	}
	unchanged(client.ObjectKeyFromObject(deleting), deleting.GetResourceVersion())

	inj := faults.NewInjector()
	c := inj.Client(env.Client)
	for name, call := range map[string]func() error{
		"maxActiveKeys 2": func() error { _, err := rotation.RotateKeys(ctx, c, badTime, 2, week, t0); return err },
		"interval 0":      func() error { _, err := rotation.RotateKeys(ctx, c, badTime, 3, 0, t0); return err },
		"no namespace": func() error {
			_, err := rotation.RotateKeys(ctx, c, client.ObjectKey{Name: "x"}, 3, week, t0)
			return err
		},
	} {
		if err := call(); !errors.Is(err, rotation.ErrInvalidRotateKeysArgs) {
			t.Errorf("%s: %v, want ErrInvalidRotateKeysArgs", name, err)
		}
	}
	if n := inj.Calls(faults.VerbGet); n != 0 {
		t.Errorf("invalid arguments made %d requests", n)
	}
	for _, text := range []string{string(repo[0]), string(repo[1])} {
		for _, key := range []client.ObjectKey{invalid, badTime} {
			_, err := rotation.RotateKeys(ctx, env.Client, key, 3, week, t0)
			if err != nil && strings.Contains(err.Error(), text[:16]) {
				t.Errorf("key material in %q", err)
			}
		}
	}
}

// TestRunRotateKeysLeastPrivilege: the rotation CronJob's arguments, run by a user who
// holds exactly rotation.SecretRules, rotate the repository; without update the
// rotation is forbidden and changes nothing.
func TestRunRotateKeysLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t, credential, func(k *v1alpha1.Keystone) {
		k.Spec.Credential.MaxActiveKeys = 4
	})
	w.converge()
	cj := checkCronJob(t, w, 4, "168h")
	args := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args
	if args[0] != rotation.RotateKeysCommand {
		t.Fatalf("args %v do not start with %s", args, rotation.RotateKeysCommand)
	}
	rotator := env.ClientAs(t, "key-rotator", &rbacv1.ClusterRole{Rules: rotation.SecretRules(w.secretKey().Name)})
	if err := rotation.RunRotateKeys(ctx, rotator, args[1:], func() time.Time { return t0.Add(week) }); err != nil {
		t.Fatal(err)
	}
	if repo := w.repo(); repo.Primary() != 2 {
		t.Fatalf("primary %d after the CronJob's rotation, want 2", repo.Primary())
	}

	readOnly := env.ClientAs(t, "key-reader", &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{w.secretKey().Name}, Verbs: []string{"get"},
	}}})
	err := rotation.RunRotateKeys(ctx, readOnly, args[1:], func() time.Time { return t0.Add(2 * week) })
	if !apierrors.IsForbidden(err) {
		t.Fatalf("rotation without update = %v, want Forbidden", err)
	}
	if repo := w.repo(); repo.Primary() != 2 {
		t.Errorf("primary %d after a forbidden rotation, want 2", repo.Primary())
	}
}
