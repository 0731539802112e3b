package keystone_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// stepCase is one run of a step and what it must leave: the condition's status,
// reason and a part of its message, and whether the step asked for a requeue or ended
// the pass with a terminal error.
type stepCase struct {
	name     string
	prepare  func(t *testing.T, k *v1alpha1.Keystone)
	step     string
	condType string
	status   metav1.ConditionStatus
	reason   string
	message  string
	requeue  bool
	terminal bool
}

// runCases runs the cases in order on k through rec, each after its prepare.
func runCases(t *testing.T, rec *keystone.Reconciler, target *multicluster.Target, k *v1alpha1.Keystone, cases []stepCase) {
	t.Helper()
	for _, tc := range cases {
		if tc.prepare != nil {
			tc.prepare(t, k)
		}
		res, err := keystone.RunStep(context.Background(), rec, tc.step, target, k, "")
		if tc.terminal {
			if !errors.Is(err, crreconcile.TerminalError(nil)) {
				t.Fatalf("%s: err = %v, want a terminal error", tc.name, err)
			}
		} else if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !res.IsZero() && err != nil {
			t.Fatalf("%s: result %+v together with error %v", tc.name, res, err)
		}
		if got := res.RequeueAfter > 0; got != tc.requeue {
			t.Fatalf("%s: result %+v, want requeue %v", tc.name, res, tc.requeue)
		}
		c := meta.FindStatusCondition(k.Status.Conditions, tc.condType)
		if c == nil || c.Status != tc.status || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
			t.Fatalf("%s: %s = %+v, want %s/%s with %q", tc.name, tc.condType, c, tc.status, tc.reason, tc.message)
		}
	}
}

// runConfig runs the Config step on k; when it waits for the restore of the database
// password, it plays ESO finding no backup (a first install) and runs it again.
func runConfig(t *testing.T, rec *keystone.Reconciler, target *multicluster.Target, k *v1alpha1.Keystone,
	domainsSecret string, domainFiles ...string) (ctrl.Result, error) {
	t.Helper()
	ctx := context.Background()
	res, err := keystone.RunStep(ctx, rec, "Config", target, k, domainsSecret, domainFiles...)
	if c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionConfigReady); err != nil || c == nil ||
		c.Reason != secrets.ReasonRestorePending {
		return res, err
	}
	need(t)(simulate.MarkExternalSecretEmpty(ctx, env.Client, client.ObjectKey{Namespace: k.Namespace, Name: keystone.PasswordRestoreName(k)}))
	return keystone.RunStep(ctx, rec, "Config", target, k, domainsSecret, domainFiles...)
}

// need fails the test on a non-nil error of a simulator.
func need(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// The Secrets step: the store gate, then the admin password the ExternalSecret syncs.
func TestReasonsSecrets(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := newKeystone(ns, "keystone")
	k.Spec.SecretStoreRef = &commonv1.SecretStoreRefSpec{Kind: commonv1.SecretStoreKind, Name: "openbao"}
	k = createKeystone(t, k)
	esKey := client.ObjectKey{Namespace: ns, Name: names.AdminPasswordSecretName(k)}
	runCases(t, rec, stepTarget(env.Client), k, []stepCase{
		{name: "no store", step: "Secrets", condType: keystone.ConditionSecretsReady, status: metav1.ConditionFalse,
			reason: secrets.ReasonSecretStoreNotReady, message: `SecretStore "openbao" is not ready`, requeue: true},
		{name: "store ready, not synced", step: "Secrets", condType: keystone.ConditionSecretsReady,
			prepare: func(t *testing.T, k *v1alpha1.Keystone) {
				store := &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Name: "openbao", Namespace: ns},
					Spec: esov1.SecretStoreSpec{Provider: &apiextensionsv1.JSON{Raw: []byte(`{"vault":{"server":"http://openbao:8200"}}`)}}}
				if err := env.Client.Create(ctx, store); err != nil {
					t.Fatal(err)
				}
				need(t)(simulate.MarkSecretStoreReady(ctx, env.Client, client.ObjectKeyFromObject(store)))
			},
			status: metav1.ConditionFalse, reason: keystone.ReasonWaitingForAdminPassword,
			message: `to sync remote key "openstack/keystone/admin"`, requeue: true},
		{name: "synced without the key", step: "Secrets", condType: keystone.ConditionSecretsReady,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(simulate.MarkExternalSecretSynced(ctx, env.Client, esKey, map[string][]byte{"other": []byte("x")}))
			},
			status: metav1.ConditionFalse, reason: keystone.ReasonWaitingForAdminPassword, message: `holds no "password"`, requeue: true},
		{name: "synced", step: "Secrets", condType: keystone.ConditionSecretsReady,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(simulate.MarkExternalSecretSynced(ctx, env.Client, esKey,
					map[string][]byte{names.AdminPasswordDataKey: []byte("s3cret")}))
			},
			status: metav1.ConditionTrue, reason: keystone.ReasonSecretsAvailable, message: "admin password synced into Secret " + esKey.String()},
	})
	es := &esov1.ExternalSecret{}
	if err := env.Client.Get(ctx, esKey, es); err != nil {
		t.Fatal(err)
	}
	if es.Spec.Target.Template.Metadata.Labels["app.kubernetes.io/managed-by"] != keystone.FieldManager {
		t.Errorf("the synced Secret is not labelled for the operator's cache: %+v", es.Spec.Target.Template)
	}

	scoped := defaultOptions()
	scoped.NamespaceScoped = true
	k2 := createKeystone(t, newKeystone(ns, "scoped"))
	runCases(t, newStepReconciler(t, scoped), stepTarget(env.Client), k2, []stepCase{
		{name: "namespace-scoped", step: "Secrets", condType: keystone.ConditionSecretsReady, status: metav1.ConditionFalse,
			reason: "ClusterSecretStoreUnsupported", message: "cannot be read by a namespace-scoped operator", requeue: true},
	})
}

