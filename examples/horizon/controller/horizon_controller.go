package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// FieldManager is the Horizon operator's default field-manager name: its Applier writes
// under it, its cache holds only the Secrets and ConfigMaps labelled with it, and it
// names the operator's events.
const FieldManager = "horizon-operator"

// MetricsPrefix starts the names of the step metrics:
// horizon_operator_reconcile_duration_seconds and horizon_operator_reconcile_errors_total.
const MetricsPrefix = "horizon_operator"

// ServicePort is the port of the dashboard's Service and container (uWSGI over HTTP).
const ServicePort = 8080

// LoginPath is the dashboard's login page: the readiness and startup probes of the pods
// and the HealthCheck step request it.
const LoginPath = "/auth/login/"

// ErrInvalidOptions is wrapped by the errors of NewReconciler and SetupWithManager for
// missing or contradicting options.
var ErrInvalidOptions = errors.New("horizon: invalid options")

// Options configure NewReconciler; start from DefaultOptions. They are the SDK's
// reconciler options: the default Prober checks LoginPath with LoginPageValid, the
// default ProbeURL is status.endpoint followed by LoginPath, and NamespaceScoped refuses
// a Horizon that selects a ClusterSecretStore with ClusterSecretStoreUnsupported.
type Options = multicluster.ReconcilerOptions[*v1alpha1.Horizon]

// DefaultOptions returns the options of a cluster-wide operator under FieldManager.
func DefaultOptions() Options {
	return Options{FieldManager: FieldManager}
}

// LoginPageValid is the health check's judgement of a 2xx answer: the login page is
// HTML with a form that posts to LoginPath. Rendering it runs Django's routing,
// templates and static-asset manifest, so a dashboard that answers with anything else
// (an error page served with 200, a default web-server page) is reported APIUnhealthy.
func LoginPageValid(_ int, header http.Header, body []byte) error {
	if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		return fmt.Errorf("login page has Content-Type %q, want text/html", ct)
	}
	if !strings.Contains(string(body), LoginPath) {
		return fmt.Errorf("login page has no form posting to %s", LoginPath)
	}
	return nil
}

// Reconciler reconciles Horizons: one pass resolves the target cluster, then runs the
// step table of NewReconciler (see the package documentation). Its Reconcile, Children
// and watches are the SDK's (multicluster.CRReconciler).
type Reconciler struct {
	*multicluster.CRReconciler[*v1alpha1.Horizon]
	opts Options
	// management reads the KeystoneIdentityBackends (unstructured objects) on the
	// management cluster, where the Horizons are, whichever cluster a Horizon's
	// children go to. NewReconciler sets the management cluster's client (which reads
	// unstructured objects past the cache); SetupWithManager replaces it with the
	// manager's cache when it watches the kind, so the row reads from the watch's
	// informer. Nil (a Reconciler not built by NewReconciler, whose rows a test runs
	// one by one) reads through the pass's target instead.
	management client.Reader
}

// NewReconciler builds the Horizon reconciler on resolver (the management cluster's
// client is resolver.Local().Client, an apply.Applier) with the step table of the
// package documentation. The client's scheme needs the Horizon group (AddToScheme) and
// no Keystone group: the WebSSO row reads KeystoneIdentityBackends as unstructured
// objects. A nil resolver or invalid options return an error wrapping
// ErrInvalidOptions.
func NewReconciler(resolver *multicluster.ClusterResolver, opts Options) (*Reconciler, error) {
	if resolver == nil {
		return nil, fmt.Errorf("%w: a resolver is required", ErrInvalidOptions)
	}
	local := resolver.Local().Client
	check := multicluster.HealthCheck[*v1alpha1.Horizon]{Path: LoginPath, Validate: LoginPageValid,
		Endpoint: func(h *v1alpha1.Horizon) string { return h.Status.Endpoint }}
	if err := opts.Default(check); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	r := &Reconciler{opts: opts, management: local}
	p, err := reconcile.NewPipeline(opts.Metrics, r.steps()...)
	if err != nil {
		return nil, err
	}
	if r.CRReconciler, err = multicluster.NewCRReconciler(resolver, p, kind, opts); err != nil {
		return nil, err
	}
	return r, nil
}

// passState carries what one step of a pass hands to a later one (reconcile.WithState).
type passState struct {
	// secretKeyHash digests the SECRET_KEY; the Deployment puts it on the pod template.
	secretKeyHash string
	// websso holds the choices of the identity backends' providers (the WebSSO row);
	// the Config row renders them.
	websso WebSSOProviders
}

// AddToScheme adds the kinds the Horizon operator reads and writes on the management
// cluster besides the SDK's: Horizons (v1alpha1.AddToScheme). The
// KeystoneIdentityBackends whose identity providers spec.websso.identityBackends turns
// into login choices are read as unstructured objects and need no scheme entry.
func AddToScheme(s *runtime.Scheme) error {
	return v1alpha1.AddToScheme(s)
}

// kind describes Horizons to the SDK's reconciler: a pass records the generation it
// observes and hands its steps a fresh passState.
var kind = multicluster.CRKind[*v1alpha1.Horizon]{Name: "horizon", GateCondition: ConditionSecretsReady,
	New:                func() *v1alpha1.Horizon { return &v1alpha1.Horizon{} },
	TargetClusterRef:   func(h *v1alpha1.Horizon) *commonv1.TargetClusterRefSpec { return h.Spec.TargetClusterRef },
	ObservedGeneration: func(h *v1alpha1.Horizon) *int64 { return &h.Status.ObservedGeneration },
	Prepare: func(ctx context.Context, _ *v1alpha1.Horizon) context.Context {
		return reconcile.WithState(ctx, &passState{})
	},
}
