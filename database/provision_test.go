package database_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/credential"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

const passwordSecret = "identity-db-password"

// params builds the desired objects of one provisioning pass in ns.
func params(ns string, generate bool) database.ProvisionParams {
	return database.ProvisionParams{
		Database: desiredDatabase(ns), User: desiredUser(ns), Grant: desiredGrant(ns),
		GeneratePassword: generate,
	}
}

// provision runs one pass with freshly built parameters.
func provision(ctx context.Context, t testing.TB, c client.Client, owner client.Object, generate bool) (metav1.Condition, ctrl.Result, error) {
	t.Helper()
	return database.ReconcileProvision(ctx, c, env.Scheme, owner, params(owner.GetNamespace(), generate))
}

// settle runs a setup pass that must not fail; its outcome is not the test's subject.
func settle(ctx context.Context, t testing.TB, owner client.Object, generate bool) {
	t.Helper()
	if _, _, err := provision(ctx, t, env.Client, owner, generate); err != nil {
		t.Fatalf("setup pass: %v", err)
	}
}

// objectKey is the key ns/name.
func objectKey(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// TestReconcileProvisionReasons walks the flow through every state: each row sets up
// the cluster (running earlier passes where the objects must exist first) and checks
// the outcome of the next pass and what exists afterwards.
func TestReconcileProvisionReasons(t *testing.T) {
	notReady := ctrl.Result{RequeueAfter: database.PollInterval}
	tests := map[string]struct {
		generate bool
		setup    func(ctx context.Context, t *testing.T, ns string, owner client.Object)
		want     metav1.Condition
		result   ctrl.Result
		// absent are kinds that must not exist after the pass (nothing applied past the gate).
		absent []client.Object
	}{
		"MariaDB missing": {
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonMariaDBNotFound,
				Message: "MariaDB %s/mariadb not found"},
			result: notReady,
			absent: []client.Object{&mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}},
		},
		"MariaDB without status": {
			setup: func(ctx context.Context, t *testing.T, ns string, _ client.Object) { newMariaDB(t, ns) },
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonMariaDBNotReady,
				Message: "waiting for MariaDB %s/mariadb: no Ready condition yet"},
			result: notReady,
			absent: []client.Object{&mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}},
		},
		"MariaDB Ready False": {
			setup: func(ctx context.Context, t *testing.T, ns string, _ client.Object) {
				need(t)(simulate.MarkMariaDBNotReady(ctx, env.Client, newMariaDB(t, ns), "StatefulSetNotReady", "Not ready"))
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonMariaDBNotReady,
				Message: "waiting for MariaDB %s/mariadb: Ready=False (StatefulSetNotReady): Not ready"},
			result: notReady,
			absent: []client.Object{&mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}},
		},
		"Database not ready": {
			generate: true,
			setup: func(ctx context.Context, t *testing.T, ns string, _ client.Object) {
				need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonDatabaseNotReady,
				Message: "waiting for Database %s/identity: no Ready condition yet"},
			result: notReady,
			absent: []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: passwordSecret}},
				&mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}},
		},
		"Database Ready False": {
			setup: func(ctx context.Context, t *testing.T, ns string, owner client.Object) {
				need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
				settle(ctx, t, owner, false)
				need(t)(simulate.MarkDatabaseNotReady(ctx, env.Client, objectKey(ns, "identity"), "Failed", "Error 1044: access denied"))
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonDatabaseNotReady,
				Message: "waiting for Database %s/identity: Ready=False (Failed): Error 1044: access denied"},
			result: notReady,
			absent: []client.Object{&mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}},
		},
		"password Secret missing, not generated": {
			setup: func(ctx context.Context, t *testing.T, ns string, owner client.Object) {
				need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
				settle(ctx, t, owner, false)
				need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonPasswordSecretNotReady,
				Message: "waiting for password Secret %[1]s/identity-db-password of User %[1]s/identity"},
			result: notReady,
			absent: []client.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: passwordSecret}},
				&mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}},
		},
		"password Secret without the key": {
			generate: true,
			setup: func(ctx context.Context, t *testing.T, ns string, owner client.Object) {
				need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
				createSecret(t, ns, map[string][]byte{"other": []byte("x")})
				settle(ctx, t, owner, true)
				need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonPasswordSecretNotReady,
				Message: `password Secret %[1]s/identity-db-password of User %[1]s/identity has no value under key "password"`},
			result: notReady,
			absent: []client.Object{&mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}},
		},
		"User not ready": {
			generate: true,
			setup: func(ctx context.Context, t *testing.T, ns string, owner client.Object) {
				need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
				settle(ctx, t, owner, true)
				need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonUserNotReady,
				Message: "waiting for User %s/identity: no Ready condition yet"},
			result: notReady,
		},
		"User Ready False": {
			generate: true,
			setup: func(ctx context.Context, t *testing.T, ns string, owner client.Object) {
				need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
				settle(ctx, t, owner, true)
				need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
				settle(ctx, t, owner, true)
				need(t)(simulate.MarkUserNotReady(ctx, env.Client, objectKey(ns, "identity"), "Failed", "Error 1396"))
				need(t)(simulate.MarkGrantReady(ctx, env.Client, objectKey(ns, "identity")))
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonUserNotReady,
				Message: "waiting for User %s/identity: Ready=False (Failed): Error 1396"},
			result: notReady,
		},
		"Grant not ready": {
			generate: true,
			setup: func(ctx context.Context, t *testing.T, ns string, owner client.Object) {
				need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
				settle(ctx, t, owner, true)
				need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
				settle(ctx, t, owner, true)
				need(t)(simulate.MarkUserReady(ctx, env.Client, objectKey(ns, "identity")))
				need(t)(simulate.MarkGrantNotReady(ctx, env.Client, objectKey(ns, "identity"), "Failed", "Error 1133"))
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: database.ReasonGrantNotReady,
				Message: "waiting for Grant %s/identity: Ready=False (Failed): Error 1133"},
			result: notReady,
		},
		"provisioned": {
			generate: true,
			setup: func(ctx context.Context, t *testing.T, ns string, owner client.Object) {
				markAllReady(ctx, t, ns, owner)
			},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: database.ReasonDatabaseProvisioned,
				Message: "Database %[1]s/identity, User %[1]s/identity and Grant %[1]s/identity are ready on MariaDB %[1]s/mariadb"},
		},
		"provisioned with an existing password Secret": {
			setup: func(ctx context.Context, t *testing.T, ns string, owner client.Object) {
				createSecret(t, ns, map[string][]byte{"password": []byte("from-openbao")})
				markAllReady(ctx, t, ns, owner)
			},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: database.ReasonDatabaseProvisioned,
				Message: "Database %[1]s/identity, User %[1]s/identity and Grant %[1]s/identity are ready on MariaDB %[1]s/mariadb"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			if tc.setup != nil {
				tc.setup(ctx, t, ns, owner)
			}

			cond, res, err := provision(ctx, t, env.Client, owner, tc.generate)
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			want := tc.want
			want.Type = database.ConditionType
			want.Message = fmt.Sprintf(want.Message, ns)
			if diff := cmp.Diff(want, cond); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
			if res != tc.result {
				t.Errorf("result = %+v, want %+v", res, tc.result)
			}
			for _, obj := range tc.absent {
				name := obj.GetName()
				if name == "" {
					name = "identity"
				}
				if err := env.Client.Get(ctx, objectKey(ns, name), obj); !apierrors.IsNotFound(err) {
					t.Errorf("%T %s exists after the pass (err %v), want nothing applied past the gate", obj, name, err)
				}
			}
		})
	}
}