// A failed call of the Secrets step is SecretsReady False SecretsError with the error,
// and the error alone ends the step: the store read as much as the apply of the
// ExternalSecret (secrets.Sync).
func TestReasonsSecretsError(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	storeReady(t)
	tests := map[string]struct {
		reason string
		verb   faults.Verb
		nth    int
		want   string
	}{
		"store read fails": {
			reason: "the store gate cannot read the ClusterSecretStore",
			verb:   faults.VerbGet, nth: 1, want: "ClusterSecretStore",
		},
		"create fails": {
			reason: "the ExternalSecret of the admin password cannot be created",
			verb:   faults.VerbCreate, nth: 1, want: "ExternalSecret",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			k := createKeystone(t, newKeystone(ns, strings.ReplaceAll(name, " ", "-")))
			inj := faults.NewInjector()
			inj.Arm(tt.verb, tt.nth, faults.Internal)
			res, err := keystone.RunStep(ctx, rec, "Secrets", stepTarget(inj.Client(env.Client)), k, "")
			if !inj.Fired() || !errors.Is(err, faults.ErrInjected) || !res.IsZero() {
				t.Fatalf("%s: result %+v, err %v; want the injected error alone", tt.reason, res, err)
			}
			c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionSecretsReady)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != keystone.ReasonSecretsError ||
				!strings.Contains(c.Message, tt.want) {
				t.Errorf("%s: SecretsReady = %+v, want False/%s naming the %s", tt.reason, c, keystone.ReasonSecretsError, tt.want)
			}
		})
	}
}

// A Keystone whose target cluster is not registered reports TargetClusterUnavailable on
// SecretsReady and has nothing written for it.
func TestReasonTargetClusterUnavailable(t *testing.T) {
	ns := env.Namespace(t)
	startOperator(t, ns, operatorOptions{})
	k := newKeystone(ns, "remote")
	k.Spec.TargetClusterRef = &commonv1.TargetClusterRefSpec{Name: "nowhere"}
	k = createKeystone(t, k)
	testenv.ExpectCondition(t, env.Client, k, keystone.ConditionSecretsReady, metav1.ConditionFalse)
	get(t, k)
	if c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionSecretsReady); c.Reason != multicluster.TargetClusterUnavailable {
		t.Fatalf("SecretsReady = %+v", c)
	}
	es := &esov1.ExternalSecretList{}
	if err := env.Client.List(context.Background(), es, client.InNamespace(ns)); err != nil || len(es.Items) != 0 {
		t.Fatalf("ExternalSecrets written for an unavailable target: %d, %v", len(es.Items), err)
	}
}

