package identitybackend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/satellite"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// ConditionIdentityBackendsReady is the condition of a Keystone's IdentityBackends row:
// the KeystoneIdentityBackends that passed their DomainReady gate are projected into
// the domains Secret its pods mount.
const ConditionIdentityBackendsReady = "IdentityBackendsReady"

// The reasons of IdentityBackendsReady.
const (
	// ReasonIdentityBackendsProjected (True): the domain files of the gated backends are
	// in the Secret the message names.
	ReasonIdentityBackendsProjected = "IdentityBackendsProjected"
	// ReasonNoIdentityBackends (True): no backend names the Keystone, or none has
	// passed its gate yet; no domains Secret is mounted.
	ReasonNoIdentityBackends = "NoIdentityBackends"
	// ReasonIdentityBackendConflict (False): two or more backends name the same
	// domain. The oldest of them (by creation, then name) keeps the domain and is still
	// projected; the others are left out until they are renamed or deleted.
	ReasonIdentityBackendConflict = "IdentityBackendConflict"
	// ReasonIdentityBackendsError (False): the backends could not be listed, a bind
	// password could not be read, or the domains Secret could not be written or its
	// older copies pruned; the pass retries with backoff.
	ReasonIdentityBackendsError = "IdentityBackendsError"
)

// DomainsVolumeName is the pod volume of the Keystone Deployment that mounts the
// domains Secret; each keystone.<domain>.conf is mounted from it with subPath under
// settings.DomainConfigDir. The KeystoneIdentityBackend controller follows this volume
// to the Secret to find its own file.
const DomainsVolumeName = "domains"

// RetainDomainsSecrets is how many older domains Secrets of a Keystone the
// IdentityBackends row keeps besides the current one; one a live ReplicaSet or pod
// still mounts is never deleted, whatever its age.
const RetainDomainsSecrets = 3

// ErrBindPasswordInConfig is wrapped by the error a backend whose config sets
// [ldap] password renders to: the bind password comes from passwordSecretRef only,
// never from the custom resource.
var ErrBindPasswordInConfig = errors.New("config sets [ldap] password")

// Projection is what [Step] hands to the later rows of the Keystone's pass, through
// reconcile.WithState and reconcile.StateFrom[Projection]: the Config row turns on
// domain-specific drivers for Files, the Deployment row mounts each of them with
// subPath from Secret under [DomainsVolumeName].
type Projection struct {
	// Secret is the domains Secret the backends were projected into, "" when none
	// passed its gate.
	Secret string
	// Files are its data keys, keystone.<domain>.conf, sorted.
	Files []string
	// FederationSecret is the federation Secret the identity providers of the
	// projected backends were rendered into ({keystone}-federation-{hash}), "" when
	// none declares one (or none could be rendered).
	FederationSecret string
	// FederationFiles are its data keys, sorted: FederationConfigFile and the files of
	// each provider (renderFederation).
	FederationFiles []string
}

// Step is the IdentityBackends row of the Keystone pipeline: it projects the
// KeystoneIdentityBackends naming the Keystone that passed their DomainReady gate into
// one content-addressed Secret, {keystone}-domains-{hash}, one data key
// keystone.<domain>.conf per backend, hands it on as the pass's [Projection] and sets
// [ConditionIdentityBackendsReady]. The identity providers of the projected backends
// (spec.federation) are rendered into a second content-addressed Secret,
// {keystone}-federation-{hash}, created once and pruned the same way; a Keystone whose
// projected backends declare no provider gets none. A provider whose federation does
// not validate (ValidateFederation), whose id or remote id an older backend's
// provider holds already, that is an OpenID Connect provider besides the Keystone's
// one (the first of the oldest backend declaring one: a Keystone serves at most one),
// or whose client secret, IdP metadata or key pair is missing is left out and named in
// the message, without a value. The session passphrase of the OpenID Connect provider
// is generated once into the Secret names.OpenIDPassphraseSecretName, owned by the
// Keystone, one key per provider id, and read from there on every pass. It never ends the pass with a requeue: a backend
// that is not ready is left out (named in the message) and the Keystone runs on
// without it. Of two backends naming one domain the oldest keeps it
// ([ReasonIdentityBackendConflict]), so a newcomer cannot take a served domain.
type Step struct {
	// Client reads the KeystoneIdentityBackends and their bind password Secrets on the
	// management cluster, where they live next to the Keystone; with a cache restricted
	// to the operator's Secrets it must be an apply.Applier with an APIReader, so a
	// user's Secret is read past the cache. The domains Secret is written through the
	// pass's target (multicluster.TargetFrom), or through Client outside a pass.
	Client client.Client
}

