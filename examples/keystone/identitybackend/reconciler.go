package identitybackend

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/satellite"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// The condition types of a KeystoneIdentityBackend. Ready aggregates DomainReady,
// FederationReady (ConditionFederationReady) and ConfigProjected, reporting the first
// that is not True in that order (reconcile.ConditionReady, reason
// reconcile.ReasonAllReady when all are True).
const (
	// ConditionDomainReady is the gate the Keystone's IdentityBackends row reads: the
	// domain exists in Keystone and the backend's configuration can be rendered.
	ConditionDomainReady = "DomainReady"
	// ConditionConfigProjected reports that the Keystone's pods run with the domain's
	// keystone.<domain>.conf.
	ConditionConfigProjected = "ConfigProjected"
)

// The reasons of a KeystoneIdentityBackend's conditions; TargetClusterUnavailable
// (DomainReady False) is package multicluster's.
const (
	// ReasonWaitingForKeystone (DomainReady False): the Keystone does not exist, has
	// not published status.endpoint yet (its Deployment is not available), or the
	// Service of its name is not the Keystone's own (it is not controlled by the
	// Keystone).
	ReasonWaitingForKeystone = "WaitingForKeystone"
	// ReasonExternalEndpointRequired (DomainReady False): the Keystone runs on a target
	// cluster (spec.targetClusterRef) and sets no spec.externalEndpoint, or one that is
	// not an https URL. Its Service URL resolves on the operator's own cluster, so the
	// admin password is sent nowhere until the Keystone names the https URL the
	// operator reaches its API at.
	ReasonExternalEndpointRequired = "ExternalEndpointRequired"
	// ReasonInvalidConfig (DomainReady False): the domain file cannot be rendered from
	// the backend (a section name that is not lower case, an option oslo.config cannot
	// read back, [ldap] password set in config, a bind password with a backslash
	// followed by "$"). Fix the backend or its Secret.
	ReasonInvalidConfig = "InvalidConfig"
	// ReasonBindPasswordMissing (DomainReady False): the Secret of passwordSecretRef, or
	// its key, does not exist or is empty.
	ReasonBindPasswordMissing = "BindPasswordMissing"
	// ReasonAdminPasswordMissing (DomainReady False): the Keystone's admin password
	// Secret, or its key, does not exist yet.
	ReasonAdminPasswordMissing = "AdminPasswordMissing"
	// ReasonKeystoneUnreachable (DomainReady False): the Keystone API did not answer,
	// answered 5xx, answered something that is not Keystone's (a redirect among them:
	// none is followed), or its address is one the outbound policy refuses
	// (Options.OutboundPolicy). The message names the endpoint. Once the domain was
	// made ready for the current generation, an unreachable API leaves DomainReady True
	// (the domain does not stop existing), so a Keystone rollout does not take the
	// domain out of its own configuration.
	ReasonKeystoneUnreachable = "KeystoneUnreachable"
	// ReasonAdminCredentialsRejected (DomainReady False): Keystone refused the admin
	// user and password (for example while the bootstrap has not applied a new
	// password yet).
	ReasonAdminCredentialsRejected = "AdminCredentialsRejected"
	// ReasonDomainCreateFailed (DomainReady False): Keystone refused to create the
	// domain (403, 400, ...).
	ReasonDomainCreateFailed = "DomainCreateFailed"
	// ReasonDomainCreated (DomainReady True): this controller created the domain; the
	// reason stays on later passes that find it again under status.domainID, also a
	// pass that read the backend before that status reached the cache (it asks the API
	// server before calling the domain adopted). (A pass whose status write failed
	// after the create leaves no record: the next pass finds the domain and reports
	// DomainAdopted.)
	ReasonDomainCreated = "DomainCreated"
	// ReasonDomainAdopted (DomainReady True): a domain of that name existed and is used
	// as it is (its description and enabled flag are not changed).
	ReasonDomainAdopted = "DomainAdopted"

	// ReasonNotProjected (ConfigProjected False): the Keystone's Deployment does not
	// mount a domains Secret holding this generation's keystone.<domain>.conf yet, or,
	// with spec.federation, a federation Secret holding this generation's files of each
	// identity provider (the message names the file; a federation that does not
	// validate, a provider whose documents are missing or an OpenID Connect provider
	// besides the Keystone's one is never projected).
	ReasonNotProjected = "NotProjected"
	// ReasonWaitingForRollout (ConfigProjected False): the file (and the identity
	// providers' files) are in the pod template, but the Deployment has not finished
	// rolling it out.
	ReasonWaitingForRollout = "WaitingForRollout"
	// ReasonDomainConflict (ConfigProjected False): an older backend of the same
	// Keystone names the same domain and keeps it.
	ReasonDomainConflict = "DomainConflict"
	// ReasonProjected (ConfigProjected True): every pod of the Keystone runs with the
	// domain's file, and the files of its identity providers, as this generation
	// renders them.
	ReasonProjected = "Projected"
)