// The DatabaseTLS step: the client certificate while it is wanted, its removal after,
// and a Certificate of someone else's left alone. With TLS the connection verifies the
// server and presents the client certificate, which the account requires.
func TestReasonsDatabaseTLS(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := newKeystone(ns, "keystone")
	k.Spec.Database.TLS = &v1alpha1.DatabaseTLSSpec{IssuerRef: v1alpha1.IssuerRef{Name: "internal-ca", Kind: "ClusterIssuer"}}
	k = createKeystone(t, k)
	certKey := client.ObjectKey{Namespace: ns, Name: keystone.DatabaseCertificateName(k)}
	target := stepTarget(env.Client)
	runCases(t, rec, target, k, []stepCase{
		{name: "issuing", step: "DatabaseTLS", condType: keystone.ConditionDatabaseTLSReady, status: metav1.ConditionFalse,
			reason: keystone.ReasonWaitingForCertificate, message: "Certificate " + certKey.String(), requeue: true},
		{name: "issued", step: "DatabaseTLS", condType: keystone.ConditionDatabaseTLSReady,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(simulate.MarkCertificateReady(ctx, env.Client, certKey))
			},
			status: metav1.ConditionTrue, reason: keystone.ReasonCertificateReady, message: "issued into Secret keystone-db-client-tls"},
	})
	cert := &certmanagerv1.Certificate{}
	if err := env.Client.Get(ctx, certKey, cert); err != nil {
		t.Fatal(err)
	}
	if cert.Spec.CommonName != "keystone" || cert.Spec.IssuerRef.Kind != "ClusterIssuer" {
		t.Errorf("Certificate spec = %+v", cert.Spec)
	}
	if _, err := runConfig(t, rec, target, k, ""); err != nil {
		t.Fatal(err)
	}
	conn := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.ConnectionSecretName(k)}, conn); err != nil {
		t.Fatal(err)
	}
	url := string(conn.Data[database.ConnectionDataKey])
	for _, part := range []string{"@mariadb." + ns + ".svc:3306/keystone?ssl_ca=", "&ssl_cert=%2Fetc%2Fkeystone%2Fdb-tls%2Ftls.crt", "&ssl_key=%2Fetc%2Fkeystone%2Fdb-tls%2Ftls.key"} {
		if !strings.Contains(url, part) {
			t.Errorf("connection URL lacks %q", part)
		}
	}

	k.Spec.Database.TLS = nil
	runCases(t, rec, target, k, []stepCase{
		{name: "no longer wanted", step: "DatabaseTLS", condType: keystone.ConditionDatabaseTLSReady, status: metav1.ConditionTrue,
			reason: keystone.ReasonTLSNotRequired, message: "does not use TLS"},
	})
	if err := env.Client.Get(ctx, certKey, &certmanagerv1.Certificate{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Keystone's Certificate is left after TLS was turned off: %v", err)
	}

	// Someone else's Certificate of that name stays.
	k2 := createKeystone(t, newKeystone(ns, "other"))
	foreign := &certmanagerv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Name: keystone.DatabaseCertificateName(k2), Namespace: ns},
		Spec:       certmanagerv1.CertificateSpec{CommonName: "x", SecretName: "x", IssuerRef: cmmeta.IssuerReference{Name: "someone"}},
	}
	if err := env.Client.Create(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	runCases(t, rec, target, k2, []stepCase{
		{name: "foreign Certificate", step: "DatabaseTLS", condType: keystone.ConditionDatabaseTLSReady, status: metav1.ConditionTrue,
			reason: keystone.ReasonTLSNotRequired},
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), &certmanagerv1.Certificate{}); err != nil {
		t.Fatalf("someone else's Certificate: %v", err)
	}
}