// NewStep returns the IdentityBackends row reading through c (the management
// cluster's Applier, resolver.Local().Client).
func NewStep(c client.Client) *Step {
	return &Step{Client: c}
}

// Condition returns ConditionIdentityBackendsReady, the condition the row owns.
func (s *Step) Condition() string { return ConditionIdentityBackendsReady }

// Reconcile runs the row for k: list, gate, render, write, prune. It sets the pass's
// [Projection] ("" and nil when nothing is projected).
// The prune keeps the current Secret, the RetainDomainsSecrets newest others and every
// one a workload still mounts; with nothing projected it prunes nothing (the pods may
// still mount the last Secret until the Deployment rolls), and the Secrets go with the
// Keystone or at the next projection.
func (s *Step) Reconcile(ctx context.Context, k *v1alpha1.Keystone) (ctrl.Result, error) {
	out, err := s.flow(ctx, k)
	return reconcile.Settle(k, out, err)
}

func (s *Step) flow(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	state := reconcile.StateFrom[Projection](ctx)
	state.Secret, state.Files = "", nil
	state.FederationSecret, state.FederationFiles = "", nil
	fail := func(err error) (reconcile.Outcome, error) {
		return reconcile.Done(reconcile.FalseCondition(ConditionIdentityBackendsReady, ReasonIdentityBackendsError, err.Error())), err
	}
	if s.Client == nil {
		return fail(errors.New("Step.Client is nil"))
	}
	target := multicluster.TargetFrom(ctx)
	writer := s.Client
	if target != nil {
		writer = target.Client
	}

	items, err := identityBackendsOf(ctx, s.Client, k.Namespace, k.Name)
	if err != nil {
		return fail(err)
	}
	c := satellite.Collect(satellite.CollectParams[v1alpha1.KeystoneIdentityBackend, *v1alpha1.KeystoneIdentityBackend]{
		Items: items, Gate: domainReady,
	})
	holders, conflicts := domainHolders(c.Attached)

	data := map[string][]byte{}
	var domains, leftOut []string
	var projected []*v1alpha1.KeystoneIdentityBackend
	for _, b := range c.Gated {
		if holders[b.Spec.Domain] != b {
			continue // a conflict's loser: reported below
		}
		password, why, err := bindPassword(ctx, s.Client, b)
		if err != nil {
			return fail(err)
		}
		if why != "" {
			leftOut = append(leftOut, b.Name+" ("+why+")")
			continue
		}
		name, content, err := renderDomainFile(b, password)
		if err != nil {
			// The error names the backend and field, never the password or a value.
			leftOut = append(leftOut, b.Name+" (its configuration does not render)")
			continue
		}
		data[name] = []byte(content)
		domains = append(domains, b.Spec.Domain)
		projected = append(projected, b)
	}
	providers, dashboards, fedLeftOut, err := federationOf(ctx, s.Client, projected, openIDHolder(c.Attached))
	if err != nil {
		return fail(err)
	}
	leftOut = append(leftOut, fedLeftOut...)
	for i := range providers {
		if providers[i].spec.Protocol != v1alpha1.ProtocolOpenID {
			continue
		}
		if providers[i].passphrase, err = ensurePassphrase(ctx, writer, k, providers[i].spec.ID); err != nil {
			return fail(fmt.Errorf("the Keystone %s/%s: %w", k.Namespace, k.Name, err))
		}
	}
	fedData, err := renderFederation(providers, dashboards)
	if err != nil {
		return fail(fmt.Errorf("rendering the federation documents of Keystone %s/%s: %w", k.Namespace, k.Name, err))
	}

	if len(data) > 0 {
		name, err := config.CreateImmutableSecret(ctx, writer, writer.Scheme(), k, names.DomainsBaseName(k), k.Namespace, data)
		if err != nil {
			return fail(fmt.Errorf("writing the domains Secret of Keystone %s/%s: %w", k.Namespace, k.Name, err))
		}
		state.Secret, state.Files = name, slices.Sorted(maps.Keys(data))
	}
	if state.Secret != "" {
		opts := config.DefaultPruneOptions()
		opts.Retain, opts.SpareInUse = RetainDomainsSecrets, true
		if err := config.PruneImmutableSecretsWithOptions(ctx, writer, k, names.DomainsBaseName(k), k.Namespace,
			state.Secret, opts); err != nil {
			return fail(fmt.Errorf("pruning the older domains Secrets of Keystone %s/%s: %w", k.Namespace, k.Name, err))
		}
	}
	if len(fedData) > 0 {
		name, err := config.CreateImmutableSecret(ctx, writer, writer.Scheme(), k, names.FederationBaseName(k), k.Namespace, fedData)
		if err != nil {
			return fail(fmt.Errorf("writing the federation Secret of Keystone %s/%s: %w", k.Namespace, k.Name, err))
		}
		state.FederationSecret, state.FederationFiles = name, slices.Sorted(maps.Keys(fedData))
		opts := config.DefaultPruneOptions()
		opts.Retain, opts.SpareInUse = RetainFederationSecrets, true
		if err := config.PruneImmutableSecretsWithOptions(ctx, writer, k, names.FederationBaseName(k), k.Namespace,
			state.FederationSecret, opts); err != nil {
			return fail(fmt.Errorf("pruning the older federation Secrets of Keystone %s/%s: %w", k.Namespace, k.Name, err))
		}
	}

	var msg strings.Builder
	switch {
	case len(data) > 0:
		fmt.Fprintf(&msg, "domains %s projected into Secret %s", strings.Join(domains, ", "), state.Secret)
		if state.FederationSecret != "" {
			ids := make([]string, len(providers))
			for i, p := range providers {
				ids[i] = p.spec.ID
			}
			fmt.Fprintf(&msg, "; identity providers %s rendered into Secret %s", strings.Join(ids, ", "), state.FederationSecret)
		}
	case len(c.Attached) == 0:
		msg.WriteString("no KeystoneIdentityBackend names this Keystone")
	default:
		msg.WriteString("no KeystoneIdentityBackend of this Keystone has passed DomainReady yet")
	}
	if waiting := notGated(c.Attached, c.Gated); len(waiting) > 0 {
		fmt.Fprintf(&msg, "; waiting for DomainReady: %s", strings.Join(waiting, ", "))
	}
	if len(leftOut) > 0 {
		fmt.Fprintf(&msg, "; left out: %s", strings.Join(leftOut, ", "))
	}
	if len(conflicts) > 0 {
		return reconcile.Done(reconcile.FalseCondition(ConditionIdentityBackendsReady, ReasonIdentityBackendConflict,
			conflictMessage(conflicts)+"; "+msg.String())), nil
	}
	reason := ReasonIdentityBackendsProjected
	if len(data) == 0 {
		reason = ReasonNoIdentityBackends
	}
	return reconcile.Done(reconcile.TrueCondition(ConditionIdentityBackendsReady, reason, msg.String())), nil
}

