// Package conformance_test runs the SDK's conformance suite against the Keystone
// operator.
package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// adminPassword is the admin password MakeReady syncs: long enough for the Secrets
// check.
const adminPassword = "keystone-conformance-admin-password-0123456789"

// keyStepOptions are the options of the key-repository steps NewReconciler builds from
// DefaultOptions: MakeReady names the restore ExternalSecrets with them.
var keyStepOptions = keystone.KeyStepOptions{FieldManager: keystone.FieldManager, OperatorImage: keystone.DefaultOperatorImage}

// startKeystoneOperator runs the Keystone operator as cmd/main.go run() does (a
// multicluster manager, its resolver, NewReconciler and the KeystoneIdentityBackend
// controller), on the suite's namespace, logger and metrics registry, with the health
// check pointed at a stand-in version document.
func startKeystoneOperator(api string) func(context.Context, *rest.Config, conformance.RunOptions) error {
	return func(ctx context.Context, cfg *rest.Config, run conformance.RunOptions) error {
		return multicluster.RunOperator(ctx, cfg, run.OperatorOptions(keystone.FieldManager, env.Scheme), func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver) error {
			ropts := keystone.DefaultOptions()
			var err error
			if ropts.Metrics, err = run.Metrics(keystone.MetricsPrefix); err != nil {
				return err
			}
			ropts.Recorder = mgr.GetLocalManager().GetEventRecorder(keystone.FieldManager)
			ropts.Outbound = outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes} // the identity API stand-in listens on loopback
			ropts.ProbeURL = func(k *v1alpha1.Keystone) string {
				if k.Status.Endpoint == "" {
					return ""
				}
				return api + keystone.VersionPath
			}
			ropts.Wrap = run.Wrap
			r, err := keystone.NewReconciler(resolver, ropts)
			if err != nil {
				return err
			}
			if err := r.SetupWithManager(ctx, mgr); err != nil {
				return err
			}
			backends, err := identitybackend.NewReconciler(resolver, identitybackend.DefaultOptions())
			if err != nil {
				return err
			}
			return backends.SetupWithManager(ctx, mgr)
		})
	}
}

// makeKeystoneReady plays External Secrets and mariadb-operator: the shared
// ClusterSecretStore is Ready, the admin password ExternalSecret synced, the restore
// ExternalSecrets of the database password and of both key repositories answer that the
// backend holds no backup, the
// MariaDB "mariadb" exists and is Ready, and the Keystone's Database, User and Grant
// are Ready. Each is written only when it is not already so, so that a poll does not
// wake the operator for nothing; an object the operator has not written yet is left to
// a later poll.
func makeKeystoneReady(ctx context.Context, c client.Client, cr client.Object) error {
	k, ok := cr.(*v1alpha1.Keystone)
	if !ok {
		return fmt.Errorf("MakeReady got a %T, want a *v1alpha1.Keystone", cr)
	}
	if err := storeReady(ctx, c); err != nil {
		return err
	}
	if err := mariaDBReady(ctx, c, k.Namespace); err != nil {
		return err
	}
	var errs []error
	adminKey := client.ObjectKey{Namespace: k.Namespace, Name: names.AdminPasswordSecretName(k)}
	errs = append(errs, answerExternalSecret(ctx, c, adminKey, func(es *esov1.ExternalSecret) bool {
		return secretHolds(ctx, c, adminKey, names.AdminPasswordDataKey)
	}, func() error {
		_, err := testenv.MarkExternalSecretSynced(ctx, c, adminKey,
			map[string][]byte{names.AdminPasswordDataKey: []byte(adminPassword)})
		return err
	}))
	restores := []string{keystone.PasswordRestoreName(k)}
	for _, step := range []*keystone.KeyRepositoryStep{keystone.NewFernetKeysStep(keyStepOptions), keystone.NewCredentialKeysStep(keyStepOptions)} {
		restores = append(restores, step.RestoreName(k))
	}
	for _, name := range restores {
		key := client.ObjectKey{Namespace: k.Namespace, Name: name}
		errs = append(errs, answerExternalSecret(ctx, c, key, nil, func() error {
			_, err := testenv.MarkExternalSecretEmpty(ctx, c, key)
			return err
		}))
	}
	key := client.ObjectKey{Namespace: k.Namespace, Name: k.Name}
	errs = append(errs,
		markIfNotReady(ctx, c, key, &mariadbv1alpha1.Database{}, func(o *mariadbv1alpha1.Database) []metav1.Condition { return o.Status.Conditions },
			func() error { _, err := testenv.MarkDatabaseReady(ctx, c, key); return err }),
		markIfNotReady(ctx, c, key, &mariadbv1alpha1.User{}, func(o *mariadbv1alpha1.User) []metav1.Condition { return o.Status.Conditions },
			func() error { _, err := testenv.MarkUserReady(ctx, c, key); return err }),
		markIfNotReady(ctx, c, key, &mariadbv1alpha1.Grant{}, func(o *mariadbv1alpha1.Grant) []metav1.Condition { return o.Status.Conditions },
			func() error { _, err := testenv.MarkGrantReady(ctx, c, key); return err }),
	)
	return errors.Join(errs...)
}