// The Config step: the policy overrides must exist, parse and render; settings that
// cannot be rendered end the pass.
func TestReasonsConfig(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := newKeystone(ns, "keystone")
	k.Spec.Policy = &v1alpha1.PolicySpec{ConfigMapRef: v1alpha1.ConfigMapKeyRef{Name: "overrides", Key: "rules.yaml"}}
	k = createKeystone(t, k)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "overrides", Namespace: ns}}
	writeCM := func(data map[string]string) func(t *testing.T, _ *v1alpha1.Keystone) {
		return func(t *testing.T, _ *v1alpha1.Keystone) {
			cm.Data = data
			err := env.Client.Update(ctx, cm)
			if apierrors.IsNotFound(err) || cm.ResourceVersion == "" {
				err = env.Client.Create(ctx, cm)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	restore := client.ObjectKey{Namespace: ns, Name: keystone.PasswordRestoreName(k)}
	runCases(t, rec, stepTarget(env.Client), k, []stepCase{
		{name: "restore pending", step: "Config", condType: keystone.ConditionConfigReady, status: metav1.ConditionFalse,
			reason: secrets.ReasonRestorePending, message: "restore Secret " + restore.String() + " from the secret backend", requeue: true},
		{name: "no ConfigMap", step: "Config", prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
			need(t)(simulate.MarkExternalSecretEmpty(ctx, env.Client, restore))
		}, condType: keystone.ConditionConfigReady, status: metav1.ConditionFalse,
			reason: keystone.ReasonPolicyNotFound, message: "policy ConfigMap " + ns + "/overrides does not exist", requeue: true},
		{name: "no key", step: "Config", condType: keystone.ConditionConfigReady, prepare: writeCM(map[string]string{"policy.yaml": "{}"}),
			status: metav1.ConditionFalse, reason: keystone.ReasonPolicyNotFound, message: `has no key "rules.yaml"`, requeue: true},
		{name: "not a map of strings", step: "Config", condType: keystone.ConditionConfigReady,
			prepare: writeCM(map[string]string{"rules.yaml": "identity:get_user: [1, 2]"}),
			status:  metav1.ConditionFalse, reason: keystone.ReasonConfigError, message: `(key "rules.yaml")`, terminal: true},
		{name: "rendered", step: "Config", condType: keystone.ConditionConfigReady,
			prepare: writeCM(map[string]string{"rules.yaml": `identity:get_user: "rule:admin_required"`}),
			status:  metav1.ConditionTrue, reason: keystone.ReasonConfigRendered, message: "keystone.conf rendered into ConfigMap keystone-config-"},
		{name: "extraConfig that oslo.config would merge", step: "Config", condType: keystone.ConditionConfigReady,
			prepare: func(_ *testing.T, k *v1alpha1.Keystone) {
				k.Spec.ExtraConfig = map[string]map[string]string{"Token": {"expiration": "60"}}
			},
			status: metav1.ConditionFalse, reason: keystone.ReasonConfigError, message: "write it in lower case", terminal: true},
	})
	rendered := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: k.Status.ConfigMap}, rendered); err != nil {
		t.Fatal(err)
	}
	if rendered.Data[keystone.PolicyFile] != `"identity:get_user": "rule:admin_required"`+"\n" ||
		!strings.Contains(rendered.Data[keystone.ConfigFile], "policy_file = /etc/keystone/policy.yaml") {
		t.Errorf("ConfigMap data = %q", rendered.Data)
	}
	if strings.Contains(rendered.Data[keystone.ConfigFile], "connection") {
		t.Errorf("keystone.conf holds the database connection:\n%s", rendered.Data[keystone.ConfigFile])
	}
	pw := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.DatabasePasswordSecretName(k)}, pw); err != nil {
		t.Fatal(err)
	}
	if pw.Labels[database.WatchLabel] != "true" || len(pw.Data[names.DatabasePasswordDataKey]) != 32 {
		t.Errorf("database password Secret: labels %v, %d bytes", pw.Labels, len(pw.Data[names.DatabasePasswordDataKey]))
	}
}