// markAllReady runs the passes of a fresh provisioning, marking each object ready once
// the flow has applied it.
func markAllReady(ctx context.Context, t *testing.T, ns string, owner client.Object) {
	t.Helper()
	need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
	settle(ctx, t, owner, true)
	need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
	settle(ctx, t, owner, true)
	need(t)(simulate.MarkUserReady(ctx, env.Client, objectKey(ns, "identity")))
	need(t)(simulate.MarkGrantReady(ctx, env.Client, objectKey(ns, "identity")))
}

// createSecret creates the password Secret with data, as an ExternalSecret would.
func createSecret(t testing.TB, ns string, data map[string][]byte) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: passwordSecret, Namespace: ns}, Data: data}
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

func getSecret(t testing.TB, ns string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), objectKey(ns, passwordSecret), s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestReconcileProvisionAppliesWhatTheUserNeeds checks what the flow writes: owner
// references, the User's password reference, the Grant filled from the User and the
// Database, and the generated Secret.
func TestReconcileProvisionAppliesWhatTheUserNeeds(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	markAllReady(ctx, t, ns, owner)

	p := params(ns, true)
	p.User.Spec.MariaDBRef = mariadbv1alpha1.MariaDBRef{}
	p.Grant.Spec.MariaDBRef = mariadbv1alpha1.MariaDBRef{}
	p.Grant.Spec.Username, p.Grant.Spec.Database = "", ""
	cond, res, err := database.ReconcileProvision(ctx, env.Client, env.Scheme, owner, p)
	if err != nil || cond.Reason != database.ReasonDatabaseProvisioned || !res.IsZero() {
		t.Fatalf("pass = (%+v, %+v, %v), want DatabaseProvisioned", cond, res, err)
	}
	grant, err := getGrant(ctx, objectKey(ns, "identity"))
	if err != nil {
		t.Fatal(err)
	}
	if grant.Spec.Username != "identity" || grant.Spec.Database != "identity" || grant.Spec.MariaDBRef.Name != "mariadb" {
		t.Errorf("Grant spec = %+v, want username, database and mariaDbRef filled in", grant.Spec)
	}
	user, err := getUser(ctx, objectKey(ns, "identity"))
	if err != nil {
		t.Fatal(err)
	}
	if user.Spec.MariaDBRef.Name != "mariadb" {
		t.Errorf("User mariaDbRef = %+v, want the Database's", user.Spec.MariaDBRef)
	}

	secret := getSecret(t, ns)
	if ref := metav1.GetControllerOf(secret); ref == nil || ref.UID != owner.UID {
		t.Errorf("Secret controller reference = %+v, want owner %s", ref, owner.UID)
	}
	if _, ok := secret.Labels[database.WatchLabel]; !ok {
		t.Errorf("Secret labels = %v, want %s", secret.Labels, database.WatchLabel)
	}
	if got := len(secret.Data["password"]); got != database.PasswordLength {
		t.Errorf("password length = %d, want %d", got, database.PasswordLength)
	}
	for _, b := range secret.Data["password"] {
		if !strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", rune(b)) {
			t.Fatalf("password has character %q outside [A-Za-z0-9]", b)
		}
	}
}

