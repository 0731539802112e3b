package identitybackend

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/secrets"
)

// openIDSlot names the one OpenID Connect provider a Keystone serves: the backend that
// declares it and the provider's id (both "" when none).
type openIDSlot struct {
	backend, provider string
}

// openIDHolder returns the OpenID Connect provider a Keystone serves, among backends
// (the attached backends of the Keystone: not being deleted): the first provider of
// protocol openid, in spec order, of the oldest backend (by creation, then name) whose
// federation validates apart from the one-provider limit. The holder depends on the
// specs alone, not on whether a backend passed its gate or its documents exist, so a
// newer backend never takes the place of an older one's provider: the provider that
// works keeps working when a second one appears.
func openIDHolder(backends []*v1alpha1.KeystoneIdentityBackend) openIDSlot {
	ordered := slices.Clone(backends)
	slices.SortStableFunc(ordered, func(a, b *v1alpha1.KeystoneIdentityBackend) int {
		return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Name, b.Name))
	})
	for _, b := range ordered {
		if b.Spec.Federation == nil || len(validateFederation(b, false)) > 0 {
			continue
		}
		for _, idp := range b.Spec.Federation.IdentityProviders {
			if idp.Protocol == v1alpha1.ProtocolOpenID {
				return openIDSlot{backend: b.Name, provider: idp.ID}
			}
		}
	}
	return openIDSlot{}
}

// refusal says why provider idp of backend b is neither rendered nor registered, ""
// when it may be: it is not an OpenID Connect provider, or it is the holder's.
func (h openIDSlot) refusal(b *v1alpha1.KeystoneIdentityBackend, idp *v1alpha1.IdentityProviderSpec) string {
	if idp.Protocol != v1alpha1.ProtocolOpenID || h == (openIDSlot{backend: b.Name, provider: idp.ID}) {
		return ""
	}
	holder := "identity provider " + h.provider + " of KeystoneIdentityBackend " + h.backend
	if h.backend != b.Name {
		holder += ", older,"
	}
	return fmt.Sprintf("a second OpenID Connect provider of Keystone %s: %s is its OpenID Connect provider, "+
		"and a Keystone serves at most one (mod_auth_openidc reads one provider per virtual host)", b.Spec.KeystoneRef.Name, holder)
}

// openIDRefusals lists, for FederationReady, each OpenID Connect provider of b's specs
// that h does not hold, naming its field, the holder and the limit; nil when none.
func openIDRefusals(b *v1alpha1.KeystoneIdentityBackend, specs []v1alpha1.IdentityProviderSpec, h openIDSlot) (refused []string) {
	for i := range specs {
		if why := h.refusal(b, &specs[i]); why != "" {
			refused = append(refused, fmt.Sprintf("identity provider %s (spec.federation.identityProviders[%d]) is neither rendered nor registered in Keystone: %s",
				specs[i].ID, i, why))
		}
	}
	return refused
}

// ensurePassphrase returns the session passphrase (OIDCCryptoPassphrase) of OpenID
// Connect provider id of k: the key id of the Secret names.OpenIDPassphraseSecretName(k),
// generated at random (secrets.EnsureGeneratedSecret, 32 alphanumeric characters)
// through c, with k as its owner, the first time and never again. It does not depend
// on the client secret: whoever holds the client secret cannot decrypt the sessions,
// and a new client secret keeps them. Every replica and every pass renders the same
// value; a passphrase lost with its Secret is generated anew, which ends the sessions
// (they hold nothing else). Errors name the Secret and key, never the value.
func ensurePassphrase(ctx context.Context, c client.Client, k *v1alpha1.Keystone, id string) (string, error) {
	key := client.ObjectKey{Namespace: k.Namespace, Name: names.OpenIDPassphraseSecretName(k)}
	gs := secrets.DefaultGeneratedSecret(key, id)
	gs.Labels = map[string]string{apply.ManagedByLabel: apply.FieldManagerFor(c)}
	if _, err := secrets.EnsureGeneratedSecret(ctx, c, c.Scheme(), k, gs); err != nil {
		return "", fmt.Errorf("the session passphrase of identity provider %s: %w", id, err)
	}
	value, found, err := readPassphrase(ctx, c, key, id)
	if err == nil && !found {
		// Just written: a cache that lags behind the write does not hold it yet. An
		// Applier confirms a missing Secret past its cache, but not a cached older
		// version without this key (a key just added for a new provider id).
		var s corev1.Secret
		if err = apply.GetUncached(ctx, c, key, &s); err == nil {
			value, found = string(s.Data[id]), len(s.Data[id]) > 0
		}
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("reading the session passphrase of identity provider %s from Secret %s: %w", id, key, err)
	case !found:
		return "", fmt.Errorf("the session passphrase %q of identity provider %s: Secret %s holds none", id, id, key)
	}
	return value, nil
}

// readPassphrase reads the session passphrase of provider id from the Secret at key
// through c; found is false when the Secret or its key does not exist, or the value is
// empty.
func readPassphrase(ctx context.Context, c client.Client, key client.ObjectKey, id string) (value string, found bool, err error) {
	value, err = secrets.GetSecretValue(ctx, c, key, id)
	switch {
	case apierrors.IsNotFound(err) || errors.Is(err, secrets.ErrKeyNotFound):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return value, value != "", nil
}

// attachedBackends lists the backends of b's Keystone through c and returns those not
// being deleted, b among them as the pass has it (in place of its listed copy). A pass
// lists them once: its holder of the Keystone's OpenID Connect provider (openIDHolder)
// and the domain conflicts ConfigProjected reports are both computed from this list.
func attachedBackends(ctx context.Context, c client.Reader, b *v1alpha1.KeystoneIdentityBackend) ([]*v1alpha1.KeystoneIdentityBackend, error) {
	siblings, err := identityBackendsOf(ctx, c, b.Namespace, b.Spec.KeystoneRef.Name)
	if err != nil {
		return nil, err
	}
	attached := []*v1alpha1.KeystoneIdentityBackend{b}
	for _, s := range siblings {
		if s.Name != b.Name && s.DeletionTimestamp == nil {
			attached = append(attached, s)
		}
	}
	return attached, nil
}