// The Database step: every provisioning reason of package database in the order a
// fresh install meets them, db-sync once per image, and a failed db-sync that stops the
// step until the image changes.
func TestReasonsDatabase(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(simulatedJobs{env.Client})
	key := client.ObjectKey{Namespace: ns, Name: k.Name}
	jobKey := client.ObjectKey{Namespace: ns, Name: keystone.DBSyncJobName(k)}
	db := keystone.ConditionDatabaseReady
	var failedUID string
	runCases(t, rec, target, k, []stepCase{
		{name: "no MariaDB", step: "Database", condType: db, status: metav1.ConditionFalse, reason: database.ReasonMariaDBNotFound, requeue: true},
		{name: "MariaDB not ready", step: "Database", condType: db,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				if err := env.Client.Create(ctx, &mariadbv1alpha1.MariaDB{ObjectMeta: metav1.ObjectMeta{Name: "mariadb", Namespace: ns}}); err != nil {
					t.Fatal(err)
				}
				need(t)(simulate.MarkMariaDBNotReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "mariadb"}, "Provisioning", "starting"))
			},
			status: metav1.ConditionFalse, reason: database.ReasonMariaDBNotReady, requeue: true},
		{name: "Database not ready", step: "Database", condType: db,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(simulate.MarkMariaDBReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "mariadb"}))
			},
			status: metav1.ConditionFalse, reason: database.ReasonDatabaseNotReady, requeue: true},
		{name: "no password Secret yet", step: "Database", condType: db,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) { need(t)(simulate.MarkDatabaseReady(ctx, env.Client, key)) },
			status:  metav1.ConditionFalse, reason: database.ReasonPasswordSecretNotReady, requeue: true},
		{name: "User not ready", step: "Database", condType: db,
			prepare: func(t *testing.T, k *v1alpha1.Keystone) {
				if _, err := runConfig(t, rec, target, k, ""); err != nil {
					t.Fatal(err)
				}
			},
			status: metav1.ConditionFalse, reason: database.ReasonUserNotReady, requeue: true},
		{name: "Grant not ready", step: "Database", condType: db,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) { need(t)(simulate.MarkUserReady(ctx, env.Client, key)) },
			status:  metav1.ConditionFalse, reason: database.ReasonGrantNotReady, requeue: true},
		{name: "db-sync started", step: "Database", condType: db,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) { need(t)(simulate.MarkGrantReady(ctx, env.Client, key)) },
			status:  metav1.ConditionFalse, reason: database.ReasonDBSyncInProgress, requeue: true},
		{name: "db-sync failed", step: "Database", condType: db,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				j, err := simulate.MarkJobFailed(ctx, env.Client, jobKey)
				if err != nil {
					t.Fatal(err)
				}
				failedUID = string(j.UID)
			},
			status: metav1.ConditionFalse, reason: database.ReasonDBSyncFailed, terminal: true},
		{name: "db-sync failed, same image", step: "Database", condType: db,
			status: metav1.ConditionFalse, reason: database.ReasonDBSyncFailed, terminal: true},
	})
	if uid := string(mustJobUID(t, ns, jobKey.Name)); uid != failedUID || k.Status.SyncedImage != "" {
		t.Fatalf("the failed db-sync was re-run for the same image (uid %s, was %s) or syncedImage %q set", uid, failedUID, k.Status.SyncedImage)
	}
	k.Spec.Image = "registry.example/keystone:fixed"
	runCases(t, rec, target, k, []stepCase{
		{name: "new image", step: "Database", condType: db, status: metav1.ConditionFalse, reason: database.ReasonDBSyncInProgress, requeue: true},
		{name: "synced", step: "Database", condType: db,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) { need(t)(simulate.MarkJobComplete(ctx, env.Client, jobKey)) },
			status:  metav1.ConditionTrue, reason: database.ReasonDatabaseSynced},
	})
	if uid := string(mustJobUID(t, ns, jobKey.Name)); uid == failedUID || k.Status.SyncedImage != k.Spec.Image {
		t.Fatalf("new image: uid %s (failed one %s), syncedImage %q", uid, failedUID, k.Status.SyncedImage)
	}
	j := &batchv1.Job{}
	if err := env.Client.Get(ctx, jobKey, j); err != nil {
		t.Fatal(err)
	}
	if c := j.Spec.Template.Spec.Containers[0]; strings.Join(c.Command, " ") != "keystone-manage db_sync" ||
		c.Env[0].ValueFrom.SecretKeyRef.Name != names.ConnectionSecretName(k) {
		t.Errorf("db-sync container = %+v", c)
	}
}

