package keystone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
)

// FieldManager is the Keystone operator's default field-manager name: its Applier
// writes under it, its cache holds only the Secrets and ConfigMaps labelled with it,
// and it names the operator's events.
const FieldManager = "keystone-operator"

// MetricsPrefix starts the names of the step metrics:
// keystone_operator_reconcile_duration_seconds and keystone_operator_reconcile_errors_total.
const MetricsPrefix = "keystone_operator"

// VersionPath is the identity API's version document: the readiness and startup probes
// of the pods and the HealthCheck step request it.
const VersionPath = "/v3"

// ErrInvalidOptions is wrapped by the errors of NewReconciler for missing or
// contradicting options.
var ErrInvalidOptions = errors.New("keystone: invalid options")

// Options configure NewReconciler; start from DefaultOptions. The SDK's reconciler
// options come first: the default Prober checks VersionPath with VersionDocumentValid,
// the default ProbeURL is status.endpoint followed by VersionPath, and NamespaceScoped
// refuses a Keystone that selects a ClusterSecretStore with
// ClusterSecretStoreUnsupported.
type Options struct {
	multicluster.ReconcilerOptions[*v1alpha1.Keystone]
	// OperatorImage is the image of this operator: the key-rotation CronJobs run its
	// rotate-keys command. Required.
	OperatorImage string
	// RotationServiceAccount is the ServiceAccount, in each Keystone's namespace, that
	// the key-rotation and password-rotation pods run as. Empty (the default) means the
	// reconciler makes one per Keystone, <name>-rotation, with a Role holding
	// rotation.PolicyRules and a RoleBinding, all controlled by the Keystone. When set,
	// nothing is made: that ServiceAccount must exist in every Keystone's namespace and
	// hold get and update on the Keystone's fernet key, credential key and database
	// password Secrets (rotation.PolicyRules), or the rotations fail.
	RotationServiceAccount string
}

// DefaultOperatorImage is a registry default of the operator image.
//
// Deprecated: the rotation CronJobs must run the image the operator itself runs, which
// only its deployment knows: set Options.OperatorImage from it (the command's
// --operator-image, defaulting to $OPERATOR_IMAGE, which the shipped manifest fills
// from the manager container's image). Nothing in this module uses it.
const DefaultOperatorImage = "ghcr.io/c5c3/reconciler-sdk/keystone-operator:latest"

// DefaultOptions returns the options of a cluster-wide operator under FieldManager.
// OperatorImage is empty: set it to the image the operator runs, or NewReconciler
// refuses the options.
func DefaultOptions() Options {
	return Options{ReconcilerOptions: multicluster.ReconcilerOptions[*v1alpha1.Keystone]{FieldManager: FieldManager}}
}

