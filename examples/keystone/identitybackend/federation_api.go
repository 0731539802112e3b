package identitybackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// The controller removes the federation objects it created when a backend is deleted,
// so it writes the backend's finalizer and records events.
//
// +kubebuilder:rbac:groups=keystone.openstack.c5c3.io,resources=keystoneidentitybackends,verbs=patch;update
// +kubebuilder:rbac:groups=keystone.openstack.c5c3.io,resources=keystoneidentitybackends/finalizers,verbs=update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ConditionFederationReady reports that the identity providers of spec.federation are
// registered in Keystone: each provider in the backend's domain with the remote ids and
// description spec.federation gives it, its mapping holding the rules given there and
// its protocol applying that mapping. It is one of the conditions Ready aggregates.
const ConditionFederationReady = "FederationReady"

// The reasons of FederationReady, besides ReasonWaitingForKeystone (False: DomainReady
// is not True, so the domain the providers belong to is not known to exist),
// ReasonKeystoneUnreachable (False: a federation call got no answer, a 5xx one or one
// that is not Keystone's; once FederationReady is True for the current generation an
// unreachable API leaves it True) and ReasonAdminCredentialsRejected (False: Keystone
// answered 401).
const (
	// ReasonNoIdentityProviders (FederationReady True): the backend declares no
	// spec.federation and keeps nothing registered in Keystone.
	ReasonNoIdentityProviders = "NoIdentityProviders"
	// ReasonIdentityProvidersRegistered (FederationReady True): every identity
	// provider of spec.federation, its mapping and protocol exist in Keystone as the
	// spec declares them.
	ReasonIdentityProvidersRegistered = "IdentityProvidersRegistered"
	// ReasonFederationInvalid (FederationReady False): spec.federation holds what
	// Keystone would refuse (ValidateFederation, which the admission webhook also
	// runs); nothing is sent to Keystone until the backend changes.
	ReasonFederationInvalid = "FederationInvalid"
	// ReasonWaitingForFederationSecret (FederationReady False): a document a provider
	// needs is missing or unusable: the client secret of an OpenID Connect provider,
	// the IdP metadata or the service provider's key pair of a SAML provider. The
	// provider is registered in Keystone once the web server can serve it, as the
	// IdentityBackends row renders it only then; the others are registered meanwhile.
	ReasonWaitingForFederationSecret = "WaitingForFederationSecret"
	// ReasonFederationRejected (FederationReady False): Keystone refused a federation
	// call (400, 403, 404, 409: a remote id another provider holds, mapping rules
	// outside its schema, a provider of that id in another domain, ...); the message
	// names the provider and the call and carries Keystone's message.
	ReasonFederationRejected = "FederationRejected"
	// ReasonTooManyOpenIDProviders (FederationReady False): the backend declares an
	// OpenID Connect provider while another one is the Keystone's: the first provider
	// of protocol openid of the oldest backend of the Keystone (by creation, then name)
	// declaring one, or an earlier provider of this backend (admitted before the
	// admission webhook refused a second one). A Keystone serves at most one, as
	// mod_auth_openidc reads one relying party per virtual host. The message names the
	// provider, its field (spec.federation.identityProviders[i]) and the backend and
	// provider holding the place. Nothing is rendered or registered in Keystone for the
	// extra provider (what an earlier generation registered stays); the backend's other
	// providers, and the Keystone's OpenID Connect provider, are served as before.
	ReasonTooManyOpenIDProviders = "TooManyOpenIDProviders"
)

// The event reasons of the federation cleanup, recorded on the backend.
const (
	// EventFederationRemoved (Normal): the objects the controller created in Keystone
	// for the backend's identity providers were deleted with the backend.
	EventFederationRemoved = "FederationRemoved"
	// EventFederationRemovalAbandoned (Warning): Keystone could not be reached, or
	// refused the deletes, for Options.FederationGiveUpAfter after the backend's
	// deletion started; the backend was let go and the named objects remain in
	// Keystone.
	EventFederationRemovalAbandoned = "FederationRemovalAbandoned"
)