// DefaultPollInterval is how often a backend whose domain or projection is not ready
// is looked at again: secrets.PollInterval, 15 s.
const DefaultPollInterval = secrets.PollInterval

// DefaultResyncInterval is how often a backend whose pass asked for no earlier requeue
// (a Ready backend among them) is looked at again when Options.ResyncInterval is zero:
// 5 minutes. Each such pass checks the domain, the identity providers, their mappings
// and protocols against the Keystone API, so one deleted or changed there behind the
// operator's back is restored within the interval, without another event.
const DefaultResyncInterval = 5 * time.Minute

// ErrInvalidOptions is wrapped by the errors of
// NewReconciler for missing options.
var ErrInvalidOptions = errors.New("keystone: invalid identity backend options")

// defaultAdminPasswordKey is the data key of the admin password in the Secret
// names.AdminPasswordSecretName, as the Keystone's ExternalSecret writes it.
const defaultAdminPasswordKey = names.AdminPasswordDataKey

// Options configure NewReconciler. Start from
// DefaultOptions.
type Options struct {
	// KeystoneURL returns the URL of the Keystone API the domain of a backend of k is
	// created through, for a Keystone on the management cluster; nil means names.Endpoint(k),
	// the Service URL computed from the Keystone's name and namespace, sent to only
	// while the Service of that name is controlled by the Keystone. It is never called
	// for a Keystone with spec.targetClusterRef, which is reached at
	// spec.externalEndpoint only. "" means the Keystone has no endpoint yet
	// (WaitingForKeystone). Tests and operators running outside the cluster point it
	// elsewhere; status.endpoint, which whoever may write keystones/status can set,
	// is never the address.
	KeystoneURL func(k *v1alpha1.Keystone) string
	// OutboundPolicy says where the Keystone API requests may connect; the zero value
	// is outbound's default (loopback, link-local, unspecified and multicast addresses
	// refused after name resolution). A Keystone API is a cluster Service or an
	// external https endpoint, neither of which lies in those ranges. Tests against an
	// httptest server allow loopback (outbound.LoopbackPrefixes).
	OutboundPolicy outbound.Policy
	// Transport is the base of the Keystone API client's transport: its TLS settings,
	// such as the CA spec.externalEndpoint's certificate is verified with; nil means
	// http.DefaultTransport. The client dials through OutboundPolicy whatever it holds
	// and follows no redirect (keystoneapi.Options).
	Transport *http.Transport
	// AdminPasswordKey is the data key of the admin password in the Secret
	// AdminPasswordSecretName; empty means "password".
	AdminPasswordKey string
	// PollInterval is the requeue interval while DomainReady or ConfigProjected is not
	// True; zero means DefaultPollInterval.
	PollInterval time.Duration
	// ResyncInterval is the requeue interval of a pass that asks for no earlier one (a
	// Ready backend, or one waiting for its spec to change): the next pass checks the
	// domain and the identity providers against the Keystone API again and restores
	// what was deleted or changed there. Zero means DefaultResyncInterval.
	ResyncInterval time.Duration
	// Client reads the backends, their Keystones and bind password Secrets and writes
	// the backends' status on the management cluster; nil means resolver.Local().Client.
	// Tests inject faults through it.
	Client client.Client
	// Recorder records the federation cleanup's events on a deleted backend
	// (EventFederationRemoved, EventFederationRemovalAbandoned); nil means the local
	// manager's recorder ("keystoneidentitybackend"), set by SetupWithManager.
	Recorder events.EventRecorder
	// FederationGiveUpAfter bounds how long a deleted backend waits for Keystone to
	// delete the federation objects created for it, counted from its
	// deletionTimestamp; zero means DefaultFederationGiveUpAfter.
	FederationGiveUpAfter time.Duration
}

