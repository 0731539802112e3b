package controller_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/controller"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// RotatePassword stages a password under "staged" once, never touches "password", and
// refuses a Secret without a password or with a malformed key; RunRotatePassword checks
// its flags.
func TestRotatePassword(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	key := client.ObjectKey{Namespace: ns, Name: "keystone-db-password"}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns},
		Data: map[string][]byte{controller.DatabasePasswordDataKey: []byte("in-use-password")}}); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)
	staged, err := controller.RotatePassword(ctx, env.Client, key, now)
	if err != nil || !staged {
		t.Fatalf("first run: staged %v, err %v; want a staged password", staged, err)
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	first := string(s.Data[controller.DatabasePasswordStagedKey])
	if len(first) != 32 || first == "in-use-password" {
		t.Errorf("staged password has %d characters; want 32 new ones", len(first))
	}
	if got := string(s.Data[controller.DatabasePasswordDataKey]); got != "in-use-password" {
		t.Errorf("the password in use was changed")
	}
	if got := s.Annotations[controller.PasswordStagedAtAnnotation]; got != "2026-01-01T03:00:00Z" {
		t.Errorf("staged-at annotation %q", got)
	}
	staged, err = controller.RotatePassword(ctx, env.Client, key, now.Add(time.Hour))
	if err != nil || staged {
		t.Fatalf("second run: staged %v, err %v; want nothing staged", staged, err)
	}
	if err := env.Client.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data[controller.DatabasePasswordStagedKey]) != first {
		t.Error("a second run replaced the staged password")
	}

	empty := client.ObjectKey{Namespace: ns, Name: "no-password"}
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: empty.Name, Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if _, err := controller.RotatePassword(ctx, env.Client, empty, now); !errors.Is(err, controller.ErrNoPassword) ||
		!strings.Contains(err.Error(), empty.String()) {
		t.Errorf("Secret without a password: %v; want ErrNoPassword naming the Secret", err)
	}
	if _, err := controller.RotatePassword(ctx, env.Client, client.ObjectKey{Name: "x"}, now); !errors.Is(err, controller.ErrInvalidRotatePasswordArgs) {
		t.Errorf("key without namespace: %v", err)
	}
	for _, args := range [][]string{nil, {"--secret", "noslash"}, {"--secret", ns + "/a/b"}, {"--secret", key.String(), "extra"}, {"--nope"}} {
		if err := controller.RunRotatePassword(ctx, env.Client, args); !errors.Is(err, controller.ErrInvalidRotatePasswordArgs) {
			t.Errorf("RunRotatePassword %q: %v; want ErrInvalidRotatePasswordArgs", args, err)
		}
	}
	if err := controller.RunRotatePassword(ctx, env.Client, controller.RotatePasswordArgs(key)[1:]); err != nil {
		t.Errorf("RunRotatePassword with RotatePasswordArgs: %v", err)
	}
	if err := controller.RunRotatePassword(ctx, env.Client, controller.RotatePasswordArgs(empty)[1:]); !errors.Is(err, controller.ErrNoPassword) {
		t.Errorf("RunRotatePassword on a Secret without a password: %v", err)
	}
}

// simulatedDatabase plays mariadb-operator's User for a Keystone: the account's
// password follows the value of the Secret key the User references (mariadb-operator
// watches the Secret), and the User is marked Ready for each new generation.
type simulatedDatabase struct {
	k        *v1alpha1.Keystone
	password string
	gen      int64
}

// step applies what mariadb-operator would and returns the password the database
// accepts.
func (d *simulatedDatabase) step(ctx context.Context) (string, error) {
	u := &mariadbv1alpha1.User{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: d.k.Namespace, Name: d.k.Name}, u); err != nil {
		return d.password, err
	}
	s := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: d.k.Namespace, Name: u.Spec.PasswordSecretKeyRef.Name}, s); err != nil {
		return d.password, err
	}
	if v := string(s.Data[u.Spec.PasswordSecretKeyRef.Key]); v != "" {
		d.password = v
	}
	if u.Generation != d.gen {
		if _, err := testenv.MarkUserReady(ctx, env.Client, client.ObjectKeyFromObject(u)); err != nil {
			return d.password, err
		}
		d.gen = u.Generation
	}
	return d.password, nil
}

