// Package conformance_test runs the SDK's conformance suite against the Keystone
// operator.
package conformance_test

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmanager "sigs.k8s.io/multicluster-runtime/pkg/manager"

	"github.com/c5c3/reconciler-sdk/conformance"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/world"
)

// adminPassword is the admin password the world syncs: long enough for the Secrets
// check.
const adminPassword = "keystone-conformance-admin-password-0123456789"

// operatorImage is the image the suite's operator runs, as the command sets
// Options.OperatorImage from --operator-image: the rotation CronJobs run it.
const operatorImage = "registry.example/keystone-operator:conformance"

// keyStepOptions are the options of the key-repository steps NewReconciler builds from
// DefaultOptions: the conditions of their rows are among the sub-conditions.
var keyStepOptions = keystone.KeyStepOptions{FieldManager: keystone.FieldManager, OperatorImage: operatorImage}

// versionDocument is Keystone's /v3 version document, as the health check's stand-in
// serves it.
var versionDocument = testenv.Answer{ContentType: "application/json", Body: `{"version": {"id": "v3.14", "status": "stable", "links": []}}`}

// startKeystoneOperator runs the Keystone operator as cmd/main.go run() does (a
// multicluster manager, its resolver, NewReconciler and the KeystoneIdentityBackend
// controller), on the suite's namespace, logger and metrics registry, with the health
// check pointed at api.
func startKeystoneOperator(api *testenv.StandIn) conformance.StartFunc {
	setup := func(ctx context.Context, mgr mcmanager.Manager, resolver *multicluster.ClusterResolver, run conformance.RunOptions) error {
		ropts := keystone.DefaultOptions()
		ropts.OperatorImage = operatorImage
		if err := conformance.ObserveReconciler(run, mgr, keystone.MetricsPrefix, &ropts.ReconcilerOptions); err != nil {
			return err
		}
		ropts.Outbound, ropts.ProbeBase = api.Outbound(), api.URL("")
		r, err := keystone.NewReconciler(resolver, ropts)
		if err == nil {
			err = r.SetupWithManager(ctx, mgr)
		}
		if err != nil {
			return err
		}
		backends, err := identitybackend.NewReconciler(resolver, identitybackend.DefaultOptions())
		if err != nil {
			return err
		}
		return backends.SetupWithManager(ctx, mgr)
	}
	return conformance.StartOperator(keystone.FieldManager, env.Scheme, setup)
}

// newWorld plays External Secrets and mariadb-operator for the suite: the shared
// ClusterSecretStore, the admin password of the samples, the restore ExternalSecrets of
// the database password and of both key repositories answered "no backup" until a
// PushSecret stores one, the MariaDB "mariadb" and the Keystone's Database, User and
// Grant Ready.
func newWorld() *world.World {
	return world.New(env.Client, world.WithMariaDB("mariadb"),
		world.WithSecret("openstack/keystone/admin", map[string][]byte{"password": []byte(adminPassword)}))
}

// readSample reads a Keystone of config/samples.
func readSample(t *testing.T, file string) *v1alpha1.Keystone {
	return testenv.ReadSample(t, "../config/samples/"+file, &v1alpha1.Keystone{})
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
		Start:        startKeystoneOperator(testenv.NewStandIn(t, versionDocument)),
		Samples:      []client.Object{sample},
		Invalid: []conformance.InvalidSample{
			{Object: fewFernetKeys, Field: "spec.fernet.maxActiveKeys"},
			{Object: noRemoteKey, Field: "spec.bootstrap.adminPassword.remoteKey"},
			{Object: badPublicURL, Field: "spec.bootstrap.publicURL"},
		},
		MakeReady:        newWorld().Play,
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