// storeReady creates the shared ClusterSecretStore when missing and marks it Ready
// unless it is.
func storeReady(ctx context.Context, c client.Client) error {
	store := &esov1.ClusterSecretStore{
		ObjectMeta: metav1.ObjectMeta{Name: secrets.OpenBaoClusterStoreName},
		Spec: esov1.SecretStoreSpec{Provider: &apiextensionsv1.JSON{
			Raw: []byte(`{"vault":{"server":"http://openbao.openbao.svc:8200","path":"secret","version":"v2"}}`)}},
	}
	if err := c.Create(ctx, store); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(store), store); err != nil {
		return err
	}
	for _, cond := range store.Status.Conditions {
		if cond.Type == esov1.SecretStoreReady && cond.Status == corev1.ConditionTrue {
			return nil
		}
	}
	_, err := testenv.MarkClusterSecretStoreReady(ctx, c, secrets.OpenBaoClusterStoreName)
	return err
}

// mariaDBReady creates the MariaDB "mariadb" of ns when missing and marks it Ready
// unless it is.
func mariaDBReady(ctx context.Context, c client.Client, ns string) error {
	key := client.ObjectKey{Namespace: ns, Name: "mariadb"}
	if err := c.Create(ctx, &mariadbv1alpha1.MariaDB{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return markIfNotReady(ctx, c, key, &mariadbv1alpha1.MariaDB{}, func(o *mariadbv1alpha1.MariaDB) []metav1.Condition { return o.Status.Conditions },
		func() error { _, err := testenv.MarkMariaDBReady(ctx, c, key); return err })
}

// markIfNotReady runs mark unless the object at key has a Ready condition True for its
// generation; an object that does not exist yet is left alone.
func markIfNotReady[T client.Object](ctx context.Context, c client.Client, key client.ObjectKey, obj T,
	conditions func(T) []metav1.Condition, mark func() error) error {
	if err := c.Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if cond := meta.FindStatusCondition(conditions(obj), "Ready"); cond != nil &&
		cond.Status == metav1.ConditionTrue && cond.ObservedGeneration == obj.GetGeneration() {
		return nil
	}
	return mark()
}

// answerExternalSecret runs answer unless the ExternalSecret at key is Ready for its
// current generation and done (nil means true) holds; an ExternalSecret that does not
// exist yet is left alone.
func answerExternalSecret(ctx context.Context, c client.Client, key client.ObjectKey,
	done func(*esov1.ExternalSecret) bool, answer func() error) error {
	es := &esov1.ExternalSecret{}
	if err := c.Get(ctx, key, es); err != nil {
		return client.IgnoreNotFound(err)
	}
	if esSynced(es) && (done == nil || done(es)) {
		return nil
	}
	return answer()
}

// esSynced reports whether the ExternalSecret is Ready for its current generation.
func esSynced(es *esov1.ExternalSecret) bool {
	for _, c := range es.Status.Conditions {
		if c.Type == esov1.ExternalSecretReady {
			return c.Status == corev1.ConditionTrue &&
				strings.HasPrefix(es.Status.SyncedResourceVersion, fmt.Sprint(es.Generation)+"-")
		}
	}
	return false
}

// secretHolds reports whether the Secret at key holds dataKey.
func secretHolds(ctx context.Context, c client.Client, key client.ObjectKey, dataKey string) bool {
	s := &corev1.Secret{}
	if err := c.Get(ctx, key, s); err != nil {
		return false
	}
	return len(s.Data[dataKey]) > 0
}

// readSample reads a Keystone of config/samples.
func readSample(t *testing.T, file string) *v1alpha1.Keystone {
	t.Helper()
	data, err := os.ReadFile("../config/samples/" + file)
	if err != nil {
		t.Fatal(err)
	}
	k := &v1alpha1.Keystone{}
	if err := yaml.UnmarshalStrict(data, k); err != nil {
		t.Fatal(err)
	}
	return k
}

// newVersionDoc serves Keystone's /v3 version document for the health check.
func newVersionDoc(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `{"version": {"id": "v3.14", "status": "stable", "links": []}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// subConditions are the conditions of the Keystone's pipeline, in its order: Ready
// aggregates them.
func subConditions() []string {
	return []string{
		keystone.ConditionSecretsReady, keystone.ConditionDatabaseTLSReady,
		identitybackend.NewStep(nil).Condition(), keystone.ConditionConfigReady,
		keystone.NewFernetKeysStep(keyStepOptions).Condition(), keystone.NewCredentialKeysStep(keyStepOptions).Condition(),
		keystone.ConditionDatabaseReady, keystone.ConditionPolicyValid, keystone.ConditionDeploymentReady,
		keystone.ConditionHTTPRouteReady, keystone.ConditionKeystoneAPIReady, keystone.ConditionHPAReady,
		keystone.ConditionBootstrapReady, keystone.ConditionTrustFlushReady,
	}
}

// The Keystone operator keeps every promise of the suite for the minimal sample: its
// database, key repositories, Deployment, bootstrap Job and CronJobs converge, stay
// quiet, survive faults (HPAReady and TrustFlushReady, which have no False reason,
// return the error of a failed request), leave their write-once children — the
// db-sync, policy and bootstrap Jobs, the immutable ConfigMaps and Secrets, the
// generated database password and bootstrap key — alone when a label drifts, write no
// Secret's value where the suite looks (client-go's V(8) body dumps of the connection
// Secret are above what it captures), and go with the Keystone, as two replicas and
// under its own ClusterRole.
func TestConformance(t *testing.T) {
	conformance.Run(t, suiteOptions(t))
}

// generatedSecrets declares to the suite, as write-once, the credential Secrets of the
// Keystones that secrets.EnsureGeneratedSecret creates once (the database password and
// the bootstrap key): nothing on them marks them so.
func generatedSecrets(keystones ...*v1alpha1.Keystone) func(client.Object) bool {
	once := map[string]bool{}
	for _, k := range keystones {
		once[names.DatabasePasswordSecretName(k)] = true
		once[keystone.BootstrapKeySecretName(k)] = true
	}
	return func(obj client.Object) bool {
		return obj.GetObjectKind().GroupVersionKind().Kind == "Secret" && once[obj.GetName()]
	}
}

// suiteOptions describe the Keystone operator to the suite: the minimal sample, samples
// admission refuses, and the players of ESO, mariadb-operator and the identity API.
func suiteOptions(t *testing.T) conformance.Options {
	minimal := func(name string) *v1alpha1.Keystone {
		k := readSample(t, "keystone_v1alpha1_keystone_minimal.yaml")
		k.Name = name
		return k
	}
	fewFernetKeys := minimal("few-fernet-keys")
	fewFernetKeys.Spec.Fernet.MaxActiveKeys = 2
	noRemoteKey := minimal("no-remote-key")
	noRemoteKey.Spec.Bootstrap.AdminPassword.RemoteKey = ""
	badPublicURL := minimal("bad-public-url")
	badPublicURL.Spec.Bootstrap.PublicURL = "keystone.example"
	sample := readSample(t, "keystone_v1alpha1_keystone_minimal.yaml")
	return conformance.Options{
		Env:          env,
		FieldManager: keystone.FieldManager,
		Start:        startKeystoneOperator(newVersionDoc(t)),
		Samples:      []client.Object{sample},
		Invalid: []conformance.InvalidSample{
			{Object: fewFernetKeys, Field: "spec.fernet.maxActiveKeys"},
			{Object: noRemoteKey, Field: "spec.bootstrap.adminPassword.remoteKey"},
			{Object: badPublicURL, Field: "spec.bootstrap.publicURL"},
		},
		MakeReady:        makeKeystoneReady,
		SubConditions:    subConditions(),
		ClusterRolePaths: []string{"../config/rbac/role.yaml"},
		ExpectNoRequests: true,
		// Two replicas and the Keystone's many children wake the operator often while
		// the db-sync and bootstrap Jobs run: more passes than the default fit in
		// their run time.
		MaxPasses: 150,
		WriteOnce: generatedSecrets(sample),
	}
}