// A staged password reaches the database and then the pods without the connection
// ever switching to a password the database does not accept: at every observed step
// the pods' connection holds the database's password, or the old one, kept in
// "previous", while the rollout has not switched yet. Afterwards the Secret holds only
// the new password, the old one works nowhere, and no password shows in a condition or
// a CronJob.
func TestPasswordRotationKeepsAPassword(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	k := newKeystone(ns, "keystone")
	k.Spec.PasswordRotation = v1alpha1.CronSpec{Suspend: true}
	k = createKeystone(t, k)
	converge(t, k, "admin-password")
	get(t, k)
	expectReason(t, k, controller.ReasonPasswordRotationIdle)

	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: controller.PasswordRotationCronJobName(k)}}
	get(t, cj)
	if cj.Spec.Schedule != controller.DefaultPasswordRotationSchedule || cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
		t.Errorf("CronJob schedule %q suspend %v; want the default schedule, suspended", cj.Spec.Schedule, cj.Spec.Suspend)
	}
	if got := cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName; got != controller.RotationServiceAccountName(k) {
		t.Errorf("password rotation CronJob runs as %q, want %q", got, controller.RotationServiceAccountName(k))
	}
	fernetCJ := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: controller.NewFernetKeysStep(controller.KeyStepOptions{}).CronJobName(k)}}
	get(t, fernetCJ)
	if got := fernetCJ.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName; got != controller.RotationServiceAccountName(k) {
		t.Errorf("fernet rotation CronJob runs as %q, want %q", got, controller.RotationServiceAccountName(k))
	}
	pwKey := client.ObjectKey{Namespace: ns, Name: controller.DatabasePasswordSecretName(k)}
	if got := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args; strings.Join(got, " ") !=
		strings.Join(controller.RotatePasswordArgs(pwKey), " ") {
		t.Errorf("CronJob args %q", got)
	}

	pw := &corev1.Secret{}
	if err := env.Client.Get(ctx, pwKey, pw); err != nil {
		t.Fatal(err)
	}
	old := string(pw.Data[controller.DatabasePasswordDataKey])
	db := &simulatedDatabase{k: k}
	if got, err := db.step(ctx); err != nil || got != old {
		t.Fatalf("the database does not accept the password in use before the rotation (err %v)", err)
	}
	if staged, err := controller.RotatePassword(ctx, env.Client, pwKey, time.Now()); err != nil || !staged {
		t.Fatalf("staging: %v %v", staged, err)
	}
	if err := env.Client.Get(ctx, pwKey, pw); err != nil {
		t.Fatal(err)
	}
	next := string(pw.Data[controller.DatabasePasswordStagedKey])

	connPassword := func(ctx context.Context) (string, error) {
		conn := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: controller.ConnectionSecretName(k)}, conn); err != nil {
			return "", err
		}
		u, err := url.Parse(string(conn.Data[controller.ConnectionDataKey]))
		if err != nil || u.User == nil {
			return "", errors.New("the connection is not a URL with credentials")
		}
		if p, _ := u.User.Password(); p == old || p == next {
			return p, nil
		}
		return "", errors.New("the connection holds neither password")
	}
	sawWindow, sawSwitched, lastSeen := false, false, ""
	psKey := client.ObjectKey{Namespace: ns, Name: controller.PasswordBackupName(k)}
	slowly(t, 180*time.Second, "rotation finished", func(ctx context.Context) (bool, error) {
		if err := pushBackup(ctx, psKey); err != nil {
			return false, err
		}
		accepted, err := db.step(ctx)
		if err != nil {
			return false, err
		}
		used, err := connPassword(ctx)
		if err != nil {
			return false, err
		}
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, pwKey, s); err != nil {
			return false, err
		}
		switch {
		case used == accepted:
			if used == next {
				sawSwitched = true
			}
		case used == old && string(s.Data[controller.DatabasePasswordPreviousKey]) == old:
			sawWindow = true // the database switched, the pods have not yet; old kept in previous
		default:
			t.Fatalf("the connection uses a password the database does not accept (used new %v, accepted new %v, previous kept %v)",
				used == next, accepted == next, len(s.Data[controller.DatabasePasswordPreviousKey]) > 0)
		}
		get(t, k)
		if r := meta.FindStatusCondition(k.Status.Conditions, controller.ConditionPasswordRotationReady); r != nil && r.Message != lastSeen {
			lastSeen = r.Message
			t.Logf("PasswordRotationReady %s: %s (Ready: %s)", r.Reason, r.Message,
				meta.FindStatusCondition(k.Status.Conditions, "Ready").Message)
		}
		c := meta.FindStatusCondition(k.Status.Conditions, controller.ConditionPasswordRotationReady)
		return c != nil && c.Reason == controller.ReasonPasswordRotated && c.ObservedGeneration == k.Generation, nil
	})
	if !sawWindow || !sawSwitched {
		t.Errorf("phases observed: database ahead of the pods %v, both switched %v", sawWindow, sawSwitched)
	}
	if err := env.Client.Get(ctx, pwKey, pw); err != nil {
		t.Fatal(err)
	}
	if string(pw.Data[controller.DatabasePasswordDataKey]) != next || len(pw.Data) != 1 ||
		pw.Annotations[controller.PasswordRotatedAtAnnotation] == "" {
		t.Errorf("after the rotation the Secret holds keys %d (want only the new password) and rotated-at %q",
			len(pw.Data), pw.Annotations[controller.PasswordRotatedAtAnnotation])
	}
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: k.Name}, d); err != nil {
		t.Fatal(err)
	}
	conn := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: controller.ConnectionSecretName(k)}, conn); err != nil {
		t.Fatal(err)
	}
	if d.Spec.Template.Annotations[controller.ConnectionVersionAnnotation] != conn.ResourceVersion {
		t.Error("the pods do not run with the rotated connection")
	}
	// Dropping "current" points the User back at "password" (the same value): one more
	// generation for mariadb-operator to acknowledge, then the Keystone is Ready.
	slowly(t, 60*time.Second, "Keystone Ready after the rotation", func(ctx context.Context) (bool, error) {
		accepted, err := db.step(ctx)
		if err != nil || accepted != next {
			return false, err
		}
		get(t, k)
		c := meta.FindStatusCondition(k.Status.Conditions, "Ready")
		u := &mariadbv1alpha1.User{}
		_ = env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: k.Name}, u)
		if msg := fmt.Sprintf("Ready: %s; User generation %d reads data key %q", c.Message, u.Generation, u.Spec.PasswordSecretKeyRef.Key); msg != lastSeen {
			lastSeen = msg
			t.Log(msg)
		}
		return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == k.Generation, nil
	})
	u := &mariadbv1alpha1.User{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: k.Name}, u); err != nil {
		t.Fatal(err)
	}
	if u.Spec.PasswordSecretKeyRef.Key != controller.DatabasePasswordDataKey {
		t.Errorf("the User reads data key %q after the rotation", u.Spec.PasswordSecretKeyRef.Key)
	}
	expectNoSecretIn(t, k, old, next)
}

