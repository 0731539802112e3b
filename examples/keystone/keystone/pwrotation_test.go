package keystone_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/reconciler-sdk/testenv"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// simulatedDatabase plays mariadb-operator for a Keystone's Users and Grants: each
// account's password follows the value of the Secret key its User references
// (mariadb-operator watches the Secret), and every User and Grant is marked Ready for
// each new generation. A credential is accepted when its account has that password and
// a Ready Grant.
type simulatedDatabase struct {
	k         *v1alpha1.Keystone
	passwords map[string]string // account → password
	granted   map[string]bool   // account → Grant Ready
	gens      map[string]int64  // "User/<name>" or "Grant/<name>" → generation marked Ready
}

func newSimulatedDatabase(k *v1alpha1.Keystone) *simulatedDatabase {
	return &simulatedDatabase{k: k, passwords: map[string]string{}, granted: map[string]bool{}, gens: map[string]int64{}}
}

// step applies what mariadb-operator would.
func (d *simulatedDatabase) step(ctx context.Context) error {
	users := &mariadbv1alpha1.UserList{}
	if err := env.Client.List(ctx, users, client.InNamespace(d.k.Namespace)); err != nil {
		return err
	}
	for _, u := range users.Items {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: d.k.Namespace, Name: u.Spec.PasswordSecretKeyRef.Name}, s); err != nil {
			return err
		}
		if v := string(s.Data[u.Spec.PasswordSecretKeyRef.Key]); v != "" {
			d.passwords[u.Spec.Name] = v
		}
		if d.gens["User/"+u.Name] != u.Generation {
			if _, err := simulate.MarkUserReady(ctx, env.Client, client.ObjectKeyFromObject(&u)); err != nil {
				return err
			}
			d.gens["User/"+u.Name] = u.Generation
		}
	}
	grants := &mariadbv1alpha1.GrantList{}
	if err := env.Client.List(ctx, grants, client.InNamespace(d.k.Namespace)); err != nil {
		return err
	}
	for _, g := range grants.Items {
		if d.gens["Grant/"+g.Name] != g.Generation {
			if _, err := simulate.MarkGrantReady(ctx, env.Client, client.ObjectKeyFromObject(&g)); err != nil {
				return err
			}
			d.gens["Grant/"+g.Name] = g.Generation
		}
		d.granted[g.Spec.Username] = true
	}
	return nil
}

// accepts reports whether the database lets account in with password.
func (d *simulatedDatabase) accepts(account, password string) bool {
	return password != "" && d.passwords[account] == password && d.granted[account]
}

// credential is an account and its password.
type credential struct{ account, password string }

// connection returns the credential of k's connection Secret.
func connection(ctx context.Context, k *v1alpha1.Keystone) (credential, error) {
	conn := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: names.ConnectionSecretName(k)}, conn); err != nil {
		return credential{}, err
	}
	u, err := url.Parse(string(conn.Data[database.ConnectionDataKey]))
	if err != nil || u.User == nil {
		return credential{}, errors.New("the connection is not a URL with credentials")
	}
	p, _ := u.User.Password()
	return credential{u.User.Username(), p}, nil
}