// The PolicyValidation step: nothing to check without overrides; a rule the Go check
// rejects is named; otherwise the validator Job decides, and runs again for new
// overrides.
func TestReasonsPolicyValidation(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(simulatedJobs{env.Client})
	jobKey := client.ObjectKey{Namespace: ns, Name: keystone.PolicyJobName(k)}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "overrides", Namespace: ns},
		Data: map[string]string{"policy.yaml": `identity:get_user: "rule:no_such_rule"`}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	rules := func(doc string) func(t *testing.T, k *v1alpha1.Keystone) {
		return func(t *testing.T, k *v1alpha1.Keystone) {
			k.Spec.Policy = &v1alpha1.PolicySpec{ConfigMapRef: v1alpha1.ConfigMapKeyRef{Name: "overrides"}}
			if doc != "" {
				cm.Data = map[string]string{"policy.yaml": doc}
				if err := env.Client.Update(ctx, cm); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := runConfig(t, rec, target, k, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	pv := keystone.ConditionPolicyValid
	runCases(t, rec, target, k, []stepCase{
		{name: "no overrides", step: "PolicyValidation", condType: pv, status: metav1.ConditionTrue, reason: keystone.ReasonPolicyNotRequired},
		{name: "unknown rule", step: "PolicyValidation", condType: pv, prepare: rules(""),
			status: metav1.ConditionFalse, reason: keystone.ReasonPolicyInvalid, message: "policy[identity:get_user]", terminal: true},
		{name: "validator runs", step: "PolicyValidation", condType: pv, prepare: rules(`identity:get_user: "rule:admin_required or role:reader"`),
			status: metav1.ConditionFalse, reason: keystone.ReasonPolicyValidationInProgress, message: "Job " + jobKey.String(), requeue: true},
		{name: "validator rejects", step: "PolicyValidation", condType: pv,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) { need(t)(simulate.MarkJobFailed(ctx, env.Client, jobKey)) },
			status:  metav1.ConditionFalse, reason: keystone.ReasonPolicyInvalid, message: "oslopolicy-validator rejected", terminal: true},
		{name: "new overrides run it again", step: "PolicyValidation", condType: pv, prepare: rules(`identity:get_user: "role:reader"`),
			status: metav1.ConditionFalse, reason: keystone.ReasonPolicyValidationInProgress, requeue: true},
		{name: "validated", step: "PolicyValidation", condType: pv,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) { need(t)(simulate.MarkJobComplete(ctx, env.Client, jobKey)) },
			status:  metav1.ConditionTrue, reason: keystone.ReasonPolicyValidated, message: "1 policy override(s) validated"},
		{name: "overrides removed", step: "PolicyValidation", condType: pv,
			prepare: func(_ *testing.T, k *v1alpha1.Keystone) { k.Spec.Policy = nil },
			status:  metav1.ConditionTrue, reason: keystone.ReasonPolicyNotRequired},
	})
	if err := env.Client.Get(ctx, jobKey, &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("validation Job left after the overrides were removed: %v", err)
	}
}

// The Bootstrap step runs the Job once per admin password: not again for the same
// password, also not after a failure, and again for a new one. The password reaches the
// Job only through its Secret.
func TestReasonsBootstrap(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(simulatedJobs{env.Client})
	jobKey := client.ObjectKey{Namespace: ns, Name: keystone.BootstrapJobName(k)}
	admin := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: names.AdminPasswordSecretName(k), Namespace: ns},
		Data: map[string][]byte{names.AdminPasswordDataKey: []byte("admin-one")}}
	if err := env.Client.Create(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if _, err := runConfig(t, rec, target, k, ""); err != nil {
		t.Fatal(err)
	}
	var uid string
	remember := func(t *testing.T, _ *v1alpha1.Keystone) { uid = string(mustJobUID(t, ns, jobKey.Name)) }
	b := keystone.ConditionBootstrapReady
	runCases(t, rec, target, k, []stepCase{
		{name: "started", step: "Bootstrap", condType: b, status: metav1.ConditionFalse, reason: keystone.ReasonBootstrapInProgress, requeue: true},
		{name: "failed", step: "Bootstrap", condType: b,
			prepare: func(t *testing.T, k *v1alpha1.Keystone) {
				remember(t, k)
				need(t)(simulate.MarkJobFailed(ctx, env.Client, jobKey))
			},
			status: metav1.ConditionFalse, reason: keystone.ReasonBootstrapFailed, message: "runs again when the admin password changes", terminal: true},
		{name: "failed, same password, new image", step: "Bootstrap", condType: b,
			prepare: func(_ *testing.T, k *v1alpha1.Keystone) { k.Spec.Image = "registry.example/keystone:2025.2" },
			status:  metav1.ConditionFalse, reason: keystone.ReasonBootstrapFailed, terminal: true},
	})
	if got := string(mustJobUID(t, ns, jobKey.Name)); got != uid {
		t.Fatalf("bootstrap re-ran without a new password")
	}
	runCases(t, rec, target, k, []stepCase{
		{name: "new password", step: "Bootstrap", condType: b,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				admin.Data[names.AdminPasswordDataKey] = []byte("admin-two")
				if err := env.Client.Update(ctx, admin); err != nil {
					t.Fatal(err)
				}
			},
			status: metav1.ConditionFalse, reason: keystone.ReasonBootstrapInProgress, requeue: true},
		{name: "complete", step: "Bootstrap", condType: b,
			prepare: func(t *testing.T, k *v1alpha1.Keystone) {
				if got := string(mustJobUID(t, ns, jobKey.Name)); got == uid {
					t.Fatal("bootstrap did not re-run for a new password")
				}
				remember(t, k)
				need(t)(simulate.MarkJobComplete(ctx, env.Client, jobKey))
			},
			status: metav1.ConditionTrue, reason: keystone.ReasonBootstrapComplete, message: `bootstrapped admin user "admin"`},
		{name: "complete, again", step: "Bootstrap", condType: b, status: metav1.ConditionTrue, reason: keystone.ReasonBootstrapComplete},
	})
	if got := string(mustJobUID(t, ns, jobKey.Name)); got != uid {
		t.Fatalf("a completed bootstrap re-ran for the same password")
	}
	j := &batchv1.Job{}
	if err := env.Client.Get(ctx, jobKey, j); err != nil {
		t.Fatal(err)
	}
	var env0 *corev1.EnvVar
	for i, e := range j.Spec.Template.Spec.Containers[0].Env {
		if e.Name == keystone.BootstrapPasswordEnv {
			env0 = &j.Spec.Template.Spec.Containers[0].Env[i]
		}
	}
	if env0 == nil || env0.Value != "" || env0.ValueFrom.SecretKeyRef.Name != admin.Name {
		t.Errorf("%s = %+v, want it from Secret %s", keystone.BootstrapPasswordEnv, env0, admin.Name)
	}
	expectNoSecretIn(t, k, "admin-one", "admin-two")
	keySecret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: keystone.BootstrapKeySecretName(k)}, keySecret); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(keySecret, k) || len(keySecret.Data[keystone.BootstrapKeyDataKey]) == 0 {
		t.Errorf("bootstrap key Secret: owners %v, %d bytes", keySecret.OwnerReferences, len(keySecret.Data[keystone.BootstrapKeyDataKey]))
	}
}