// DefaultOptions returns the options of an operator that reaches every
// Keystone on its own cluster at the Keystone's Service (names.Endpoint) and every Keystone
// on a target cluster at its spec.externalEndpoint, through outbound's default policy,
// polling every DefaultPollInterval and resyncing every DefaultResyncInterval.
func DefaultOptions() Options {
	return Options{AdminPasswordKey: defaultAdminPasswordKey, PollInterval: DefaultPollInterval, ResyncInterval: DefaultResyncInterval}
}

// Reconciler reconciles KeystoneIdentityBackends, the satellites of a
// Keystone (package satellite): it creates or adopts the backend's domain in Keystone
// (DomainReady, the gate the Keystone's IdentityBackends row reads), registers the
// identity providers of spec.federation with their mappings and protocols through the
// Keystone API (FederationReady) and observes the domain's file in the Keystone's pods
// (ConfigProjected). On the cluster it writes nothing but the backend's status and
// its finalizer: the Keystone's pass renders the file.
//
// A backend without spec.federation has no finalizer, and deleting a backend leaves
// its domain in Keystone (only the federation objects created for it are deleted,
// under FederationFinalizer). The Keystone's next pass drops the domain's file, so its users can no longer sign in
// through the backend's driver; but the domain's projects, groups, role assignments
// and the IDs other services store stay, and a backend created again for the domain
// adopts it. Deleting a Keystone domain deletes all of that irrevocably, and the domain
// may have been adopted rather than created (the controller cannot tell whose it is),
// so it stays an administrator's decision (openstack domain set --disable, then
// openstack domain delete).
type Reconciler struct {
	client   client.Client // the management cluster's Applier
	resolver multicluster.Resolver
	opts     Options
	passOpts reconcile.PassOptions
	// ownService says that KeystoneURL is the default, names.Endpoint: the Service of the
	// Keystone's name must be controlled by the Keystone.
	ownService bool
}

// NewReconciler builds the KeystoneIdentityBackend reconciler on
// resolver (the management cluster's client is resolver.Local().Client, an
// apply.Applier whose APIReader reads the users' bind password Secrets past the
// cache).
func NewReconciler(resolver *multicluster.ClusterResolver, opts Options) (*Reconciler, error) {
	if resolver == nil {
		return nil, fmt.Errorf("%w: a resolver is required", ErrInvalidOptions)
	}
	local := resolver.Local()
	r := &Reconciler{client: local.Client, resolver: resolver, opts: opts}
	if opts.Client != nil {
		r.client = opts.Client
	}
	if r.opts.AdminPasswordKey == "" {
		r.opts.AdminPasswordKey = defaultAdminPasswordKey
	}
	if r.opts.PollInterval <= 0 {
		r.opts.PollInterval = DefaultPollInterval
	}
	if r.opts.ResyncInterval <= 0 {
		r.opts.ResyncInterval = DefaultResyncInterval
	}
	r.ownService = r.opts.KeystoneURL == nil
	if r.ownService {
		r.opts.KeystoneURL = names.Endpoint
	}
	r.passOpts = reconcile.DefaultPassOptions(ConditionDomainReady, ConditionFederationReady, ConditionConfigProjected)
	r.passOpts.APIReader = local.APIReader
	return r, nil
}

// Reconcile runs one pass for the KeystoneIdentityBackend req names. The status is
// written on every exit path, and only when it changed.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return reconcile.RunPass(ctx, r.client, req.NamespacedName, &v1alpha1.KeystoneIdentityBackend{}, r.passOpts, r.pass)
}

// pass resolves the Keystone, sets the gate, registers the identity providers
// (federate) and observes the projection.
//
// A backend being deleted keeps its domain in Keystone (see the package
// documentation); the Keystone's next pass drops its file. Only the federation objects
// created for it are deleted (finalizeFederation). A pass of a backend not being
// deleted that ends without an error and without a requeue requeues after
// Options.ResyncInterval: what Keystone holds is checked again while Ready.
func (r *Reconciler) pass(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend) (ctrl.Result, error) {
	b.Status.ObservedGeneration = b.Generation
	if b.DeletionTimestamp != nil {
		return r.finalizeFederation(ctx, b)
	}
	res, err := r.converge(ctx, b)
	if err == nil && res.IsZero() {
		res.RequeueAfter = r.opts.ResyncInterval
	}
	return res, err
}