// rotateOnce stages a password and plays ESO and mariadb-operator until the rotation
// finished and k is Ready again. At every observation the pods' connection holds a
// credential the database accepts, and so does kept, the credential of the pods from
// before the rotation, which the pods not yet replaced use. It returns the new password.
func rotateOnce(t *testing.T, k *v1alpha1.Keystone, db *simulatedDatabase, kept credential) string {
	t.Helper()
	ctx := context.Background()
	pwKey := client.ObjectKey{Namespace: k.Namespace, Name: names.DatabasePasswordSecretName(k)}
	psKey := client.ObjectKey{Namespace: k.Namespace, Name: keystone.PasswordBackupName(k)}
	if staged, err := rotation.RotatePassword(ctx, env.Client, pwKey, time.Now()); err != nil || !staged {
		t.Fatalf("staging: %v %v", staged, err)
	}
	pw := &corev1.Secret{}
	if err := env.Client.Get(ctx, pwKey, pw); err != nil {
		t.Fatal(err)
	}
	next := string(pw.Data[rotation.DatabasePasswordStagedKey])
	get(t, k)
	startGen := k.Generation
	lastSeen, switched := "", false
	slowly(t, 180*time.Second, "rotation finished and Ready", func(ctx context.Context) (bool, error) {
		if _, err := simulate.MarkPushSecretSynced(ctx, env.Client, psKey); err != nil {
			return false, err
		}
		if err := db.step(ctx); err != nil {
			return false, err
		}
		used, err := connection(ctx, k)
		if err != nil {
			return false, err
		}
		if !db.accepts(used.account, used.password) {
			t.Fatalf("the connection uses account %s with a password the database does not accept (new password: %v)",
				used.account, used.password == next)
		}
		if !db.accepts(kept.account, kept.password) {
			t.Fatalf("the credential of the pods from before the rotation (account %s) is refused during the rotation", kept.account)
		}
		if used.account != kept.account && used.password == next {
			switched = true
		}
		get(t, k)
		r := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionPasswordRotationReady)
		ready := meta.FindStatusCondition(k.Status.Conditions, "Ready")
		if r != nil && r.Message != lastSeen {
			lastSeen = r.Message
			t.Logf("PasswordRotationReady %s: %s", r.Reason, r.Message)
		}
		// Done when the pods switched and the staged password has been taken and
		// settled (staged and current are gone): the condition of the previous
		// rotation ("last rotated at") already reads PasswordRotated before this
		// one starts.
		pw := &corev1.Secret{}
		if err := env.Client.Get(ctx, pwKey, pw); err != nil {
			return false, err
		}
		settled := len(pw.Data[rotation.DatabasePasswordStagedKey]) == 0 && len(pw.Data[keystone.DatabasePasswordCurrentKey]) == 0
		return switched && settled && r != nil && r.Reason == keystone.ReasonPasswordRotated && strings.Contains(r.Message, "rotated at") &&
			ready != nil && ready.Status == metav1.ConditionTrue && ready.ObservedGeneration == startGen, nil
	})
	return next
}