// VersionDocumentValid is the health check's judgement of a 2xx answer: a JSON
// version document whose version.id starts with "v3", as Keystone serves it on /v3.
// Answering it runs Keystone's WSGI application and routing, so an endpoint that
// answers 200 with anything else (an error page, a default web-server page) is
// reported APIUnhealthy.
func VersionDocumentValid(_ int, _ http.Header, body []byte) error {
	var doc struct {
		Version *struct {
			ID string `json:"id"`
		} `json:"version"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("version document is not JSON: %w", err)
	}
	if doc.Version == nil {
		return errors.New("version document has no version object")
	}
	if !strings.HasPrefix(doc.Version.ID, "v3") {
		return fmt.Errorf("version document has version.id %q, want v3.x", doc.Version.ID)
	}
	return nil
}

// NewReconciler builds the Keystone reconciler on resolver (the management cluster's
// client is resolver.Local().Client, an apply.Applier). The step table reads like the
// Keystone pipeline: a lane of steps that ends the pass at the first requeue or error,
// then a group whose members all run; each step declares the kinds it writes, from
// which the watches, [Reconciler.Children] and the target-cluster sweep derive.
func NewReconciler(resolver *multicluster.ClusterResolver, opts Options) (*Reconciler, error) {
	if resolver == nil {
		return nil, fmt.Errorf("%w: a resolver is required", ErrInvalidOptions)
	}
	if err := opts.Default(multicluster.HealthCheck[*v1alpha1.Keystone]{Path: VersionPath, Validate: VersionDocumentValid,
		Endpoint: func(k *v1alpha1.Keystone) string { return k.Status.Endpoint }}); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	keyOpts := KeyStepOptions{FieldManager: opts.FieldManager, OperatorImage: opts.OperatorImage,
		ServiceAccountName: opts.RotationServiceAccount}
	if opts.RotationServiceAccount == "" {
		keyOpts.ServiceAccountOf = rotation.ServiceAccountName
	}
	if err := keyOpts.Validate(); err != nil {
		return nil, err
	}
	r := &Reconciler{opts: opts}
	p, err := r.newPipeline(keyOpts, identitybackend.NewStep(resolver.Local().Client))
	if err != nil {
		return nil, err
	}
	// A pass records the generation it observes and hands its steps a fresh
	// identity-backend projection.
	r.CRReconciler, err = multicluster.NewCRReconciler(resolver, p, multicluster.CRKind[*v1alpha1.Keystone]{
		Name: "keystone", GateCondition: ConditionSecretsReady, New: func() *v1alpha1.Keystone { return &v1alpha1.Keystone{} },
		TargetClusterRef:   func(k *v1alpha1.Keystone) *commonv1.TargetClusterRefSpec { return k.Spec.TargetClusterRef },
		ObservedGeneration: func(k *v1alpha1.Keystone) *int64 { return &k.Status.ObservedGeneration },
		Prepare: func(ctx context.Context, _ *v1alpha1.Keystone) context.Context {
			return reconcile.WithState(ctx, &identitybackend.Projection{})
		},
	}, opts.ReconcilerOptions)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Reconciler reconciles Keystones: one pass resolves the target cluster, then runs the
// step table of NewReconciler (see the package documentation). Its Reconcile, Children
// and watches are the SDK's (multicluster.CRReconciler).
type Reconciler struct {
	*multicluster.CRReconciler[*v1alpha1.Keystone]
	opts Options
}

// newPipeline is the step table; every step answers through reconcile.Settle.
func (r *Reconciler) newPipeline(keyOpts KeyStepOptions, backends *identitybackend.Step) (*reconcile.Pipeline[*v1alpha1.Keystone], error) {
	type step = reconcile.Step[*v1alpha1.Keystone]
	type owns = []client.Object
	fernet, credential := NewFernetKeysStep(keyOpts), NewCredentialKeysStep(keyOpts)
	keyKinds := owns{&corev1.Secret{}, &esov1.ExternalSecret{}, &esov1alpha1.PushSecret{}, &batchv1.CronJob{}}
	return reconcile.NewPipeline(r.opts.Metrics,
		step{Name: "Secrets", Condition: ConditionSecretsReady, Run: settled(r.reconcileSecrets), Owns: owns{&esov1.ExternalSecret{}}},
		step{Name: "DatabaseTLS", Condition: ConditionDatabaseTLSReady, Run: settled(r.reconcileDatabaseTLS),
			Owns: owns{&certmanagerv1.Certificate{}}},
		step{Name: "IdentityBackends", Condition: backends.Condition(), Run: backends.Reconcile, Owns: owns{&corev1.Secret{}}},
		step{Name: "Config", Condition: ConditionConfigReady, Run: settled(r.reconcileConfig),
			Owns: owns{&corev1.ConfigMap{}, &corev1.Secret{}, &esov1.ExternalSecret{}}},
		// No condition of its own: a refusal flips the Keys rows.
		step{Name: "RotationAccess", Run: settled(r.reconcileRotationAccess),
			Owns: owns{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}}},
		reconcile.Sequential("Keys", // both run: one repository's wait does not hold the other
			step{Name: "FernetKeys", Condition: fernet.Condition(), Run: fernet.Reconcile, Owns: keyKinds},
			step{Name: "CredentialKeys", Condition: credential.Condition(), Run: credential.Reconcile, Owns: keyKinds},
		),
		step{Name: "Database", Condition: ConditionDatabaseReady, Run: settled(r.reconcileDatabase),
			Owns: owns{&mariadbv1alpha1.Database{}, &mariadbv1alpha1.User{}, &mariadbv1alpha1.Grant{}, &batchv1.Job{}}},
		step{Name: "PolicyValidation", Condition: ConditionPolicyValid, Run: settled(r.reconcilePolicyValidation), Owns: owns{&batchv1.Job{}}},
		step{Name: "Deployment", Condition: ConditionDeploymentReady, Run: settled(r.reconcileDeployment),
			Owns: owns{&appsv1.Deployment{}, &corev1.Service{}, &policyv1.PodDisruptionBudget{}}},
		step{Name: "Prune", Run: settled(r.prune)}, // no condition of its own: a failure flips ConfigReady
		reconcile.Sequential("Exposure",
			step{Name: "HTTPRoute", Condition: ConditionHTTPRouteReady, Run: settled(r.reconcileHTTPRoute), Owns: owns{&gatewayv1.HTTPRoute{}}},
			step{Name: "HealthCheck", Condition: ConditionKeystoneAPIReady, Run: settled(r.reconcileHealthCheck)},
			step{Name: "HPA", Condition: ConditionHPAReady, Run: settled(r.reconcileHPA), Owns: owns{&autoscalingv2.HorizontalPodAutoscaler{}}},
			step{Name: "Bootstrap", Condition: ConditionBootstrapReady, Run: settled(r.reconcileBootstrap), Owns: owns{&corev1.Secret{}, &batchv1.Job{}}},
			step{Name: "TrustFlush", Condition: ConditionTrustFlushReady, Run: settled(r.reconcileTrustFlush), Owns: owns{&batchv1.CronJob{}}},
		),
		step{Name: "PasswordRotation", Condition: ConditionPasswordRotationReady, Run: settled(r.reconcilePasswordRotation),
			Owns: owns{&batchv1.CronJob{}, &esov1alpha1.PushSecret{}, &batchv1.Job{}}},
	)
}

// flow is a step of the table in the reconcile.Outcome shape.
type flow func(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error)

// settled is f as a step function: its outcome handed over with reconcile.Settle.
func settled(f flow) reconcile.StepFunc[*v1alpha1.Keystone] {
	return func(ctx context.Context, k *v1alpha1.Keystone) (ctrl.Result, error) {
		out, err := f(ctx, k)
		return reconcile.Settle(k, out, err)
	}
}
