package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/health"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
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

// Options configure NewReconciler. Start from DefaultOptions.
type Options struct {
	// FieldManager is the operator's field manager; it must match the FieldManager of
	// the Appliers the resolver builds (multicluster.ResolverOptions.Applier).
	FieldManager string
	// NamespaceScoped is set when the operator runs with --namespace: its Role cannot
	// read a ClusterSecretStore, so a Horizon that selects one is refused with
	// ClusterSecretStoreUnsupported, and no ClusterSecretStore watch is registered.
	NamespaceScoped bool
	// Metrics records the step durations and errors; nil records none. Build it with
	// reconcile.NewMetrics(reconcile.DefaultMetricsOptions(MetricsPrefix)).
	Metrics *reconcile.Metrics
	// Prober runs the HealthCheck step; nil means a prober with health.DefaultOptions,
	// the login-page check of LoginPageValid and Outbound.
	Prober *health.Prober
	// Outbound is the policy of the default Prober's requests: by default a probe that
	// would reach a loopback, link-local, unspecified or multicast address is refused
	// (ConnectionFailed), and so is a redirect to another host. Tests that stand a local
	// server in for the dashboard allow loopback here.
	Outbound outbound.Policy
	// ProbeURL returns the URL the HealthCheck step requests for a Horizon; nil means
	// status.endpoint followed by LoginPath. Tests and demos that run no cluster DNS
	// point it at a local server.
	ProbeURL func(h *v1alpha1.Horizon) string
	// Recorder records the target-cluster sweep's events on the Horizon; nil records
	// none.
	Recorder events.EventRecorder
	// Cleanup sweeps the children a Horizon left on a target cluster; nil means one
	// built from the resolver with the kinds of Children and Recorder.
	Cleanup *multicluster.Cleanup
	// Wrap, when set, wraps the Reconciler before SetupWithManager registers it, so
	// that a test harness (the conformance suite's RunOptions.Wrap) observes every pass;
	// nil registers the Reconciler itself.
	Wrap func(crreconcile.Reconciler) crreconcile.Reconciler
}

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
// step table of NewReconciler (see the package documentation).
type Reconciler struct {
	client   client.Client // the management cluster's Applier
	resolver *multicluster.ClusterResolver
	cleanup  *multicluster.Cleanup
	opts     Options
	pipeline *reconcile.Pipeline[*v1alpha1.Horizon]
	passOpts reconcile.PassOptions
}

// NewReconciler builds the Horizon reconciler on resolver (the management cluster's
// client is resolver.Local().Client, an apply.Applier) with the step table of the
// package documentation.
func NewReconciler(resolver *multicluster.ClusterResolver, opts Options) (*Reconciler, error) {
	if resolver == nil {
		return nil, fmt.Errorf("%w: a resolver is required", ErrInvalidOptions)
	}
	if opts.FieldManager == "" {
		return nil, fmt.Errorf("%w: Options.FieldManager is empty", ErrInvalidOptions)
	}
	if opts.Prober == nil {
		po := health.DefaultOptions()
		po.Validate = LoginPageValid
		po.Outbound = opts.Outbound
		opts.Prober = health.NewProber(po)
	}
	if opts.ProbeURL == nil {
		opts.ProbeURL = func(h *v1alpha1.Horizon) string { return health.EndpointURL(h.Status.Endpoint, LoginPath) }
	}
	local := resolver.Local()
	r := &Reconciler{client: local.Client, resolver: resolver, cleanup: opts.Cleanup, opts: opts}
	var err error
	if r.pipeline, err = reconcile.NewPipeline(opts.Metrics, r.steps()...); err != nil {
		return nil, err
	}
	children, err := r.pipeline.OwnedLists(local.Client.Scheme())
	if err != nil {
		return nil, err
	}
	if r.cleanup == nil {
		r.cleanup, err = multicluster.NewCleanup(resolver, multicluster.CleanupOptions{
			Children: children, Recorder: opts.Recorder, ConditionType: reconcile.ConditionReady})
		if err != nil {
			return nil, err
		}
	}
	r.passOpts = local.PassOptions(r.pipeline.Conditions()...)
	return r, nil
}

// Children returns the kinds a Horizon writes, as empty lists, from the step table's
// Owns: the kinds the target-cluster sweep deletes (kinds a cluster does not serve are
// skipped).
func (r *Reconciler) Children() []client.ObjectList {
	lists, _ := r.pipeline.OwnedLists(r.client.Scheme()) // NewReconciler checked the scheme knows them
	return lists
}

// Reconcile runs one pass for the Horizon req names. The status is written on every
// exit path, and only when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.RunPass(ctx, r.client, req.NamespacedName, &v1alpha1.Horizon{}, r.passOpts, r.pass)
}

// pass runs the step table on the cluster the Horizon's children land on, behind the
// target-cluster preamble (multicluster.OnTarget): the sweep of a deleted Horizon,
// TargetClusterUnavailable ahead of every step, the finalizer of a target cluster.
func (r *Reconciler) pass(ctx context.Context, h *v1alpha1.Horizon) (ctrl.Result, error) {
	h.Status.ObservedGeneration = h.Generation
	return multicluster.OnTarget(ctx, r.client, r.cleanup, h, h.Spec.TargetClusterRef, ConditionSecretsReady,
		func(ctx context.Context, h *v1alpha1.Horizon) (ctrl.Result, error) {
			return r.pipeline.Run(reconcile.WithState(ctx, &passState{}), h)
		})
}

// passState carries what one step of a pass hands to a later one (reconcile.WithState).
type passState struct {
	// secretKeyHash digests the SECRET_KEY; the Deployment puts it on the pod template.
	secretKeyHash string
}

// targetOf returns the cluster the pass writes to; a step run outside a pass writes to
// the management cluster.
func (r *Reconciler) targetOf(ctx context.Context) *multicluster.Target {
	return r.resolver.TargetOf(ctx)
}