// The HTTPRoute, HPA and TrustFlush rows, with and without what they make.
func TestReasonsExposure(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := createKeystone(t, newKeystone(ns, "keystone"))
	key := client.ObjectKey{Namespace: ns, Name: k.Name}
	if _, err := runConfig(t, rec, stepTarget(env.Client), k, ""); err != nil {
		t.Fatal(err)
	}
	runCases(t, rec, stepTarget(env.Client), k, []stepCase{
		{name: "no route", step: "HTTPRoute", condType: keystone.ConditionHTTPRouteReady, status: metav1.ConditionTrue, reason: "HTTPRouteNotRequired"},
		{name: "route pending", step: "HTTPRoute", condType: keystone.ConditionHTTPRouteReady,
			prepare: func(_ *testing.T, k *v1alpha1.Keystone) {
				k.Spec.Gateway = gatewaySpec()
			},
			status: metav1.ConditionFalse, reason: "HTTPRouteNotAccepted", requeue: true},
		{name: "route accepted", step: "HTTPRoute", condType: keystone.ConditionHTTPRouteReady,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(simulate.SetHTTPRouteAccepted(ctx, env.Client, key, metav1.ConditionTrue, "Accepted", "ok", 1))
			},
			status: metav1.ConditionTrue, reason: "HTTPRouteAccepted"},
		{name: "no HPA", step: "HPA", condType: keystone.ConditionHPAReady, status: metav1.ConditionTrue, reason: "HPANotRequired"},
		{name: "HPA", step: "HPA", condType: keystone.ConditionHPAReady,
			prepare: func(_ *testing.T, k *v1alpha1.Keystone) {
				k.Spec.Autoscaling = &commonv1.AutoscalingSpec{MaxReplicas: 4}
			},
			status: metav1.ConditionTrue, reason: "HPAReady"},
		{name: "trust_flush hourly", step: "TrustFlush", condType: keystone.ConditionTrustFlushReady,
			status: metav1.ConditionTrue, reason: keystone.ReasonTrustFlushScheduled, message: `scheduled at "0 * * * *"`},
		{name: "trust_flush suspended", step: "TrustFlush", condType: keystone.ConditionTrustFlushReady,
			prepare: func(_ *testing.T, k *v1alpha1.Keystone) {
				k.Spec.TrustFlush = v1alpha1.CronSpec{Schedule: "*/5 * * * *", Suspend: true}
			},
			status: metav1.ConditionTrue, reason: keystone.ReasonTrustFlushScheduled, message: `suspended at "*/5 * * * *"`},
	})
	cj := &batchv1.CronJob{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: keystone.TrustFlushCronJobName(k)}, cj); err != nil {
		t.Fatal(err)
	}
	if cj.Spec.Suspend == nil || !*cj.Spec.Suspend || cj.Spec.Schedule != "*/5 * * * *" ||
		strings.Join(cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Command, " ") != "keystone-manage trust_flush" {
		t.Errorf("CronJob spec = %+v", cj.Spec)
	}
}

// gatewaySpec is a route on the Gateway "public" for identity.example.com.
func gatewaySpec() *httproute.Spec {
	return &httproute.Spec{ParentRef: httproute.ParentRef{Name: "public"}, Hostnames: []string{"identity.example.com"}}
}