// The row never writes a password Secret it does not control, and refuses a Secret
// whose keys describe no phase of a rotation, with PasswordRotationFailed.
func TestPasswordRotationRefusals(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, controller.DefaultOptions())
	storeReady(t)
	k := createKeystone(t, newKeystone(ns, "keystone"))
	get(t, k)
	key := client.ObjectKey{Namespace: ns, Name: controller.DatabasePasswordSecretName(k)}
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns},
		Data: map[string][]byte{controller.DatabasePasswordDataKey: []byte("p1"), controller.DatabasePasswordStagedKey: []byte("second-password-value")}}
	if err := env.Client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	target := stepTarget(env.Client)
	res, err := controller.RunStep(ctx, rec, "PasswordRotation", target, k, "")
	if !errors.Is(err, apply.ErrNotControlled) || !res.IsZero() {
		t.Fatalf("unowned Secret: %+v %v; want ErrNotControlled", res, err)
	}
	expectReason(t, k, controller.ReasonPasswordRotationFailed)
	get(t, foreign)
	if len(foreign.Data) != 2 || string(foreign.Data[controller.DatabasePasswordDataKey]) != "p1" {
		t.Error("the unowned Secret was written")
	}

	if err := apply.SetOwnership(env.Client, env.Scheme, k, foreign); err != nil {
		t.Fatal(err)
	}
	foreign.Data = map[string][]byte{controller.DatabasePasswordDataKey: []byte("p1"), controller.DatabasePasswordCurrentKey: []byte("second-password-value")}
	if err := env.Client.Update(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	res, err = controller.RunStep(ctx, rec, "PasswordRotation", target, k, "")
	if !errors.Is(err, controller.ErrInconsistentPasswordSecret) || !res.IsZero() || strings.Contains(err.Error(), "second-password-value") {
		t.Fatalf("current without previous: %+v %v; want ErrInconsistentPasswordSecret", res, err)
	}
	expectReason(t, k, controller.ReasonPasswordRotationFailed)
}

// slowly polls cond every 500 ms for up to timeout and fails the test with what when it
// never holds: a poll of several requests every 100 ms would take the operator's
// share of the client rate limit it shares with the test.
func slowly(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	if err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true,
		func(ctx context.Context) (bool, error) {
			ok, err := cond(ctx)
			last = err
			return ok, nil
		}); err != nil {
		t.Fatalf("%s: not within %s (last error: %v)", what, timeout, last)
	}
}

// expectReason fails unless k's PasswordRotationReady condition has reason.
func expectReason(t *testing.T, k *v1alpha1.Keystone, reason string) {
	t.Helper()
	c := meta.FindStatusCondition(k.Status.Conditions, controller.ConditionPasswordRotationReady)
	if c == nil || c.Reason != reason {
		t.Errorf("PasswordRotationReady %+v; want reason %s", c, reason)
	}
}