// FederationFinalizer is the finalizer a backend carries while Keystone may hold
// federation objects the controller created for it.
const FederationFinalizer = "keystone.openstack.c5c3.io/federation"

// DefaultFederationGiveUpAfter bounds how long a deleted backend waits for Keystone
// to delete its federation objects when Options.FederationGiveUpAfter is zero:
// multicluster.DefaultGiveUpAfter, 10 minutes.
const DefaultFederationGiveUpAfter = multicluster.DefaultGiveUpAfter

// mappingID is the id of the mapping of identity provider idp.
func mappingID(idp string) string { return idp + "-mapping" }

// federationError is a refused federation call of one provider.
type federationError struct {
	provider string
	err      error
}

func (e *federationError) Error() string {
	return fmt.Sprintf("identity provider %s: %v", e.provider, e.err)
}
func (e *federationError) Unwrap() error { return e.err }

// errWrongDomain is wrapped by the error about a provider Keystone holds in another
// domain.
var errWrongDomain = errors.New("in another domain")

// federate sets FederationReady from the pass's Keystone API client (nil when
// DomainReady was not made True this pass) and registers the providers of
// spec.federation in Keystone through it: it creates or adopts each provider, its
// mapping and protocol, updates what differs from the spec, and deletes what it created
// for providers that left the spec. An OpenID Connect provider other than the
// Keystone's one (openID, the pass's openIDHolder of the attached backends; consulted
// only with a non-nil api) is not registered: FederationReady False,
// ReasonTooManyOpenIDProviders. It returns the result to merge into the pass's.
func (r *Reconciler) federate(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend, api *keystoneapi.Client, openID openIDSlot) (ctrl.Result, error) {
	poll := ctrl.Result{RequeueAfter: r.opts.PollInterval}
	f := b.Spec.Federation
	if f == nil && len(b.Status.IdentityProviders) == 0 {
		reconcile.MarkTrue(b, ConditionFederationReady, ReasonNoIdentityProviders, "spec.federation declares no identity provider")
		_, err := reconcile.RemoveFinalizer(ctx, r.client, b, FederationFinalizer)
		return ctrl.Result{}, err
	}
	if errs := validateFederation(b, false); len(errs) > 0 {
		reconcile.MarkFalse(b, ConditionFederationReady, ReasonFederationInvalid, errs.ToAggregate().Error())
		return ctrl.Result{}, nil // waits for the backend to change
	}
	if api == nil {
		switch {
		case !meta.IsStatusConditionTrue(b.Status.Conditions, ConditionDomainReady):
			reconcile.MarkFalse(b, ConditionFederationReady, ReasonWaitingForKeystone,
				"the identity providers are registered once DomainReady is True: they belong to the backend's domain")
		case !federationReady(b):
			// DomainReady stayed True over a Keystone API that did not answer this pass.
			reconcile.MarkFalse(b, ConditionFederationReady, ReasonKeystoneUnreachable,
				"the Keystone API did not answer this pass's domain lookup; the identity providers are registered once it does")
		}
		return poll, nil // a FederationReady True for this generation stays, as DomainReady does
	}
	var specs []v1alpha1.IdentityProviderSpec
	if f != nil {
		specs = f.IdentityProviders
	}
	// Providers that left the spec: delete what was created for them.
	for _, st := range slices.Clone(b.Status.IdentityProviders) {
		if slices.ContainsFunc(specs, func(s v1alpha1.IdentityProviderSpec) bool { return s.ID == st.ID }) {
			continue
		}
		if err := r.removeProvider(ctx, b, api, st.ID); err != nil {
			r.federationFailed(ctx, b, &federationError{st.ID, err})
			return poll, nil
		}
	}
	if len(specs) == 0 {
		reconcile.MarkTrue(b, ConditionFederationReady, ReasonNoIdentityProviders, "spec.federation declares no identity provider")
		_, err := reconcile.RemoveFinalizer(ctx, r.client, b, FederationFinalizer)
		return ctrl.Result{}, err
	}
	// The finalizer goes on before the first object is created.
	if _, err := reconcile.AddFinalizer(ctx, r.client, b, FederationFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	refused := openIDRefusals(b, specs, openID)
	var waiting []string
	for i := range specs {
		idp := &specs[i]
		if openID.refusal(b, idp) != "" {
			continue // neither rendered nor registered: refused below
		}
		_, why, err := readProviderDocuments(ctx, r.client, b, idp)
		if err != nil {
			return ctrl.Result{}, err
		}
		if why != "" {
			waiting = append(waiting, fmt.Sprintf("identity provider %s: %s", idp.ID, why))
			continue
		}
		if err := r.ensureProvider(ctx, b, api, idp); err != nil {
			r.federationFailed(ctx, b, &federationError{idp.ID, err})
			return poll, nil
		}
	}
	if len(refused) > 0 {
		msg := strings.Join(refused, "; ") + "; remove it from spec.federation"
		if len(waiting) > 0 {
			msg += "; " + strings.Join(waiting, "; ")
		}
		reconcile.MarkFalse(b, ConditionFederationReady, ReasonTooManyOpenIDProviders, msg)
		return poll, nil // the holder's backend may go: its events do not wake this one
	}
	if len(waiting) > 0 {
		reconcile.MarkFalse(b, ConditionFederationReady, ReasonWaitingForFederationSecret,
			strings.Join(waiting, "; ")+"; registered in Keystone once its documents exist")
		return poll, nil
	}
	ids := make([]string, 0, len(specs))
	for _, s := range specs {
		ids = append(ids, s.ID+" ("+s.Protocol+")")
	}
	reconcile.MarkTrue(b, ConditionFederationReady, ReasonIdentityProvidersRegistered,
		fmt.Sprintf("identity providers %s are registered in Keystone in domain %s", strings.Join(ids, ", "), b.Spec.Domain))
	return ctrl.Result{}, nil
}

// federationReady reports whether FederationReady is True for b's generation.
func federationReady(b *v1alpha1.KeystoneIdentityBackend) bool {
	c := meta.FindStatusCondition(b.Status.Conditions, ConditionFederationReady)
	return c != nil && c.Status == "True" && c.ObservedGeneration == b.Generation
}

// federationFailed sets FederationReady from a failed federation call. An unreachable
// Keystone leaves a FederationReady that is True for this generation as it is.
func (r *Reconciler) federationFailed(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend, err error) {
	switch {
	case errors.Is(err, keystoneapi.ErrUnauthorized):
		reconcile.MarkFalse(b, ConditionFederationReady, ReasonAdminCredentialsRejected, err.Error())
	case errors.Is(err, keystoneapi.ErrUnavailable) || errors.Is(err, keystoneapi.ErrUnexpectedResponse):
		if federationReady(b) {
			log.FromContext(ctx).Info("Keystone API unreachable; the identity providers stay registered", "error", err.Error())
			return
		}
		reconcile.MarkFalse(b, ConditionFederationReady, ReasonKeystoneUnreachable, err.Error())
	default:
		reconcile.MarkFalse(b, ConditionFederationReady, ReasonFederationRejected, err.Error())
	}
}

// providerStatus returns the status entry of provider id, adding an empty one.
func providerStatus(b *v1alpha1.KeystoneIdentityBackend, id string) *v1alpha1.IdentityProviderStatus {
	i := slices.IndexFunc(b.Status.IdentityProviders, func(s v1alpha1.IdentityProviderStatus) bool { return s.ID == id })
	if i < 0 {
		b.Status.IdentityProviders = append(b.Status.IdentityProviders, v1alpha1.IdentityProviderStatus{ID: id})
		i = len(b.Status.IdentityProviders) - 1
	}
	return &b.Status.IdentityProviders[i]
}

// ensureProvider makes Keystone hold idp as spec declares it: the provider in b's
// domain, its mapping, its protocol. What it creates is recorded in b's status as it
// goes, so a failure further on leaves the record of what exists; an object it finds
// that b's status does not record as created counts as adopted. A pass that read b from
// a cache lagging behind the pass that created the object does not replace the stored
// record: the stored status.identityProviders differs from what this pass read, so
// reconcile.RunPass keeps it and runs the pass again.
func (r *Reconciler) ensureProvider(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend, api *keystoneapi.Client, idp *v1alpha1.IdentityProviderSpec) error {
	want := keystoneapi.IdentityProvider{ID: idp.ID, DomainID: b.Status.DomainID, Description: idp.Description,
		RemoteIDs: sortedRemoteIDs(idp.RemoteIDs), Enabled: true}
	got, err := api.GetIdentityProvider(ctx, idp.ID)
	if errors.Is(err, keystoneapi.ErrNotFound) {
		got, err = api.CreateIdentityProvider(ctx, want)
		if err == nil {
			providerStatus(b, idp.ID).CreatedProvider = true
		} else if errors.Is(err, keystoneapi.ErrConflict) && !strings.Contains(err.Error(), "remote ID") {
			got, err = api.GetIdentityProvider(ctx, idp.ID) // created meanwhile: adopt it
		}
	}
	if err != nil {
		return err
	}
	if got.DomainID != want.DomainID {
		return fmt.Errorf("%w: Keystone holds it in domain %s, not in domain %s (ID %s) of this backend, and does not move a provider to another domain; delete it there or give this one another id",
			errWrongDomain, got.DomainID, b.Spec.Domain, want.DomainID)
	}
	if got.Description != want.Description || !got.Enabled || !slices.Equal(sortedRemoteIDs(got.RemoteIDs), want.RemoteIDs) {
		if _, err := api.UpdateIdentityProvider(ctx, want); err != nil {
			return err
		}
	}

	rules, err := json.Marshal(idp.Mapping)
	if err != nil {
		return fmt.Errorf("encoding the mapping rules: %w", err)
	}
	st := providerStatus(b, idp.ID)
	mid := mappingID(idp.ID)
	st.MappingID = mid
	m, err := api.GetMapping(ctx, mid)
	switch {
	case errors.Is(err, keystoneapi.ErrNotFound):
		if _, err := api.CreateMapping(ctx, keystoneapi.Mapping{ID: mid, Rules: rules}); err != nil {
			return err
		}
		providerStatus(b, idp.ID).CreatedMapping = true
	case err != nil:
		return err
	default:
		if !sameJSON(m.Rules, rules) {
			if _, err := api.UpdateMapping(ctx, keystoneapi.Mapping{ID: mid, Rules: rules}); err != nil {
				return err
			}
		}
	}

	st = providerStatus(b, idp.ID)
	if st.Protocol != "" && st.Protocol != idp.Protocol {
		// The provider changed its protocol: the old one goes if it was created here.
		if st.CreatedProtocol {
			if err := api.DeleteProtocol(ctx, idp.ID, st.Protocol); err != nil && !errors.Is(err, keystoneapi.ErrNotFound) {
				return err
			}
		}
		st.Protocol, st.CreatedProtocol = "", false
	}
	p, err := api.GetProtocol(ctx, idp.ID, idp.Protocol)
	switch {
	case errors.Is(err, keystoneapi.ErrNotFound):
		if _, err := api.CreateProtocol(ctx, idp.ID, keystoneapi.Protocol{ID: idp.Protocol, MappingID: mid}); err != nil {
			return err
		}
		st = providerStatus(b, idp.ID)
		st.CreatedProtocol = true
	case err != nil:
		return err
	default:
		if p.MappingID != mid {
			if _, err := api.UpdateProtocol(ctx, idp.ID, keystoneapi.Protocol{ID: idp.Protocol, MappingID: mid}); err != nil {
				return err
			}
		}
	}
	providerStatus(b, idp.ID).Protocol = idp.Protocol
	return nil
}

// removeProvider deletes from Keystone what b's status records as created for
// provider id (its protocol, mapping and the provider itself; one already gone counts
// as deleted) and drops the entry once nothing created is left.
func (r *Reconciler) removeProvider(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend, api *keystoneapi.Client, id string) error {
	st := providerStatus(b, id)
	gone := func(err error) bool { return err == nil || errors.Is(err, keystoneapi.ErrNotFound) }
	if st.CreatedProtocol && st.Protocol != "" {
		if err := api.DeleteProtocol(ctx, id, st.Protocol); !gone(err) {
			return err
		}
	}
	st.CreatedProtocol = false
	if st.CreatedMapping && st.MappingID != "" {
		if err := api.DeleteMapping(ctx, st.MappingID); !gone(err) {
			return err
		}
	}
	st.CreatedMapping = false
	if st.CreatedProvider {
		if err := api.DeleteIdentityProvider(ctx, id); !gone(err) {
			return err
		}
	}
	b.Status.IdentityProviders = slices.DeleteFunc(b.Status.IdentityProviders,
		func(s v1alpha1.IdentityProviderStatus) bool { return s.ID == id })
	return nil
}

// finalizeFederation runs on a backend being deleted that carries FederationFinalizer:
// it deletes the federation objects its status records as created, then removes the
// finalizer. While the Keystone's API cannot be reached or refuses, FederationReady says
// so (KeystoneUnreachable, AdminCredentialsRejected or FederationRejected, the message
// starting with "deleting:") and the pass requeues; once FederationGiveUpAfter has passed since the deletion
// started it records a Warning event (EventFederationRemovalAbandoned) naming what
// remains and removes the finalizer. A Keystone that no longer exists takes its
// objects with it: the finalizer is removed at once.
func (r *Reconciler) finalizeFederation(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend) (ctrl.Result, error) {
	if !slices.Contains(b.GetFinalizers(), FederationFinalizer) {
		return ctrl.Result{}, nil
	}
	giveUpAt := b.DeletionTimestamp.Add(r.federationGiveUpAfter())
	api, why, err := r.deletionClient(ctx, b)
	if err != nil {
		return ctrl.Result{}, err
	}
	if why == "" && api == nil {
		// The Keystone is gone, and with it its federation objects.
		b.Status.IdentityProviders = nil
		_, err := reconcile.RemoveFinalizer(ctx, r.client, b, FederationFinalizer)
		return ctrl.Result{}, err
	}
	reason := ReasonKeystoneUnreachable
	if api != nil {
		for _, st := range slices.Clone(b.Status.IdentityProviders) {
			if err := r.removeProvider(ctx, b, api, st.ID); err != nil {
				why = (&federationError{st.ID, err}).Error()
				switch {
				case errors.Is(err, keystoneapi.ErrUnauthorized):
					reason = ReasonAdminCredentialsRejected
				case !errors.Is(err, keystoneapi.ErrUnavailable) && !errors.Is(err, keystoneapi.ErrUnexpectedResponse):
					reason = ReasonFederationRejected
				}
				break
			}
		}
	}
	if why == "" {
		r.event(b, corev1.EventTypeNormal, EventFederationRemoved, "deleted the identity providers, mappings and protocols created for the backend")
		_, err := reconcile.RemoveFinalizer(ctx, r.client, b, FederationFinalizer)
		return ctrl.Result{}, err
	}
	if !time.Now().Before(giveUpAt) {
		var left []string
		for _, st := range b.Status.IdentityProviders {
			left = append(left, st.ID)
		}
		r.event(b, corev1.EventTypeWarning, EventFederationRemovalAbandoned,
			"gave up deleting the federation objects of identity providers %s in Keystone after %s: %s; they remain there",
			strings.Join(left, ", "), r.federationGiveUpAfter(), why)
		_, err := reconcile.RemoveFinalizer(ctx, r.client, b, FederationFinalizer)
		return ctrl.Result{}, err
	}
	reconcile.MarkFalse(b, ConditionFederationReady, reason,
		fmt.Sprintf("deleting: the identity providers' objects are not deleted from Keystone yet: %s; giving up at %s",
			why, giveUpAt.UTC().Format(time.RFC3339)))
	return ctrl.Result{RequeueAfter: min(r.opts.PollInterval, max(time.Until(giveUpAt), time.Second))}, nil
}

// deletionClient returns the Keystone API client a deleted backend's cleanup calls
// through. It returns why in words when the API cannot be called yet (no endpoint, no
// admin password), and nil with no why when the Keystone no longer exists.
func (r *Reconciler) deletionClient(ctx context.Context, b *v1alpha1.KeystoneIdentityBackend) (*keystoneapi.Client, string, error) {
	k := &v1alpha1.Keystone{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: b.Namespace, Name: b.Spec.KeystoneRef.Name}, k)
	switch {
	case apierrors.IsNotFound(err):
		return nil, "", nil
	case err != nil:
		return nil, "", fmt.Errorf("fetching Keystone %s/%s: %w", b.Namespace, b.Spec.KeystoneRef.Name, err)
	}
	target, err := r.resolver.Resolve(multicluster.WithNamespace(ctx, b.Namespace), k.Spec.TargetClusterRef)
	if err != nil {
		return nil, err.Error(), nil
	}
	endpoint, _, err := r.endpoint(ctx, b, k, target.Client)
	if err != nil {
		return nil, "", err
	}
	if endpoint == "" {
		why := "the Keystone has no endpoint"
		if c := meta.FindStatusCondition(b.Status.Conditions, ConditionDomainReady); c != nil {
			why = c.Message
		}
		return nil, why, nil
	}
	adminKey := client.ObjectKey{Namespace: k.Namespace, Name: names.AdminPasswordSecretName(k)}
	adminPassword, err := secrets.GetSecretValue(ctx, target.Client, adminKey, r.opts.AdminPasswordKey)
	switch {
	case apierrors.IsNotFound(err) || errors.Is(err, secrets.ErrKeyNotFound) || (err == nil && adminPassword == ""):
		return nil, fmt.Sprintf("Secret %s holds no %q", adminKey, r.opts.AdminPasswordKey), nil
	case err != nil:
		return nil, "", err
	}
	api, err := keystoneapi.New(endpoint, keystoneapi.Credentials{
		Username: keystoneAdminUser(k), Password: adminPassword, ProjectName: "admin",
	}, keystoneapi.Options{Policy: r.opts.OutboundPolicy, Transport: r.opts.Transport})
	if err != nil {
		return nil, fmt.Sprintf("the Keystone API at %s: %v", outbound.RedactString(endpoint), err), nil
	}
	return api, "", nil
}

// federationGiveUpAfter is Options.FederationGiveUpAfter or its default.
func (r *Reconciler) federationGiveUpAfter() time.Duration {
	if r.opts.FederationGiveUpAfter > 0 {
		return r.opts.FederationGiveUpAfter
	}
	return DefaultFederationGiveUpAfter
}

// event records an event on b when the options name a recorder.
func (r *Reconciler) event(b *v1alpha1.KeystoneIdentityBackend, eventType, reason, note string, args ...any) {
	if r.opts.Recorder != nil {
		r.opts.Recorder.Eventf(b, nil, eventType, reason, "Delete", note, args...)
	}
}

// sortedRemoteIDs returns a sorted copy of ids, never nil.
func sortedRemoteIDs(ids []string) []string {
	out := append([]string{}, ids...)
	slices.Sort(out)
	return out
}

// sameJSON reports whether a and b hold the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// earlier merges two pass results: the sooner requeue wins.
func earlier(a, b ctrl.Result) ctrl.Result {
	switch {
	case a.RequeueAfter == 0:
		return b
	case b.RequeueAfter == 0:
		return a
	case b.RequeueAfter < a.RequeueAfter:
		return b
	}
	return a
}