// Password rotation is gapless: the new password goes to the idle account, the pods
// switch to that account, and the previously active account keeps its password
// throughout the rollout (real Deployment controllers), then stays idle; a second
// rotation goes back to the first account. No password shows in a condition, a Job or
// a CronJob.
func TestPasswordRotationGapless(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	k := newKeystone(ns, "keystone")
	k.Spec.PasswordRotation = v1alpha1.CronSpec{Suspend: true}
	k = createKeystone(t, k)
	converge(t, k, "admin-password")
	get(t, k)
	expectReason(t, k, keystone.ReasonPasswordRotationIdle)

	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: keystone.PasswordRotationCronJobName(k)}}
	get(t, cj)
	if cj.Spec.Schedule != keystone.DefaultPasswordRotationSchedule || cj.Spec.Suspend == nil || !*cj.Spec.Suspend {
		t.Errorf("CronJob schedule %q suspend %v; want the default schedule, suspended", cj.Spec.Schedule, cj.Spec.Suspend)
	}
	if got := cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName; got != rotation.ServiceAccountName(k) {
		t.Errorf("password rotation CronJob runs as %q, want %q", got, rotation.ServiceAccountName(k))
	}
	fernetCJ := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: keystone.NewFernetKeysStep(keystone.KeyStepOptions{}).CronJobName(k)}}
	get(t, fernetCJ)
	if got := fernetCJ.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName; got != rotation.ServiceAccountName(k) {
		t.Errorf("fernet rotation CronJob runs as %q, want %q", got, rotation.ServiceAccountName(k))
	}
	pwKey := client.ObjectKey{Namespace: ns, Name: names.DatabasePasswordSecretName(k)}
	if got := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args; strings.Join(got, " ") !=
		strings.Join(rotation.RotatePasswordArgs(pwKey), " ") {
		t.Errorf("CronJob args %q", got)
	}

	db := newSimulatedDatabase(k)
	if err := db.step(ctx); err != nil {
		t.Fatal(err)
	}
	accountA, accountB := keystone.DatabaseAccountName(k, keystone.AccountA), keystone.DatabaseAccountName(k, keystone.AccountB)
	before, err := connection(ctx, k)
	if err != nil || before.account != accountA || !db.accepts(before.account, before.password) {
		t.Fatalf("before the rotation the pods use account %q (err %v); want %s, accepted", before.account, err, accountA)
	}

	first := rotateOnce(t, k, db, before)
	pw := &corev1.Secret{}
	if err := env.Client.Get(ctx, pwKey, pw); err != nil {
		t.Fatal(err)
	}
	if string(pw.Data[keystone.DatabaseActiveAccountKey]) != keystone.AccountB || string(pw.Data[keystone.DatabasePasswordBDataKey]) != first ||
		string(pw.Data[names.DatabasePasswordDataKey]) != before.password || len(pw.Data) != 3 {
		t.Errorf("after the first rotation the Secret holds %d keys, active account %q; want account b with the new password, a unchanged",
			len(pw.Data), pw.Data[keystone.DatabaseActiveAccountKey])
	}
	after, err := connection(ctx, k)
	if err != nil || after != (credential{accountB, first}) {
		t.Errorf("after the first rotation the pods use account %q (new password %v); want %s", after.account, after.password == first, accountB)
	}
	for account, wantKey := range map[string]string{keystone.AccountA: names.DatabasePasswordDataKey, keystone.AccountB: keystone.DatabasePasswordBDataKey} {
		u := &mariadbv1alpha1.User{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: keystone.DatabaseUserObjectName(k, account)}}
		get(t, u)
		g := &mariadbv1alpha1.Grant{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: keystone.DatabaseUserObjectName(k, account)}}
		get(t, g)
		if u.Spec.PasswordSecretKeyRef.Key != wantKey || u.Spec.Name != keystone.DatabaseAccountName(k, account) ||
			g.Spec.Username != u.Spec.Name || !metav1.IsControlledBy(u, k) || !metav1.IsControlledBy(g, k) {
			t.Errorf("User %s reads %q for account %q, Grant for %q; want %q", u.Name, u.Spec.PasswordSecretKeyRef.Key, u.Spec.Name, g.Spec.Username, wantKey)
		}
	}
	if !db.accepts(accountA, before.password) {
		t.Error("the idle account lost its password")
	}
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: k.Name}, d); err != nil {
		t.Fatal(err)
	}
	conn := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.ConnectionSecretName(k)}, conn); err != nil {
		t.Fatal(err)
	}
	if d.Spec.Template.Annotations[keystone.ConnectionVersionAnnotation] != conn.ResourceVersion || d.Status.UpdatedReplicas != d.Status.Replicas {
		t.Error("the pods do not run with the rotated connection")
	}

	second := rotateOnce(t, k, db, after)
	if err := env.Client.Get(ctx, pwKey, pw); err != nil {
		t.Fatal(err)
	}
	final, err := connection(ctx, k)
	if err != nil || final != (credential{accountA, second}) || string(pw.Data[keystone.DatabaseActiveAccountKey]) != keystone.AccountA {
		t.Errorf("after the second rotation the pods use account %q (new password %v); want %s again", final.account, final.password == second, accountA)
	}
	if db.accepts(accountA, before.password) || !db.accepts(accountB, first) {
		t.Error("the second rotation did not replace account a's old password, or changed account b's")
	}
	expectNoSecretIn(t, k, before.password, first, second)
}