// converge is the pass of a backend not being deleted.
func (r *Reconciler) converge(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend) (ctrl.Result, error) {
	k := &v1alpha1.Keystone{}
	children, res, err := satellite.ResolveParentChildren(ctx, satellite.ResolveParams{
		Client: r.client, Parent: k, ParentKind: "Keystone",
		ParentKey: client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.KeystoneRef.Name},
		TargetClusterRef: func(p client.Object) *commonv1.TargetClusterRefSpec {
			return p.(*v1alpha1.Keystone).Spec.TargetClusterRef
		},
		Resolver:   r.resolver,
		Conditions: &b.Status.Conditions, Generation: b.Generation,
		GateConditionType:       ConditionDomainReady,
		WaitingForParentReason:  ReasonWaitingForKeystone,
		WaitingForParentMessage: fmt.Sprintf("Keystone %s/%s does not exist", b.Namespace, b.Spec.KeystoneRef.Name),
		RequeueAfter:            r.opts.PollInterval,
		ProjectionConditionType: ConditionConfigProjected, ProjectionDemotionReason: ReasonNotProjected,
		ProjectionDemotionMessage: fmt.Sprintf("Keystone %s/%s does not exist", b.Namespace, b.Spec.KeystoneRef.Name),
	})
	if children == nil {
		r.notProjected(b, ReasonNotProjected, "not projected while DomainReady is not True")
		fres, ferr := r.federate(ctx, b, nil, openIDSlot{}) // without an API client it consults no holder
		return earlier(res, fres), errors.Join(err, ferr)
	}
	content, api, res, err := r.gate(ctx, b, k, children)
	// The attached backends are listed once, for federate and observe alike, and only
	// when DomainReady is True: federate consults the OpenID Connect holder only with
	// an API client, which the gate returns with DomainReady True alone.
	var attached []*v1alpha1.KeystoneIdentityBackend
	if err == nil && meta.IsStatusConditionTrue(b.Status.Conditions, ConditionDomainReady) {
		attached, err = attachedBackends(ctx, r.client, b)
	}
	openID := openIDHolder(attached)
	if err == nil {
		var fres ctrl.Result
		fres, err = r.federate(ctx, b, api, openID)
		res = earlier(res, fres)
	}
	if err != nil || !meta.IsStatusConditionTrue(b.Status.Conditions, ConditionDomainReady) {
		r.notProjected(b, ReasonNotProjected, "not projected while DomainReady is not True")
		return res, err
	}
	pres, err := r.observe(ctx, b, k, children, content, attached, openID)
	if err != nil {
		return ctrl.Result{}, err
	}
	if res.IsZero() {
		res = pres
	}
	return res, nil
}

