package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/horizon/settings"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// ProviderChoice is one login choice a KeystoneIdentityBackend's identity provider adds
// to the login page.
type ProviderChoice struct {
	// Choice is the WEBSSO_CHOICES entry: the id <provider id>_<protocol> and the
	// provider's description as label, its id when the description is empty.
	Choice settings.Choice
	// Mapping is the WEBSSO_IDP_MAPPING entry of Choice.ID: the provider and protocol.
	Mapping settings.IDPMapping
	// Backend is the name of the KeystoneIdentityBackend that declares the provider.
	Backend string
}

// WebSSOProviders is what the identity backends of spec.websso.identityBackends add to
// the login page, as [ProviderChoices] derives it.
type WebSSOProviders struct {
	// Choices are the choices the registered providers add, in the order of
	// spec.websso.identityBackends and then of each backend's providers, without those
	// whose id is taken (Conflicts).
	Choices []ProviderChoice
	// Waiting says, per backend that contributes less than it declares, why: it does
	// not exist, declares no federation, or has not registered some providers yet. One
	// entry a backend, in the order of spec.websso.identityBackends.
	Waiting []string
	// Conflicts says, per provider choice left out, which choice already has its id: a
	// hand-written one of spec.websso.choices (which wins) or one of an earlier backend.
	Conflicts []string
	// Invalid says, per backend that adds no choice because a field ProviderChoices
	// reads has another type than the Keystone API declares, which field and which
	// type. One entry a backend, in the order of spec.websso.identityBackends.
	Invalid []string
}

// ProviderChoices derives the login choices of the backends websso names
// (spec.websso.identityBackends). backends holds the KeystoneIdentityBackends that were
// read, by name, as unstructured objects (their content is decoded as identityBackend
// describes: only the providers' ids, descriptions and protocols of spec.federation and
// status.identityProviders are read); a name websso lists and backends lacks is a
// backend that does not exist. A backend whose read fields have another type than the
// Keystone API declares adds no choice and is reported in Invalid. A provider of a
// backend's spec.federation becomes a choice once the backend's
// status.identityProviders records it with the protocol spec.federation declares (the
// Keystone controller writes the protocol last, once the provider, its mapping and its
// protocol exist in Keystone). The choice's id is <provider id>_<protocol>; an id equal
// to a hand-written choice's (websso.choices) or to an earlier provider choice's is left
// out and reported in Conflicts. A nil websso, or one that is not enabled, derives
// nothing. ProviderChoices reads only its arguments and shares no memory with them.
func ProviderChoices(websso *v1alpha1.WebSSOSpec, backends map[string]*unstructured.Unstructured) WebSSOProviders {
	var out WebSSOProviders
	if websso == nil || !websso.Enabled {
		return out
	}
	taken := map[string]string{}
	for i, c := range websso.Choices {
		taken[c.ID] = fmt.Sprintf("spec.websso.choices[%d]", i)
	}
	for i, ref := range websso.IdentityBackends {
		field := fmt.Sprintf("spec.websso.identityBackends[%d]", i)
		u, ok := backends[ref.Name]
		if !ok || u == nil {
			out.Waiting = append(out.Waiting, fmt.Sprintf("KeystoneIdentityBackend %s (%s) does not exist", ref.Name, field))
			continue
		}
		b, err := decodeIdentityBackend(u.Object)
		switch {
		case err != nil:
			out.Invalid = append(out.Invalid, fmt.Sprintf("KeystoneIdentityBackend %s (%s) adds no choice: its %v", ref.Name, field, err))
			continue
		case !b.federated || len(b.providers) == 0:
			out.Waiting = append(out.Waiting, fmt.Sprintf("KeystoneIdentityBackend %s (%s) declares no identity provider in spec.federation", ref.Name, field))
			continue
		}
		var pending []string
		for _, idp := range b.providers {
			if !b.isRegistered(idp) {
				pending = append(pending, idp.id+" ("+idp.protocol+")")
				continue
			}
			id := idp.id + "_" + idp.protocol
			if by, dup := taken[id]; dup {
				out.Conflicts = append(out.Conflicts, fmt.Sprintf("identity provider %s of KeystoneIdentityBackend %s (%s) is left out: its choice id %s is already the id of %s",
					idp.id, ref.Name, field, id, by))
				continue
			}
			taken[id] = fmt.Sprintf("identity provider %s of KeystoneIdentityBackend %s", idp.id, ref.Name)
			label := idp.description
			if label == "" {
				label = idp.id
			}
			out.Choices = append(out.Choices, ProviderChoice{
				Choice:  settings.Choice{ID: id, Label: label},
				Mapping: settings.IDPMapping{IDP: idp.id, Protocol: idp.protocol},
				Backend: ref.Name,
			})
		}
		if len(pending) > 0 {
			out.Waiting = append(out.Waiting, fmt.Sprintf("KeystoneIdentityBackend %s (%s) has not registered identity providers %s in Keystone yet",
				ref.Name, field, strings.Join(pending, ", ")))
		}
	}
	return out
}

// isRegistered reports whether b's status.identityProviders records idp with the
// protocol its spec declares.
func (b identityBackend) isRegistered(idp identityProvider) bool {
	for _, st := range b.registered {
		if st.id == idp.id {
			return st.protocol == idp.protocol
		}
	}
	return false
}