// TestReconcileProvisionConverged proves a pass over a provisioned database writes
// nothing: no object's resourceVersion moves and the Secret is only read.
func TestReconcileProvisionConverged(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	markAllReady(ctx, t, ns, owner)

	objs := []client.Object{&mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}}
	before := map[string]string{}
	for _, o := range objs {
		if err := env.Client.Get(ctx, objectKey(ns, "identity"), o); err != nil {
			t.Fatal(err)
		}
		before[fmt.Sprintf("%T", o)] = o.GetResourceVersion()
	}
	secretRV := getSecret(t, ns).ResourceVersion

	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := provision(ctx, t, c, owner, true); err != nil { // warm the REST mapper
		t.Fatal(err)
	}
	counter.Reset()
	cond, res, err := provision(ctx, t, c, owner, true)
	if err != nil || cond.Status != metav1.ConditionTrue || !res.IsZero() {
		t.Fatalf("pass = (%+v, %+v, %v), want True", cond, res, err)
	}
	for _, o := range objs {
		if err := env.Client.Get(ctx, objectKey(ns, "identity"), o); err != nil {
			t.Fatal(err)
		}
		if k := fmt.Sprintf("%T", o); o.GetResourceVersion() != before[k] {
			t.Errorf("%s resourceVersion %s -> %s on a converged pass", k, before[k], o.GetResourceVersion())
		}
	}
	if rv := getSecret(t, ns).ResourceVersion; rv != secretRV {
		t.Errorf("Secret resourceVersion %s -> %s on a converged pass", secretRV, rv)
	}
	// GET MariaDB, GET Secret; for each of Database, User and Grant the ownership read
	// of apply.EnsureObject (a GET, which a cached client serves from its informer) and
	// one apply (PATCH).
	if got, want := counter.Method("GET"), 5; got != want {
		t.Errorf("GET requests = %d, want %d", got, want)
	}
	if got, want := counter.Method("PATCH"), 3; got != want {
		t.Errorf("PATCH requests = %d, want %d", got, want)
	}
	if got := counter.Method("POST") + counter.Method("PUT") + counter.Method("DELETE"); got != 0 {
		t.Errorf("POST/PUT/DELETE requests = %d, want 0", got)
	}
}