// The row never writes a password Secret it does not control, and refuses a Secret
// whose keys describe no state of the accounts or no phase of a rotation, with
// PasswordRotationFailed; the Config row refuses to build a connection from it.
func TestPasswordRotationRefusals(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	storeReady(t)
	k := createKeystone(t, newKeystone(ns, "keystone"))
	get(t, k)
	key := client.ObjectKey{Namespace: ns, Name: names.DatabasePasswordSecretName(k)}
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: ns},
		Data: map[string][]byte{names.DatabasePasswordDataKey: []byte("p1"), rotation.DatabasePasswordStagedKey: []byte("second-password-value")}}
	if err := env.Client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	target := stepTarget(env.Client)
	res, err := keystone.RunStep(ctx, rec, "PasswordRotation", target, k, "")
	if !errors.Is(err, apply.ErrNotControlled) || !res.IsZero() {
		t.Fatalf("unowned Secret: %+v %v; want ErrNotControlled", res, err)
	}
	expectReason(t, k, keystone.ReasonPasswordRotationFailed)
	get(t, foreign)
	if len(foreign.Data) != 2 || string(foreign.Data[names.DatabasePasswordDataKey]) != "p1" {
		t.Error("the unowned Secret was written")
	}

	for name, data := range map[string]map[string][]byte{
		"unknown account": {names.DatabasePasswordDataKey: []byte("p1"), keystone.DatabaseActiveAccountKey: []byte("c"),
			keystone.DatabasePasswordCurrentKey: []byte("second-password-value")},
		"active account without a password": {names.DatabasePasswordDataKey: []byte("p1"),
			keystone.DatabaseActiveAccountKey: []byte(keystone.AccountB), keystone.DatabasePasswordCurrentKey: []byte("second-password-value")},
		"empty current": {names.DatabasePasswordDataKey: []byte("second-password-value"), keystone.DatabasePasswordCurrentKey: {}},
	} {
		get(t, foreign)
		if err := apply.SetOwnership(env.Client, env.Scheme, k, foreign); err != nil {
			t.Fatal(err)
		}
		foreign.Data = data
		if err := env.Client.Update(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		version := foreign.ResourceVersion
		res, err = keystone.RunStep(ctx, rec, "PasswordRotation", target, k, "")
		if !errors.Is(err, keystone.ErrInconsistentPasswordSecret) || !res.IsZero() || strings.Contains(err.Error(), "second-password-value") {
			t.Fatalf("%s: %+v %v; want ErrInconsistentPasswordSecret", name, res, err)
		}
		expectReason(t, k, keystone.ReasonPasswordRotationFailed)
		res, err = keystone.RunStep(ctx, rec, "Config", target, k, "")
		if c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionConfigReady); !errors.Is(err, keystone.ErrInconsistentPasswordSecret) ||
			!res.IsZero() || c == nil || c.Reason != keystone.ReasonConfigError || strings.Contains(c.Message, "second-password-value") {
			t.Fatalf("%s: Config %+v %v, ConfigReady %+v; want ConfigError", name, res, err, c)
		}
		get(t, foreign)
		if foreign.ResourceVersion != version {
			t.Errorf("%s: the Secret was written", name)
		}
	}
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
	c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionPasswordRotationReady)
	if c == nil || c.Reason != reason {
		t.Errorf("PasswordRotationReady %+v; want reason %s", c, reason)
	}
}

// markAsMariaDB marks the User or Grant at key Ready the way mariadb-operator v25
// writes it: reason Created, observedGeneration 0. Once True, mariadb-operator never
// writes the condition again on a successful reconcile (the patch is empty), so a spec
// change leaves this very condition, lastTransitionTime included, in place.
func markAsMariaDB(t *testing.T, obj client.Object) {
	t.Helper()
	ctx := context.Background()
	key := client.ObjectKeyFromObject(obj)
	switch obj.(type) {
	case *mariadbv1alpha1.User:
		need(t)(simulate.MarkUserReady(ctx, env.Client, key))
	case *mariadbv1alpha1.Grant:
		need(t)(simulate.MarkGrantReady(ctx, env.Client, key))
	default:
		t.Fatalf("markAsMariaDB: %T", obj)
	}
	get(t, obj)
	var conds *[]metav1.Condition
	switch o := obj.(type) {
	case *mariadbv1alpha1.User:
		conds = &o.Status.Conditions
	case *mariadbv1alpha1.Grant:
		conds = &o.Status.Conditions
	}
	for i := range *conds {
		(*conds)[i].ObservedGeneration = 0
	}
	if err := env.Client.Status().Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
}