// federationOf reads, through c, the documents of the identity providers of backends
// (the projected ones), the oldest backend first (by creation, then name): the
// providers to render in that order, the backends' trusted dashboards, and the
// providers left out, each with why. A backend whose federation does not validate
// (apart from the one OpenID Connect provider limit) is left out whole; a provider
// whose id or remote id an older backend's provider holds, an OpenID Connect provider
// other than the Keystone's one (openID, from openIDHolder), or a provider whose
// documents are missing, alone. Errors are failed reads.
func federationOf(ctx context.Context, c client.Client, backends []*v1alpha1.KeystoneIdentityBackend, openID openIDSlot) (
	providers []providerDocuments, dashboards, leftOut []string, err error) {
	ordered := slices.Clone(backends)
	slices.SortStableFunc(ordered, func(a, b *v1alpha1.KeystoneIdentityBackend) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	idHolder, remoteHolder := map[string]string{}, map[string]string{}
	for _, b := range ordered {
		f := b.Spec.Federation
		if f == nil {
			continue
		}
		if errs := validateFederation(b, false); len(errs) > 0 {
			fields := make([]string, len(errs))
			for i, e := range errs {
				fields[i] = e.Field
			}
			leftOut = append(leftOut, fmt.Sprintf("the federation of %s (invalid %s)", b.Name, strings.Join(slices.Compact(fields), ", ")))
			continue
		}
		dashboards = append(dashboards, f.TrustedDashboards...)
	providers:
		for i := range f.IdentityProviders {
			idp := &f.IdentityProviders[i]
			label := "identity provider " + idp.ID + " of " + b.Name
			if holder, ok := idHolder[idp.ID]; ok {
				leftOut = append(leftOut, fmt.Sprintf("%s (KeystoneIdentityBackend %s, older, declares that id)", label, holder))
				continue
			}
			for _, r := range idp.RemoteIDs {
				if holder, ok := remoteHolder[r]; ok {
					leftOut = append(leftOut, fmt.Sprintf("%s (its remote id %q is identity provider %s's)", label, r, holder))
					continue providers
				}
			}
			if why := openID.refusal(b, idp); why != "" {
				leftOut = append(leftOut, label+" ("+why+")")
				continue
			}
			docs, why, err := readProviderDocuments(ctx, c, b, idp)
			if err != nil {
				return nil, nil, nil, err
			}
			if why != "" {
				leftOut = append(leftOut, label+" ("+why+")")
				continue
			}
			idHolder[idp.ID] = b.Name
			for _, r := range idp.RemoteIDs {
				remoteHolder[r] = idp.ID
			}
			providers = append(providers, docs)
		}
	}
	return providers, dashboards, leftOut, nil
}

// identityBackendsOf lists the KeystoneIdentityBackends of namespace that name the
// Keystone keystone, as pointers into one list.
func identityBackendsOf(ctx context.Context, c client.Reader, namespace, keystone string) ([]*v1alpha1.KeystoneIdentityBackend, error) {
	var list v1alpha1.KeystoneIdentityBackendList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("listing the KeystoneIdentityBackends of namespace %s: %w", namespace, err)
	}
	var out []*v1alpha1.KeystoneIdentityBackend
	for i := range list.Items {
		if list.Items[i].Spec.KeystoneRef.Name == keystone {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// domainReady is the gate of the IdentityBackends row: DomainReady True for the
// backend's current generation.
func domainReady(b *v1alpha1.KeystoneIdentityBackend) bool {
	c := meta.FindStatusCondition(b.Status.Conditions, ConditionDomainReady)
	return c != nil && c.Status == "True" && c.ObservedGeneration == b.Generation
}

// domainHolders decides, among backends (the attached ones: not being deleted), which
// backend holds each domain: the oldest by creation, then by name. conflicts maps each
// domain named by more than one backend to all of them, the holder first.
func domainHolders(backends []*v1alpha1.KeystoneIdentityBackend) (holders map[string]*v1alpha1.KeystoneIdentityBackend, conflicts map[string][]*v1alpha1.KeystoneIdentityBackend) {
	byDomain := map[string][]*v1alpha1.KeystoneIdentityBackend{}
	for _, b := range backends {
		byDomain[b.Spec.Domain] = append(byDomain[b.Spec.Domain], b)
	}
	holders = map[string]*v1alpha1.KeystoneIdentityBackend{}
	for domain, bs := range byDomain {
		slices.SortStableFunc(bs, func(a, b *v1alpha1.KeystoneIdentityBackend) int {
			return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
		})
		holders[domain] = bs[0]
		if len(bs) > 1 {
			if conflicts == nil {
				conflicts = map[string][]*v1alpha1.KeystoneIdentityBackend{}
			}
			conflicts[domain] = bs
		}
	}
	return holders, conflicts
}

// conflictMessage names every conflict: "KeystoneIdentityBackends a, b name the domain
// corp; a, the oldest, keeps it".
func conflictMessage(conflicts map[string][]*v1alpha1.KeystoneIdentityBackend) string {
	var parts []string
	for _, domain := range slices.Sorted(maps.Keys(conflicts)) {
		bs := conflicts[domain]
		names := make([]string, len(bs))
		for i, b := range bs {
			names[i] = b.Name
		}
		parts = append(parts, fmt.Sprintf("KeystoneIdentityBackends %s name the domain %s; %s, the oldest, keeps it",
			strings.Join(names, ", "), domain, names[0]))
	}
	return strings.Join(parts, "; ")
}

// notGated returns the names of the attached backends that did not pass the gate.
func notGated(attached, gated []*v1alpha1.KeystoneIdentityBackend) []string {
	var out []string
	for _, b := range attached {
		if !slices.Contains(gated, b) {
			out = append(out, b.Name)
		}
	}
	return out
}

// bindPassword reads the bind password of b's passwordSecretRef through c. A backend
// without passwordSecretRef binds anonymously: ("", "", nil). A Secret or key that is
// missing, or an empty value, returns why in words (naming the Secret and key, never
// the value); any other failure returns the error.
func bindPassword(ctx context.Context, c client.Client, b *v1alpha1.KeystoneIdentityBackend) (password, why string, err error) {
	ref := b.Spec.PasswordSecretRef
	if ref == nil {
		return "", "", nil
	}
	key := client.ObjectKey{Namespace: b.Namespace, Name: ref.Name}
	value, err := secrets.GetSecretValue(ctx, c, key, ref.Key)
	switch {
	case apierrors.IsNotFound(err):
		return "", fmt.Sprintf("bind password Secret %s does not exist", key), nil
	case errors.Is(err, secrets.ErrKeyNotFound):
		return "", fmt.Sprintf("bind password Secret %s has no key %q", key, ref.Key), nil
	case err != nil:
		return "", "", fmt.Errorf("reading the bind password of KeystoneIdentityBackend %s/%s: %w", b.Namespace, b.Name, err)
	case value == "":
		return "", fmt.Sprintf("bind password Secret %s holds an empty %q", key, ref.Key), nil
	}
	return value, "", nil
}

// defaultDriver is the identity driver of a backend whose driver is empty.
const defaultDriver = "ldap"

// domainSections returns the INI sections of b's domain file: spec.config, [identity]
// driver from spec.driver (ldap when empty) and, with passwordSecretRef set,
// [ldap] password = password written as a literal (settings.EscapeValue). A config that
// sets [ldap] password itself is refused with ErrBindPasswordInConfig. Errors name the
// backend and never quote a value.
func domainSections(b *v1alpha1.KeystoneIdentityBackend, password string) (map[string]map[string]string, error) {
	out := make(map[string]map[string]string, len(b.Spec.Config)+2)
	for section, options := range b.Spec.Config {
		out[section] = maps.Clone(options)
	}
	if _, ok := b.Spec.Config["ldap"]["password"]; ok {
		return nil, fmt.Errorf("KeystoneIdentityBackend %s/%s: spec.config: %w: the bind password comes from spec.passwordSecretRef",
			b.Namespace, b.Name, ErrBindPasswordInConfig)
	}
	driver := cmp.Or(b.Spec.Driver, defaultDriver)
	if out["identity"] == nil {
		out["identity"] = map[string]string{}
	}
	out["identity"]["driver"] = driver
	if b.Spec.PasswordSecretRef != nil {
		escaped, err := settings.EscapeValue(password)
		if err != nil {
			return nil, fmt.Errorf("KeystoneIdentityBackend %s/%s: the bind password of Secret %s key %q: %w",
				b.Namespace, b.Name, b.Spec.PasswordSecretRef.Name, b.Spec.PasswordSecretRef.Key, err)
		}
		if out["ldap"] == nil {
			out["ldap"] = map[string]string{}
		}
		out["ldap"]["password"] = escaped
	}
	return out, nil
}

// CheckDomainConfig renders b's domain file from b alone and returns what the
// Reconciler refuses with InvalidConfig whatever the bind password: a
// spec.config that sets [ldap] password itself (wrapping [ErrBindPasswordInConfig]),
// or a domain file settings.DomainConfig cannot render (wrapping
// settings.ErrInvalidSettings). Errors name the backend and never quote a value.
func CheckDomainConfig(b *v1alpha1.KeystoneIdentityBackend) error {
	withoutPassword := b.DeepCopy()
	withoutPassword.Spec.PasswordSecretRef = nil
	_, _, err := renderDomainFile(withoutPassword, "")
	return err
}

// renderDomainFile renders b's keystone.<domain>.conf with password as its bind
// password: the file name (the data key in the domains Secret) and the content.
// Errors name the backend and never quote a value.
func renderDomainFile(b *v1alpha1.KeystoneIdentityBackend, password string) (fileName, content string, err error) {
	sections, err := domainSections(b, password)
	if err != nil {
		return "", "", err
	}
	fileName, content, err = settings.DomainConfig(b.Spec.Domain, sections)
	if err != nil {
		return "", "", fmt.Errorf("KeystoneIdentityBackend %s/%s: %w", b.Namespace, b.Name, err)
	}
	return fileName, content, nil
}