// TestReconcilePasswordNeverRegenerated: the generated password survives later passes
// and a pass without generation. No pass writes it to a condition, an error or a log line.
func TestReconcilePasswordNeverRegenerated(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	var logs bytes.Buffer
	var mu sync.Mutex
	logger := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(&logs, prefix, args)
	}, funcr.Options{Verbosity: 10})
	ctx = logr.NewContext(ctx, logger)

	var seen []string
	record := func(cond metav1.Condition, _ ctrl.Result, err error) {
		seen = append(seen, cond.Message)
		if err != nil {
			seen = append(seen, err.Error())
		}
	}
	need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
	record(provision(ctx, t, env.Client, owner, true))
	need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
	record(provision(ctx, t, env.Client, owner, true))
	password := string(getSecret(t, ns).Data["password"])
	if password == "" {
		t.Fatal("no password generated")
	}
	need(t)(simulate.MarkUserReady(ctx, env.Client, objectKey(ns, "identity")))
	need(t)(simulate.MarkGrantReady(ctx, env.Client, objectKey(ns, "identity")))
	for range 3 {
		record(provision(ctx, t, env.Client, owner, true))
	}
	record(provision(ctx, t, env.Client, owner, false))

	if got := string(getSecret(t, ns).Data["password"]); got != password {
		t.Fatalf("password changed across passes")
	}
	for _, s := range append(seen, logs.String()) {
		if strings.Contains(s, password) {
			t.Fatalf("password leaked into %q", s)
		}
	}
}

func TestReconcileProvisionKeepsExistingSecret(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	createSecret(t, ns, map[string][]byte{"password": []byte("from-openbao")})
	markAllReady(ctx, t, ns, owner)
	s := getSecret(t, ns)
	if got := string(s.Data["password"]); got != "from-openbao" {
		t.Errorf("password = %q, want the existing value", got)
	}
	if metav1.GetControllerOf(s) != nil || len(s.Labels) != 0 {
		t.Errorf("existing Secret was written: owner %v labels %v", s.OwnerReferences, s.Labels)
	}
}

// TestReconcileProvisionSecretCreateRace: another writer creates the Secret between the
// flow's read and its create. The flow uses that Secret and does not overwrite it.
func TestReconcileProvisionSecretCreateRace(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
	settle(ctx, t, owner, true)
	need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))

	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	racing := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*corev1.Secret); ok {
				createSecret(t, ns, map[string][]byte{"password": []byte("theirs")})
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	cond, _, err := provision(ctx, t, racing, owner, true)
	if err != nil || cond.Reason != database.ReasonUserNotReady {
		t.Fatalf("pass = (%+v, %v), want UserNotReady", cond, err)
	}
	if got := string(getSecret(t, ns).Data["password"]); got != "theirs" {
		t.Errorf("password = %q, want the racing writer's", got)
	}
}