// gate sets DomainReady: the domain file renders (with the bind password), the
// Keystone's API has an address the admin password may go to (endpoint), the admin
// password exists, and the domain exists in Keystone, created or adopted. It returns
// the rendered file for observe, and the Keystone API client when the domain was found
// or created through it (nil otherwise).
func (r *Reconciler) gate(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend, k *v1alpha1.Keystone, children client.Client) (string, *keystoneapi.Client, ctrl.Result, error) {
	poll := ctrl.Result{RequeueAfter: r.opts.PollInterval}
	password, why, err := bindPassword(ctx, r.client, b)
	if err != nil {
		return "", nil, ctrl.Result{}, err
	}
	if why != "" {
		reconcile.MarkFalse(b, ConditionDomainReady, ReasonBindPasswordMissing, why)
		return "", nil, poll, nil
	}
	_, content, err := renderDomainFile(b, password)
	if err != nil {
		reconcile.MarkFalse(b, ConditionDomainReady, ReasonInvalidConfig, err.Error())
		if b.Spec.PasswordSecretRef != nil {
			return "", nil, poll, nil // the Secret may change; its changes raise no event
		}
		return "", nil, ctrl.Result{}, nil // waits for the backend to change
	}

	endpoint, res, err := r.endpoint(ctx, b, k, children)
	if err != nil || endpoint == "" {
		return content, nil, res, err
	}
	adminKey := client.ObjectKey{Namespace: k.Namespace, Name: names.AdminPasswordSecretName(k)}
	adminPassword, err := secrets.GetSecretValue(ctx, children, adminKey, r.opts.AdminPasswordKey)
	switch {
	case apierrors.IsNotFound(err) || errors.Is(err, secrets.ErrKeyNotFound) || (err == nil && adminPassword == ""):
		reconcile.MarkFalse(b, ConditionDomainReady, ReasonAdminPasswordMissing,
			fmt.Sprintf("Secret %s holds no %q yet", adminKey, r.opts.AdminPasswordKey))
		return content, nil, poll, nil
	case err != nil:
		return "", nil, ctrl.Result{}, err
	}

	api, err := keystoneapi.New(endpoint, keystoneapi.Credentials{
		Username: keystoneAdminUser(k), Password: adminPassword, ProjectName: "admin",
	}, keystoneapi.Options{Policy: r.opts.OutboundPolicy, Transport: r.opts.Transport})
	if err != nil {
		reconcile.MarkFalse(b, ConditionDomainReady, ReasonKeystoneUnreachable, err.Error())
		return content, nil, poll, nil
	}
	d, created, err := ensureDomain(ctx, api, b)
	if err != nil {
		r.keystoneFailed(ctx, b, fmt.Errorf("the Keystone API at %s: %w", outbound.RedactString(endpoint), err))
		return content, nil, poll, nil
	}
	reasonCreated := created || createdHere(b, d.ID)
	b.Status.DomainID = d.ID
	msg := fmt.Sprintf("domain %s exists in Keystone with ID %s", d.Name, d.ID)
	if !d.Enabled {
		msg += "; it is disabled, so its users cannot authenticate"
	}
	reason := ReasonDomainAdopted
	if reasonCreated {
		reason = ReasonDomainCreated
	}
	reconcile.MarkTrue(b, ConditionDomainReady, reason, msg)
	return content, api, ctrl.Result{}, nil
}

// endpoint returns the URL of k's API the admin password may be sent to, or "" with
// DomainReady set False and the result to return:
//
//   - a Keystone on a target cluster without an https spec.externalEndpoint:
//     ExternalEndpointRequired (its Service name would resolve on the operator's own
//     cluster, where it is not this Keystone);
//   - status.endpoint empty: the Keystone's Deployment is not available yet
//     (WaitingForKeystone). The field is read as that sign only, never as an address;
//   - a Keystone on a target cluster: spec.externalEndpoint;
//   - a Keystone on the management cluster: KeystoneURL(k); with the default
//     (names.Endpoint) only while the Service of that name is controlled by k
//     (WaitingForKeystone otherwise).
func (r *Reconciler) endpoint(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend, k *v1alpha1.Keystone,
	children client.Client) (string, ctrl.Result, error) {
	poll := ctrl.Result{RequeueAfter: r.opts.PollInterval}
	key := client.ObjectKeyFromObject(k)
	if ref := k.Spec.TargetClusterRef; ref != nil {
		ext := k.Spec.ExternalEndpoint
		u, err := url.Parse(ext)
		switch {
		case ext == "":
			reconcile.MarkFalse(b, ConditionDomainReady, ReasonExternalEndpointRequired, fmt.Sprintf(
				"Keystone %s runs on target cluster %s: set its spec.externalEndpoint to the https URL the operator reaches its API at; "+
					"the admin password is not sent to its Service URL, which resolves on the operator's own cluster", key, ref.Name))
			return "", ctrl.Result{}, nil // the Keystone's change wakes the backend
		case err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
			reconcile.MarkFalse(b, ConditionDomainReady, ReasonExternalEndpointRequired, fmt.Sprintf(
				"spec.externalEndpoint of Keystone %s is not an https URL with a host (and without user information, query or fragment): %s",
				key, outbound.RedactString(ext)))
			return "", ctrl.Result{}, nil
		}
	}
	if k.Status.Endpoint == "" {
		reconcile.MarkFalse(b, ConditionDomainReady, ReasonWaitingForKeystone,
			fmt.Sprintf("Keystone %s has no endpoint yet", key))
		return "", poll, nil
	}
	if k.Spec.TargetClusterRef != nil {
		return k.Spec.ExternalEndpoint, ctrl.Result{}, nil
	}
	endpoint := r.opts.KeystoneURL(k)
	if endpoint == "" {
		reconcile.MarkFalse(b, ConditionDomainReady, ReasonWaitingForKeystone,
			fmt.Sprintf("Keystone %s has no endpoint yet", key))
		return "", poll, nil
	}
	if r.ownService {
		svc := &corev1.Service{}
		err := children.Get(ctx, key, svc)
		switch {
		case apierrors.IsNotFound(err):
			reconcile.MarkFalse(b, ConditionDomainReady, ReasonWaitingForKeystone,
				fmt.Sprintf("Keystone %s has no Service %s yet", key, key))
			return "", poll, nil
		case err != nil:
			return "", ctrl.Result{}, fmt.Errorf("fetching Service %s of Keystone %s: %w", key, key, err)
		case !apply.IsControlled(children, k, svc):
			reconcile.MarkFalse(b, ConditionDomainReady, ReasonWaitingForKeystone, fmt.Sprintf(
				"Service %s is not controlled by Keystone %s: the admin password is sent only to the Keystone's own Service", key, key))
			return "", poll, nil
		}
	}
	return endpoint, ctrl.Result{}, nil
}