// checkCredential returns the account and password the password check Job of k
// connects with: the connection URL of its container's environment, with the
// variables it refers to ($(NAME)) expanded from the Secret keys they name, as the
// kubelet expands them. It fails the test when the Job's spec holds the password.
func checkCredential(t *testing.T, k *v1alpha1.Keystone) (credential, *batchv1.Job) {
	t.Helper()
	ctx := context.Background()
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: keystone.PasswordCheckJobName(k)}}
	get(t, j)
	ctr := j.Spec.Template.Spec.Containers[0]
	if got := strings.Join(ctr.Command, " "); got != "keystone-manage db_version" {
		t.Errorf("the check runs %q", got)
	}
	vars, conn := map[string]string{}, ""
	for _, e := range ctr.Env {
		switch {
		case e.Name == database.ConnectionEnv:
			if e.ValueFrom != nil {
				t.Fatalf("the check connects with the connection Secret, not with the new password")
			}
			conn = e.Value
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			s := &corev1.Secret{}
			if err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: e.ValueFrom.SecretKeyRef.Name}, s); err != nil {
				t.Fatal(err)
			}
			vars[e.Name] = string(s.Data[e.ValueFrom.SecretKeyRef.Key])
		}
	}
	for name, v := range vars {
		if strings.Contains(fmt.Sprint(j.Spec), v) {
			t.Fatalf("the Job's spec holds the value of %s", name)
		}
		conn = strings.ReplaceAll(conn, "$("+name+")", v)
	}
	u, err := url.Parse(strings.ReplaceAll(conn, "$$", "$"))
	if err != nil || u.User == nil {
		t.Fatalf("the check's connection is not a URL with credentials")
	}
	p, _ := u.User.Password()
	return credential{u.User.Username(), p}, j
}