// The PasswordRotation step: every reason in the order a rotation meets them, the
// in-progress messages naming what is waited for.
func TestReasonsPasswordRotation(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	storeReady(t)
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(simulatedJobs{env.Client}) // the password check's outcome is the test's
	if _, err := runConfig(t, rec, target, k, ""); err != nil {
		t.Fatal(err)
	}
	pwKey := client.ObjectKey{Namespace: ns, Name: names.DatabasePasswordSecretName(k)}
	userB := client.ObjectKey{Namespace: ns, Name: keystone.DatabaseUserObjectName(k, keystone.AccountB)}
	checkKey := client.ObjectKey{Namespace: ns, Name: keystone.PasswordCheckJobName(k)}
	pr, inProgress := keystone.ConditionPasswordRotationReady, keystone.ReasonPasswordRotationInProgress
	runCases(t, rec, target, k, []stepCase{
		{name: "idle", step: "PasswordRotation", condType: pr, status: metav1.ConditionTrue,
			reason: keystone.ReasonPasswordRotationIdle, message: "the pods use account keystone;"},
		{name: "backup not pushed", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(rotation.RotatePassword(ctx, env.Client, pwKey, time.Now()))
			}, message: "waiting for PushSecret " + pwKey.String(), requeue: true},
		{name: "to the idle account", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(simulate.MarkPushSecretSynced(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: keystone.PasswordBackupName(k)}))
			}, message: "giving the staged password to the idle account keystone-b", requeue: true},
		{name: "no User", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			message: "waiting for User " + userB.String(), requeue: true},
		{name: "no Grant", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			prepare: func(t *testing.T, k *v1alpha1.Keystone) {
				if _, err := keystone.RunStep(ctx, rec, "Database", target, k, ""); err != nil {
					t.Fatal(err)
				}
				u := &mariadbv1alpha1.User{}
				if err := env.Client.Get(ctx, userB, u); err == nil {
					t.Fatal("the Database step made User b before the MariaDB is Ready")
				}
				mariaDBReady(t, ns)
				userA := client.ObjectKey{Namespace: ns, Name: k.Name}
				testenv.Eventually(t, 30*time.Second, "User b", func(ctx context.Context) (bool, error) {
					_, err := keystone.RunStep(ctx, rec, "Database", target, k, "")
					_, _ = simulate.MarkDatabaseReady(ctx, env.Client, userA)
					_, _ = simulate.MarkUserReady(ctx, env.Client, userA)
					_, _ = simulate.MarkGrantReady(ctx, env.Client, userA)
					return env.Client.Get(ctx, userB, u) == nil, err
				})
				if u.Spec.Name != "keystone-b" || u.Spec.PasswordSecretKeyRef.Key != keystone.DatabasePasswordCurrentKey {
					t.Errorf("User b is account %q reading %q", u.Spec.Name, u.Spec.PasswordSecretKeyRef.Key)
				}
				need(t)(simulate.MarkUserReady(ctx, env.Client, userB))
			}, message: "waiting for Grant " + userB.String(), requeue: true},
		{name: "check", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(simulate.MarkGrantReady(ctx, env.Client, userB))
			}, message: "Job " + checkKey.String() + " checks that the database accepts account keystone-b with the new password", requeue: true},
		{name: "check failed", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(simulate.MarkJobFailed(ctx, env.Client, checkKey))
			}, message: "the database refused account keystone-b with the new password (Job " + checkKey.String() + " failed", requeue: true},
		{name: "check again", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			message: "Job " + checkKey.String() + " checks", requeue: true},
		{name: "switch", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			prepare: func(t *testing.T, _ *v1alpha1.Keystone) {
				need(t)(simulate.MarkJobComplete(ctx, env.Client, checkKey))
			}, message: "the database accepts account keystone-b with the new password", requeue: true},
		{name: "connection", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			message: "to hold the connection of account keystone-b", requeue: true},
		{name: "rollout", step: "PasswordRotation", condType: pr, status: metav1.ConditionFalse, reason: inProgress,
			prepare: func(t *testing.T, k *v1alpha1.Keystone) {
				if _, err := runConfig(t, rec, target, k, ""); err != nil {
					t.Fatal(err)
				}
			}, message: "the pods not yet replaced keep account keystone", requeue: true},
	})
	testenv.Eventually(t, 60*time.Second, "rotated", func(ctx context.Context) (bool, error) {
		if _, err := keystone.RunStep(ctx, rec, "Deployment", target, k, ""); err != nil {
			return false, err
		}
		_, err := keystone.RunStep(ctx, rec, "PasswordRotation", target, k, "")
		c := meta.FindStatusCondition(k.Status.Conditions, pr)
		return c != nil && c.Reason == keystone.ReasonPasswordRotated, err
	})
	if c := meta.FindStatusCondition(k.Status.Conditions, pr); !strings.Contains(c.Message, "uses account keystone-b; account keystone is idle") {
		t.Errorf("Rotated message %q", c.Message)
	}
	pw := &corev1.Secret{}
	if err := env.Client.Get(ctx, pwKey, pw); err != nil {
		t.Fatal(err)
	}
	pw.Data[rotation.DatabasePasswordStagedKey] = []byte{}
	if err := env.Client.Update(ctx, pw); err != nil {
		t.Fatal(err)
	}
	if _, err := keystone.RunStep(ctx, rec, "PasswordRotation", target, k, ""); !errors.Is(err, keystone.ErrInconsistentPasswordSecret) {
		t.Errorf("empty staged password: %v", err)
	}
	expectReason(t, k, keystone.ReasonPasswordRotationFailed)
}