// createdHere reports whether b's status records that this controller created the
// domain with ID id.
func createdHere(b *v1alpha1.KeystoneIdentityBackend, id string) bool {
	c := meta.FindStatusCondition(b.Status.Conditions, ConditionDomainReady)
	return b.Status.DomainID == id && c != nil && c.Status == metav1.ConditionTrue && c.Reason == ReasonDomainCreated
}

// ensureDomain finds b's domain in Keystone or creates it; created reports a create. A
// create that conflicts (the domain appeared meanwhile) is looked up once more.
func ensureDomain(ctx context.Context, api *keystoneapi.Client, b *v1alpha1.KeystoneIdentityBackend) (d *keystoneapi.Domain, created bool, err error) {
	d, err = api.GetDomainByName(ctx, b.Spec.Domain)
	if !errors.Is(err, keystoneapi.ErrNotFound) {
		return d, false, err
	}
	d, err = api.CreateDomain(ctx, keystoneapi.Domain{Name: b.Spec.Domain, Description: b.Spec.Description, Enabled: true})
	if errors.Is(err, keystoneapi.ErrConflict) {
		d, err = api.GetDomainByName(ctx, b.Spec.Domain)
		return d, false, err
	}
	if err != nil {
		return nil, false, &createError{err}
	}
	return d, true, nil
}

// createError marks a failed create, so keystoneFailed tells it from a failed lookup.
type createError struct{ error }

func (e *createError) Unwrap() error { return e.error }

// keystoneFailed sets DomainReady from a failed Keystone call. An unreachable Keystone
// leaves a DomainReady that is True for this generation as it is.
func (r *Reconciler) keystoneFailed(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend, err error) {
	var ce *createError
	switch {
	case errors.Is(err, keystoneapi.ErrUnauthorized):
		reconcile.MarkFalse(b, ConditionDomainReady, ReasonAdminCredentialsRejected, err.Error())
	case errors.As(err, &ce) && !errors.Is(err, keystoneapi.ErrUnavailable) && !errors.Is(err, keystoneapi.ErrUnexpectedResponse):
		reconcile.MarkFalse(b, ConditionDomainReady, ReasonDomainCreateFailed, err.Error())
	case b.Status.DomainID != "" && domainReady(b):
		log.FromContext(ctx).Info("Keystone API unreachable; the domain stays ready", "error", err.Error())
	default:
		reconcile.MarkFalse(b, ConditionDomainReady, ReasonKeystoneUnreachable, err.Error())
	}
}