// The pods switch to the idle account only once the database has been shown to accept
// it with the new password. mariadb-operator writes Ready without observedGeneration
// and leaves a True condition as it is: after the rotation points the idle account's
// User at the new password, its Ready is the one of the previous spec, True, before
// mariadb-operator has run ALTER USER. The step runs the password check Job instead of
// trusting it: while the database (played here) refuses the new password the check
// fails, is run again, and the pods keep the active account; once the database
// accepts it, the check passes and the pods switch.
func TestPasswordRotationWaitsForTheDatabase(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	storeReady(t)
	mariaDBReady(t, ns)
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(simulatedJobs{env.Client})
	run := func(step string) (ctrl.Result, error) {
		t.Helper()
		if step == "Config" {
			return runConfig(t, rec, target, k, "")
		}
		return keystone.RunStep(ctx, rec, step, target, k, "")
	}
	if _, err := run("Config"); err != nil {
		t.Fatal(err)
	}
	pwKey := client.ObjectKey{Namespace: ns, Name: names.DatabasePasswordSecretName(k)}
	pw := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pwKey.Name}}
	get(t, pw)
	// The state a first rotation leaves: the pods on account b, account a idle with its
	// old password.
	oldA := string(pw.Data[names.DatabasePasswordDataKey])
	pw.Data[keystone.DatabasePasswordBDataKey] = []byte("SecondAccountPassword1")
	pw.Data[keystone.DatabaseActiveAccountKey] = []byte(keystone.AccountB)
	if err := env.Client.Update(ctx, pw); err != nil {
		t.Fatal(err)
	}
	if _, err := run("Config"); err != nil {
		t.Fatal(err)
	}
	accountA, accountB := keystone.DatabaseAccountName(k, keystone.AccountA), keystone.DatabaseAccountName(k, keystone.AccountB)
	accepted := map[string]string{accountA: oldA, accountB: "SecondAccountPassword1"} // what the database accepts
	userA := &mariadbv1alpha1.User{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: keystone.DatabaseUserObjectName(k, keystone.AccountA)}}
	testenv.Eventually(t, 30*time.Second, "Users and Grants of both accounts", func(ctx context.Context) (bool, error) {
		_, err := run("Database")
		_, _ = simulate.MarkDatabaseReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: k.Name})
		for _, account := range []string{keystone.AccountA, keystone.AccountB} {
			key := client.ObjectKey{Namespace: ns, Name: keystone.DatabaseUserObjectName(k, account)}
			u, g := &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}
			if env.Client.Get(ctx, key, u) != nil || env.Client.Get(ctx, key, g) != nil {
				return false, err
			}
			if len(u.Status.Conditions) == 0 {
				markAsMariaDB(t, u)
				markAsMariaDB(t, g)
			}
		}
		// Past both accounts, the row waits for db-sync, which no one runs here.
		c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionDatabaseReady)
		return c != nil && c.Reason == database.ReasonDBSyncInProgress, err
	})
	before, err := connection(ctx, k)
	if err != nil || before.account != accountB || accepted[before.account] != before.password {
		t.Fatalf("before the rotation the pods use %q (err %v), want account %s with a password the database accepts", before.account, err, accountB)
	}

	// Stage the second rotation; the backup holds it; account a's User reads it.
	need(t)(rotation.RotatePassword(ctx, env.Client, pwKey, time.Now()))
	get(t, pw)
	next := string(pw.Data[rotation.DatabasePasswordStagedKey])
	if _, err := run("PasswordRotation"); err != nil {
		t.Fatal(err)
	}
	need(t)(simulate.MarkPushSecretSynced(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: keystone.PasswordBackupName(k)}))
	if _, err := run("PasswordRotation"); err != nil {
		t.Fatal(err)
	}
	if _, err := run("Database"); err != nil {
		t.Fatal(err)
	}
	get(t, userA)
	ready := meta.FindStatusCondition(userA.Status.Conditions, mariadbv1alpha1.ConditionTypeReady)
	if userA.Spec.PasswordSecretKeyRef.Key != keystone.DatabasePasswordCurrentKey || userA.Generation < 2 ||
		ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != 0 {
		t.Fatalf("User %s reads %q at generation %d, Ready %+v; want the new password under a Ready left from the previous spec",
			userA.Name, userA.Spec.PasswordSecretKeyRef.Key, userA.Generation, ready)
	}

	// mariadb-operator has not applied the new password: the check fails, is run again,
	// and the pods stay where they are.
	expectStep := func(name, message string) {
		t.Helper()
		res, err := run("PasswordRotation")
		c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionPasswordRotationReady)
		if err != nil || res.RequeueAfter == 0 || c == nil || c.Reason != keystone.ReasonPasswordRotationInProgress ||
			!strings.Contains(c.Message, message) {
			t.Fatalf("%s: %+v %v, PasswordRotationReady %+v; want InProgress with %q", name, res, err, c, message)
		}
		get(t, pw)
		if string(pw.Data[keystone.DatabaseActiveAccountKey]) != keystone.AccountB {
			t.Fatalf("%s: the pods were switched to account %s before the database accepted its new password", name,
				pw.Data[keystone.DatabaseActiveAccountKey])
		}
		if _, err := run("Config"); err != nil {
			t.Fatal(err)
		}
		if used, err := connection(ctx, k); err != nil || used != before {
			t.Fatalf("%s: the connection changed to account %q (err %v)", name, used.account, err)
		}
	}
	judge := func() {
		t.Helper()
		cred, j := checkCredential(t, k)
		if cred != (credential{accountA, next}) {
			t.Fatalf("the check connects as %q (new password %v), want %s with the new password", cred.account, cred.password == next, accountA)
		}
		if accepted[cred.account] == cred.password {
			need(t)(simulate.MarkJobComplete(ctx, env.Client, client.ObjectKeyFromObject(j)))
		} else {
			need(t)(simulate.MarkJobFailed(ctx, env.Client, client.ObjectKeyFromObject(j)))
		}
	}
	expectStep("stale Ready", "checks that the database accepts account "+accountA+" with the new password")
	judge()
	expectStep("refused", "the database refused account "+accountA+" with the new password")
	expectStep("checked again", "checks that the database accepts account "+accountA)

	// mariadb-operator runs ALTER USER (its Ready does not change); the next check passes.
	accepted[accountA] = next
	judge()
	res, err := run("PasswordRotation")
	c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionPasswordRotationReady)
	if err != nil || c == nil || !strings.Contains(c.Message, "the database accepts account "+accountA+" with the new password") {
		t.Fatalf("after a passing check: %+v %v, PasswordRotationReady %+v", res, err, c)
	}
	if _, err := run("Config"); err != nil {
		t.Fatal(err)
	}
	after, err := connection(ctx, k)
	if err != nil || after != (credential{accountA, next}) || accepted[after.account] != after.password {
		t.Fatalf("after the check the pods use %q (err %v), want account %s with the new password", after.account, err, accountA)
	}
	expectNoSecretIn(t, k, next, oldA)
}