// TestReconcileProvisionInvalid: bad parameters are refused before any API call, with
// an error naming the object and field.
func TestReconcileProvisionInvalid(t *testing.T) {
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: "ns", UID: "uid-1"}}
	tests := map[string]struct {
		owner  client.Object
		mutate func(p *database.ProvisionParams)
		want   error
		text   string
	}{
		"nil owner":    {owner: (*corev1.ConfigMap)(nil), want: apply.ErrNilOwner},
		"nil Database": {mutate: func(p *database.ProvisionParams) { p.Database = nil }, want: database.ErrInvalidParams, text: "Database is nil"},
		"nil User":     {mutate: func(p *database.ProvisionParams) { p.User = nil }, want: database.ErrInvalidParams, text: "User is nil"},
		"nil Grant":    {mutate: func(p *database.ProvisionParams) { p.Grant = nil }, want: database.ErrInvalidParams, text: "Grant is nil"},
		"no server":    {mutate: func(p *database.ProvisionParams) { p.Database.Spec.MariaDBRef.Name = "" }, want: database.ErrInvalidParams, text: "Database ns/identity: spec.mariaDbRef.name is empty"},
		"external server": {
			mutate: func(p *database.ProvisionParams) { p.Database.Spec.MariaDBRef.Kind = "ExternalMariaDB" },
			want:   database.ErrInvalidParams, text: `Database ns/identity: spec.mariaDbRef.kind "ExternalMariaDB" is not supported`,
		},
		"User on another server": {
			mutate: func(p *database.ProvisionParams) { p.User.Spec.MariaDBRef.Name = "other" },
			want:   database.ErrInvalidParams, text: "User ns/identity: spec.mariaDbRef names MariaDB ns/other, Database ns/identity names ns/mariadb",
		},
		"Grant on another server namespace": {
			mutate: func(p *database.ProvisionParams) { p.Grant.Spec.MariaDBRef.Namespace = "db" },
			want:   database.ErrInvalidParams, text: "Grant ns/identity: spec.mariaDbRef names MariaDB db/mariadb",
		},
		"no password Secret": {
			mutate: func(p *database.ProvisionParams) { p.User.Spec.PasswordSecretKeyRef = nil },
			want:   database.ErrInvalidParams, text: "User ns/identity: spec.passwordSecretKeyRef.name is empty",
		},
		"no password key": {
			mutate: func(p *database.ProvisionParams) { p.User.Spec.PasswordSecretKeyRef.Key = "" },
			want:   database.ErrInvalidParams, text: "User ns/identity: spec.passwordSecretKeyRef.key is empty",
		},
		"invalid password key": {
			mutate: func(p *database.ProvisionParams) { p.User.Spec.PasswordSecretKeyRef.Key = "pass word" },
			want:   database.ErrInvalidParams, text: `User ns/identity: spec.passwordSecretKeyRef.key "pass word" is not a valid Secret key`,
		},
		"Restore without GeneratePassword": {
			mutate: func(p *database.ProvisionParams) {
				p.GeneratePassword = false
				p.Restore = credential.RestorerFunc(func(context.Context, client.Client, client.ObjectKey, string) (credential.Backup, error) {
					return credential.Backup{}, nil
				})
			},
			want: database.ErrInvalidParams, text: "Restore is set but GeneratePassword is not",
		},
		"Grant for another user": {
			mutate: func(p *database.ProvisionParams) { p.Grant.Spec.Username = "nova" },
			want:   database.ErrInvalidParams, text: `Grant ns/identity: spec.username is "nova", User ns/identity is "identity"`,
		},
		"Grant without privileges": {
			mutate: func(p *database.ProvisionParams) { p.Grant.Spec.Privileges = nil },
			want:   database.ErrInvalidParams, text: "Grant ns/identity: spec.privileges is empty",
		},
		"connection Secret without a name": {
			mutate: func(p *database.ProvisionParams) { p.Connection = &database.ConnectionSecretParams{} },
			want:   database.ErrInvalidParams, text: "connection Secret: Name is empty",
		},
		"connection certificate without its key": {
			mutate: func(p *database.ProvisionParams) {
				p.Connection = &database.ConnectionSecretParams{Name: "c", Connection: database.Connection{CAFile: "/ca", CertFile: "/crt"}}
			},
			want: database.ErrInvalidParams, text: "CertFile and KeyFile go together",
		},
		"connection to a database name the URL cannot carry": {
			mutate: func(p *database.ProvisionParams) {
				p.Database.Spec.Name = "app$db"
				p.Connection = &database.ConnectionSecretParams{Name: "c"}
			},
			want: database.ErrInvalidParams, text: `connection: Name "app$db"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			calls := 0
			c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(env.Scheme).Build(), interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					calls++
					return errors.New("unexpected call")
				},
				Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
					calls++
					return errors.New("unexpected call")
				},
			})
			o := tc.owner
			if o == nil {
				o = owner
			}
			p := database.ProvisionParams{Database: desiredDatabase(""), User: desiredUser(""), Grant: desiredGrant(""), GeneratePassword: true}
			if tc.mutate != nil {
				tc.mutate(&p)
			}
			cond, res, err := database.ReconcileProvision(context.Background(), c, env.Scheme, o, p)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.want, tc.text)
			}
			if cond != (metav1.Condition{}) || !res.IsZero() || calls != 0 {
				t.Errorf("cond %+v result %+v calls %d, want zero values and no API call", cond, res, calls)
			}
		})
	}
}

// TestReconcileProvisionAPIErrors injects API failures on a real API server at each
// request of the flow: the pass returns the zero condition, a zero result and an error
// that names the object and keeps the cause; nothing after the failed request is
// attempted (the writes the flow sent are recorded) and none of the objects the flow
// would write after it exists.
func TestReconcileProvisionAPIErrors(t *testing.T) {
	boom := apierrors.NewServiceUnavailable("etcd is down")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "k8s.mariadb.com", Resource: "things"}, "identity", errors.New("RBAC"))
	failGet := func(match func(client.Object) bool, err error) interceptor.Funcs {
		return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			if match(o) {
				return err
			}
			return c.Get(ctx, k, o, opts...)
		}}
	}
	failApply := func(kind string) interceptor.Funcs {
		return interceptor.Funcs{Apply: func(ctx context.Context, c client.WithWatch, ac runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if applyKind(ac) == kind {
				return forbidden
			}
			return c.Apply(ctx, ac, opts...)
		}}
	}
	failCreate := func(err func(o client.Object) error) interceptor.Funcs {
		return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			return err(o)
		}}
	}
	isMariaDB := func(o client.Object) bool { _, ok := o.(*mariadbv1alpha1.MariaDB); return ok }
	isSecret := func(o client.Object) bool { _, ok := o.(*corev1.Secret); return ok }
	secret := func() client.Object { return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: passwordSecret}} }
	user := func() client.Object { return &mariadbv1alpha1.User{} }
	grant := func() client.Object { return &mariadbv1alpha1.Grant{} }

	tests := map[string]struct {
		// databaseReady runs a pass without generation first and marks the Database
		// ready, so the flow gets past step 2.
		databaseReady bool
		funcs         interceptor.Funcs
		text          string
		is            func(error) bool
		// writes are the writes the failing pass sends, in order; the last one is the
		// failed one when a write fails.
		writes []string
		// absent are the objects the flow writes after the failed request.
		absent []client.Object
	}{
		"get MariaDB": {
			funcs: failGet(isMariaDB, boom), text: "get MariaDB %s/mariadb", is: apierrors.IsServiceUnavailable,
			absent: []client.Object{&mariadbv1alpha1.Database{}, secret(), user(), grant()},
		},
		"apply Database": {
			funcs: failApply("Database"), text: "apply Database %s/identity", is: apierrors.IsForbidden,
			writes: []string{"apply Database"},
			absent: []client.Object{secret(), user(), grant()},
		},
		"get password Secret": {
			databaseReady: true, funcs: failGet(isSecret, forbidden),
			text: "password Secret of User %[1]s/identity: get Secret %[1]s/identity-db-password", is: apierrors.IsForbidden,
			writes: []string{"apply Database"},
			absent: []client.Object{secret(), user(), grant()},
		},
		"create password Secret": {
			databaseReady: true, funcs: failCreate(func(client.Object) error { return forbidden }),
			text: "password Secret of User %[1]s/identity: create Secret %[1]s/identity-db-password", is: apierrors.IsForbidden,
			writes: []string{"apply Database", "create Secret"},
			absent: []client.Object{user(), grant()},
		},
		"Secret vanishes after AlreadyExists": {
			databaseReady: true,
			funcs: failCreate(func(o client.Object) error {
				return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, o.GetName())
			}),
			text: "password Secret of User %[1]s/identity: get Secret %[1]s/identity-db-password", is: apierrors.IsNotFound,
			writes: []string{"apply Database", "create Secret"},
			absent: []client.Object{user(), grant()},
		},
		"apply User": {
			databaseReady: true, funcs: failApply("User"), text: "apply User %s/identity", is: apierrors.IsForbidden,
			writes: []string{"apply Database", "create Secret", "apply User"},
			absent: []client.Object{grant()},
		},
		"apply Grant": {
			// The last write of the flow: the recorded writes show nothing follows it.
			databaseReady: true, funcs: failApply("Grant"), text: "apply Grant %s/identity", is: apierrors.IsForbidden,
			writes: []string{"apply Database", "create Secret", "apply User", "apply Grant"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			need(t)(simulate.MarkMariaDBReady(ctx, env.Client, newMariaDB(t, ns)))
			if tc.databaseReady {
				settle(ctx, t, owner, false)
				need(t)(simulate.MarkDatabaseReady(ctx, env.Client, objectKey(ns, "identity")))
			}
			base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			// The recorder wraps the failing client, so it sees the failed write too.
			c, writes := recordWrites(interceptor.NewClient(base, tc.funcs))
			cond, res, err := provision(ctx, t, c, owner, true)
			text := fmt.Sprintf(tc.text, ns)
			if err == nil || !tc.is(err) || !strings.Contains(err.Error(), text) {
				t.Fatalf("err = %v, want one containing %q", err, text)
			}
			if cond != (metav1.Condition{}) || !res.IsZero() {
				t.Errorf("cond %+v result %+v, want zero values with an error", cond, res)
			}
			if diff := cmp.Diff(tc.writes, *writes); diff != "" {
				t.Errorf("writes of the failing pass (-want +got):\n%s", diff)
			}
			for _, obj := range tc.absent {
				name := obj.GetName()
				if name == "" {
					name = "identity"
				}
				if err := env.Client.Get(ctx, objectKey(ns, name), obj); !apierrors.IsNotFound(err) {
					t.Errorf("%T %s exists after the failed request (err %v), want nothing written after it", obj, name, err)
				}
			}
		})
	}
}

// applyKind is the kind of an apply configuration.
func applyKind(ac runtime.ApplyConfiguration) string {
	if k, ok := ac.(interface{ GetKind() string }); ok {
		return k.GetKind()
	}
	return ""
}

// recordWrites wraps c so that every write sent through it, failed or not, is recorded
// as "<verb> <Kind>" (a status write as "<verb> <Kind>/<subresource>").
func recordWrites(c client.WithWatch) (client.WithWatch, *[]string) {
	var mu sync.Mutex
	var writes []string
	record := func(verb, kind string) {
		mu.Lock()
		defer mu.Unlock()
		writes = append(writes, verb+" "+kind)
	}
	kindOf := func(o client.Object) string { return reflect.TypeOf(o).Elem().Name() }
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
			record("create", kindOf(o))
			return c.Create(ctx, o, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.UpdateOption) error {
			record("update", kindOf(o))
			return c.Update(ctx, o, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, o client.Object, p client.Patch, opts ...client.PatchOption) error {
			record("patch", kindOf(o))
			return c.Patch(ctx, o, p, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, ac runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			record("apply", applyKind(ac))
			return c.Apply(ctx, ac, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteOption) error {
			record("delete", kindOf(o))
			return c.Delete(ctx, o, opts...)
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.DeleteAllOfOption) error {
			record("deleteAllOf", kindOf(o))
			return c.DeleteAllOf(ctx, o, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, o client.Object, opts ...client.SubResourceUpdateOption) error {
			record("update", kindOf(o)+"/"+sub)
			return c.SubResource(sub).Update(ctx, o, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, o client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			record("patch", kindOf(o)+"/"+sub)
			return c.SubResource(sub).Patch(ctx, o, p, opts...)
		},
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, ac runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			record("apply", applyKind(ac)+"/"+sub)
			return c.SubResource(sub).Apply(ctx, ac, opts...)
		},
	}), &writes
}