// observe sets ConfigProjected from the Keystone's Deployment: the file is in the
// Secret its domains volume mounts (satellite.SectionProjected), holds what this
// generation renders, the identity providers of spec.federation are in the Secret its
// federation volume mounts (federationProjected), and the rollout has finished.
// attached are the Keystone's backends not being deleted, b among them
// (attachedBackends), and openID their OpenID Connect holder, both read once by the
// pass.
func (r *Reconciler) observe(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend, k *v1alpha1.Keystone, children client.Client,
	content string, attached []*v1alpha1.KeystoneIdentityBackend, openID openIDSlot) (ctrl.Result, error) {
	poll := ctrl.Result{RequeueAfter: r.opts.PollInterval}
	holders, _ := domainHolders(attached)
	if h := holders[b.Spec.Domain]; h != nil && h.Name != b.Name {
		r.notProjected(b, ReasonDomainConflict, fmt.Sprintf(
			"KeystoneIdentityBackend %s, older, names the domain %s too and keeps it; rename this backend's domain or delete one of them",
			h.Name, b.Spec.Domain))
		return poll, nil
	}

	file := settings.DomainConfigFileName(b.Spec.Domain)
	deployKey := client.ObjectKey{Namespace: k.Namespace, Name: k.Name}
	projected, err := satellite.SectionProjected(ctx, satellite.ObserveParams{
		Children: children, DeploymentKey: deployKey, VolumeName: DomainsVolumeName, DataKey: file,
	})
	if err != nil {
		return ctrl.Result{}, err
	}
	if !projected {
		r.notProjected(b, ReasonNotProjected, fmt.Sprintf("Deployment %s does not mount %s yet", deployKey, file))
		return poll, nil
	}
	var d appsv1.Deployment
	err = children.Get(ctx, deployKey, &d)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("fetching Deployment %s: %w", deployKey, err)
	}
	secretKey := client.ObjectKey{Namespace: deployKey.Namespace, Name: satellite.SecretNameForVolume(&d.Spec.Template.Spec, DomainsVolumeName)}
	var s corev1.Secret
	if err == nil && secretKey.Name != "" {
		err = children.Get(ctx, secretKey, &s)
	}
	if err != nil || secretKey.Name == "" {
		// Gone since SectionProjected read it: the Deployment was replaced meanwhile.
		if err == nil || apierrors.IsNotFound(err) {
			r.notProjected(b, ReasonNotProjected, fmt.Sprintf("Deployment %s does not mount %s yet", deployKey, file))
			return poll, nil
		}
		return ctrl.Result{}, fmt.Errorf("fetching domains Secret %s: %w", secretKey, err)
	}
	if string(s.Data[file]) != content {
		r.notProjected(b, ReasonNotProjected, fmt.Sprintf(
			"Secret %s mounted by Deployment %s holds an older %s; waiting for the Keystone to project this generation",
			secretKey, deployKey, file))
		return poll, nil
	}
	why, err := r.federationProjected(ctx, b, k, &d, children, openID)
	if err != nil {
		return ctrl.Result{}, err
	}
	if why != "" {
		r.notProjected(b, ReasonNotProjected, why)
		return poll, nil
	}
	what := file + " from Secret " + secretKey.String()
	if b.Spec.Federation != nil {
		what += " and its identity providers from Secret " +
			satellite.SecretNameForVolume(&d.Spec.Template.Spec, FederationVolumeName)
	}
	if why := rolloutPending(&d); why != "" {
		r.notProjected(b, ReasonWaitingForRollout, fmt.Sprintf("%s is in the pod template, but Deployment %s %s", what, deployKey, why))
		return poll, nil
	}
	reconcile.MarkTrue(b, ConditionConfigProjected, ReasonProjected,
		fmt.Sprintf("every pod of Deployment %s runs with %s", deployKey, what))
	return ctrl.Result{}, nil
}

// notProjected sets ConfigProjected False.
func (r *Reconciler) notProjected(b *v1alpha1.KeystoneIdentityBackend, reason, msg string) {
	reconcile.MarkFalse(b, ConditionConfigProjected, reason, msg)
}

// rolloutPending says why d's rollout has not finished, or "": its status describes an
// older generation, fewer replicas than desired run the current template or are
// available, or pods of an older template remain.
func rolloutPending(d *appsv1.Deployment) string {
	desired := int32(1)
	if d.Spec.Replicas != nil {
		desired = *d.Spec.Replicas
	}
	st := d.Status
	switch {
	case st.ObservedGeneration < d.Generation:
		return fmt.Sprintf("has not observed generation %d yet", d.Generation)
	case st.UpdatedReplicas < desired:
		return fmt.Sprintf("has updated %d of %d replicas", st.UpdatedReplicas, desired)
	case st.AvailableReplicas < desired:
		return fmt.Sprintf("has %d of %d replicas available", st.AvailableReplicas, desired)
	case st.Replicas > st.UpdatedReplicas:
		return fmt.Sprintf("still runs %d replicas of an older template", st.Replicas-st.UpdatedReplicas)
	}
	return ""
}

// keystoneAdminUser is the Keystone's admin user name; the CRD defaults it to admin.
func keystoneAdminUser(k *v1alpha1.Keystone) string {
	if k.Spec.Bootstrap.AdminUser != "" {
		return k.Spec.Bootstrap.AdminUser
	}
	return "admin"
}