// Apply adds p's choices to s: after s.WebSSO.Choices, each with its WEBSSO_IDP_MAPPING
// entry. It changes nothing when s has no enabled WebSSO block or p has no choices, and
// never replaces an entry s already holds.
func (p WebSSOProviders) Apply(s *settings.Settings) {
	if s.WebSSO == nil || !s.WebSSO.Enabled || len(p.Choices) == 0 {
		return
	}
	if s.WebSSO.IDPMapping == nil {
		s.WebSSO.IDPMapping = make(map[string]settings.IDPMapping, len(p.Choices))
	}
	ids := make(map[string]bool, len(s.WebSSO.Choices))
	for _, c := range s.WebSSO.Choices {
		ids[c.ID] = true
	}
	for _, c := range p.Choices {
		if _, ok := s.WebSSO.IDPMapping[c.Choice.ID]; ok || ids[c.Choice.ID] {
			continue
		}
		ids[c.Choice.ID] = true
		s.WebSSO.Choices = append(s.WebSSO.Choices, c.Choice)
		s.WebSSO.IDPMapping[c.Choice.ID] = c.Mapping
	}
}

// reconcileWebSSO is the WebSSO row: it reads the KeystoneIdentityBackends that
// spec.websso.identityBackends names, in the Horizon's namespace and on the management
// cluster (where the Horizon is), as unstructured objects, and hands the choices of
// their registered identity providers to the Config row. A backend that is missing,
// not registered yet, or whose read fields have another type than the Keystone API
// declares is reported, never an error: the settings render without its choices, and
// the backend watch brings the Horizon back when it changes.
func (r *Reconciler) reconcileWebSSO(ctx context.Context, h *v1alpha1.Horizon) (reconcile.Outcome, error) {
	w := h.Spec.WebSSO
	switch {
	case w == nil || !w.Enabled:
		return reconcile.Done(reconcile.TrueCondition(ConditionWebSSOReady, ReasonIdentityBackendsNotRequired,
			"websso is not enabled: no identity backend is read")), nil
	case len(w.IdentityBackends) == 0:
		return reconcile.Done(reconcile.TrueCondition(ConditionWebSSOReady, ReasonIdentityBackendsNotRequired,
			"spec.websso.identityBackends names no identity backend")), nil
	}
	reader := r.management
	if reader == nil {
		reader = r.TargetOf(ctx).Client
	}
	backends := make(map[string]*unstructured.Unstructured, len(w.IdentityBackends))
	for i, ref := range w.IdentityBackends {
		b := newIdentityBackend()
		err := reader.Get(ctx, client.ObjectKey{Namespace: h.Namespace, Name: ref.Name}, b)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case meta.IsNoMatchError(err):
			return reconcile.Done(reconcile.FalseCondition(ConditionWebSSOReady, ReasonIdentityBackendsNotInstalled,
				"the management cluster does not serve KeystoneIdentityBackends ("+identityBackendGVK.GroupVersion().String()+
					"): spec.websso.identityBackends add no choice; install the Keystone operator's CRDs and restart the Horizon operator")), nil
		case err != nil:
			msg := fmt.Sprintf("reading KeystoneIdentityBackend %s/%s (spec.websso.identityBackends[%d]): %v", h.Namespace, ref.Name, i, err)
			return reconcile.Done(reconcile.FalseCondition(ConditionWebSSOReady, ReasonIdentityBackendError, msg)),
				fmt.Errorf("reading KeystoneIdentityBackend %s/%s of Horizon %s/%s (spec.websso.identityBackends[%d]): %w",
					h.Namespace, ref.Name, h.Namespace, h.Name, i, err)
		}
		backends[ref.Name] = b
	}
	p := ProviderChoices(w, backends)
	reconcile.StateFrom[passState](ctx).websso = p
	offered := make([]string, 0, len(p.Choices))
	for _, c := range p.Choices {
		offered = append(offered, c.Choice.ID)
	}
	summary := "no identity provider choice"
	if len(offered) > 0 {
		summary = "identity provider choices " + strings.Join(offered, ", ")
	}
	switch {
	case len(p.Invalid) > 0:
		return reconcile.Done(reconcile.FalseCondition(ConditionWebSSOReady, ReasonIdentityBackendInvalid,
			strings.Join(slices.Concat(p.Invalid, p.Conflicts, p.Waiting), "; ")+"; the login page offers "+summary)), nil
	case len(p.Conflicts) > 0:
		return reconcile.Done(reconcile.FalseCondition(ConditionWebSSOReady, ReasonWebSSOChoiceConflict,
			strings.Join(append(p.Conflicts, p.Waiting...), "; ")+"; the login page offers "+summary)), nil
	case len(p.Waiting) > 0:
		return reconcile.Done(reconcile.FalseCondition(ConditionWebSSOReady, ReasonWaitingForIdentityBackend,
			strings.Join(p.Waiting, "; ")+"; the login page offers "+summary+" until then")), nil
	}
	return reconcile.Done(reconcile.TrueCondition(ConditionWebSSOReady, ReasonIdentityProvidersOffered,
		"the login page offers "+summary)), nil
}
