package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	ksv1alpha1 "github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi"
	"github.com/c5c3/reconciler-sdk/outbound"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/satellite"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
)

// backendSamplePath is the sample KeystoneIdentityBackend with an OpenID Connect
// identity provider, relative to the module root.
const backendSamplePath = "examples/keystone/config/samples/keystone_v1alpha1_keystoneidentitybackend_federation.yaml"

// The SAML identity provider the demo adds to the sample backend: its id, the entity id
// its assertions carry, and the Certificate (and kubernetes.io/tls Secret) of the
// service provider's key pair.
const (
	samlProviderID  = "corp-saml"
	samlEntityID    = "https://idp.partners.example/saml"
	samlKeyPairName = "corp-saml-sp"
)

// samlMetadata is the SAML IdP's metadata document, inline in the backend.
const samlMetadata = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="` + samlEntityID + `">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.partners.example/saml/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`

// backendConditionOrder is the order of the KeystoneIdentityBackend's table: its
// sub-conditions in the order Ready aggregates them, then Ready.
var backendConditionOrder = []string{
	identitybackend.ConditionDomainReady, identitybackend.ConditionFederationReady,
	identitybackend.ConditionConfigProjected, reconcile.ConditionReady,
}

// loadBackendSample reads the sample federated KeystoneIdentityBackend and places it in
// namespace ns.
func loadBackendSample(root, ns string) (*ksv1alpha1.KeystoneIdentityBackend, error) {
	path := filepath.Join(root, backendSamplePath)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the sample KeystoneIdentityBackend: %w", err)
	}
	b := &ksv1alpha1.KeystoneIdentityBackend{}
	if err := yaml.UnmarshalStrict(raw, b); err != nil {
		return nil, fmt.Errorf("decoding the sample KeystoneIdentityBackend %s: %w", path, err)
	}
	if b.Spec.Federation == nil || len(b.Spec.Federation.IdentityProviders) != 1 ||
		b.Spec.Federation.IdentityProviders[0].OpenID == nil {
		return nil, fmt.Errorf("the sample KeystoneIdentityBackend %s: spec.federation.identityProviders must hold one OpenID Connect provider", path)
	}
	b.Namespace = ns
	return b, nil
}

// addSAMLProvider adds the SAML provider samlProviderID to b's federation: the metadata
// inline, the key pair from the Secret samlKeyPairName, its users mapped by NameID into
// b's domain and its group federated-users.
func addSAMLProvider(b *ksv1alpha1.KeystoneIdentityBackend) {
	b.Spec.Federation.IdentityProviders = append(b.Spec.Federation.IdentityProviders, ksv1alpha1.IdentityProviderSpec{
		ID:          samlProviderID,
		Description: "Partner SAML identity provider",
		RemoteIDs:   []string{samlEntityID},
		Protocol:    ksv1alpha1.ProtocolSAML2,
		SAML2: &ksv1alpha1.SAML2Spec{
			IdPMetadata:        ksv1alpha1.SAMLMetadataSource{Inline: samlMetadata},
			SPKeyPairSecretRef: ksv1alpha1.LocalObjectReference{Name: samlKeyPairName},
		},
		Mapping: []ksv1alpha1.MappingRule{{
			Local: []ksv1alpha1.MappingLocal{
				{User: &ksv1alpha1.MappedUser{Name: "{0}"}},
				{Group: &ksv1alpha1.MappedGroup{Name: "federated-users", Domain: &ksv1alpha1.MappedDomain{Name: b.Spec.Domain}}},
			},
			Remote: []ksv1alpha1.MappingRemote{{Type: "MELLON_NAME_ID"}},
		}},
	})
}

// keystoneAdminUser is the Keystone's admin user name; the CRD defaults it to admin.
func keystoneAdminUser(k *ksv1alpha1.Keystone) string {
	if k.Spec.Bootstrap.AdminUser != "" {
		return k.Spec.Bootstrap.AdminUser
	}
	return "admin"
}

// backendPhase runs p for the scenario's KeystoneIdentityBackend.
func (s *keystoneScenario) backendPhase(ctx context.Context, p phase[*ksv1alpha1.KeystoneIdentityBackend]) (*ksv1alpha1.KeystoneIdentityBackend, time.Duration, error) {
	sub := subject[*ksv1alpha1.KeystoneIdentityBackend]{kind: "KeystoneIdentityBackend", key: s.backend,
		order: backendConditionOrder, newObj: func() *ksv1alpha1.KeystoneIdentityBackend { return &ksv1alpha1.KeystoneIdentityBackend{} }}
	return runPhase(ctx, s.c, s.d, sub, p, s.o.Pause, s.o.PhaseTimeout)
}

// backendCondition returns b's condition condType when it was written for b's
// generation.
func backendCondition(b *ksv1alpha1.KeystoneIdentityBackend, condType string) (row, bool) {
	for _, r := range rowsIn(b, backendConditionOrder) {
		if r.Type == condType && r.Current {
			return r, true
		}
	}
	return row{}, false
}

// waitingForFederationSecret is an action's precondition: the backend's FederationReady
// is False with reason WaitingForFederationSecret for its generation, and, when
// registered is set, the controller has registered that provider (recorded in
// status.identityProviders) meanwhile.
func (s *keystoneScenario) waitingForFederationSecret(registered string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		b := &ksv1alpha1.KeystoneIdentityBackend{}
		if err := s.c.Get(ctx, s.backend, b); err != nil {
			return false, fmt.Errorf("reading KeystoneIdentityBackend %s: %w", s.backend, err)
		}
		r, ok := backendCondition(b, identitybackend.ConditionFederationReady)
		if !ok || r.Reason != identitybackend.ReasonWaitingForFederationSecret {
			return false, nil
		}
		return registered == "" || slices.ContainsFunc(b.Status.IdentityProviders,
			func(p ksv1alpha1.IdentityProviderStatus) bool { return p.ID == registered }), nil
	}
}

// addIdentityProviders applies the sample federated KeystoneIdentityBackend with a SAML
// provider added, plays ESO syncing the OpenID Connect client secret and cert-manager
// issuing the SAML service provider's key pair, and follows the backend until Ready,
// then the Keystone until it runs with the providers' files. It shows what the
// controller registered in the played identity API and the federation Secret's name
// and keys; no value of a Secret is printed.
func (s *keystoneScenario) addIdentityProviders(ctx context.Context) error {
	b, err := loadBackendSample(s.root, namespace)
	if err != nil {
		return err
	}
	addSAMLProvider(b)
	s.backend = client.ObjectKeyFromObject(b)
	oidc := b.Spec.Federation.IdentityProviders[0]
	clientRef := oidc.OpenID.ClientSecretRef
	clientKey := client.ObjectKey{Namespace: namespace, Name: clientRef.Name}
	remoteKey := namespace + "/" + clientRef.Name
	es := &esov1.ExternalSecret{
		ObjectMeta: metav1.ObjectMeta{Name: clientRef.Name, Namespace: namespace},
		Spec: esov1.ExternalSecretSpec{
			SecretStoreRef: secrets.ESOSecretStoreRef(secrets.EffectiveStoreRef(s.k.Spec.SecretStoreRef)),
			Target:         esov1.ExternalSecretTarget{Name: clientRef.Name},
			Data: []esov1.ExternalSecretData{{SecretKey: clientRef.Key,
				RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: remoteKey}}},
		},
	}
	if err := s.c.Create(ctx, es); err != nil {
		return fmt.Errorf("creating ExternalSecret %s: %w", clientKey, err)
	}
	certKey := client.ObjectKey{Namespace: namespace, Name: samlKeyPairName}
	cert := &certmanagerv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Name: samlKeyPairName, Namespace: namespace},
		Spec: certmanagerv1.CertificateSpec{
			SecretName: samlKeyPairName,
			CommonName: s.k.Name + "." + namespace + ".svc",
			DNSNames:   []string{s.k.Name + "." + namespace + ".svc"},
			IssuerRef:  cmmeta.IssuerReference{Name: "selfsigned", Kind: "ClusterIssuer", Group: "cert-manager.io"},
		},
	}
	if err := s.c.Create(ctx, cert); err != nil {
		return fmt.Errorf("creating Certificate %s: %w", certKey, err)
	}
	if err := s.c.Create(ctx, b); err != nil {
		return fmt.Errorf("applying KeystoneIdentityBackend %s: %w", s.backend, err)
	}
	s.d.Linef("")
	s.d.Linef("K3. Add identity providers: apply the sample KeystoneIdentityBackend %s", s.backend)
	s.d.Linef("    (%s):", backendSamplePath)
	s.d.Linef("    domain %s, the OpenID Connect provider %s, and a SAML provider %s the demo adds (metadata inline).",
		b.Spec.Domain, oidc.ID, samlProviderID)
	s.d.Linef("    The client secret comes through ExternalSecret %s (remote key %q),", clientKey, remoteKey)
	s.d.Linef("    the service provider's key pair from Certificate %s (its Secret %s);", certKey, certKey)
	s.d.Linef("    neither ESO nor cert-manager has written its Secret yet.")

	s.d.Reset()
	b, took, err := s.backendPhase(ctx, phase[*ksv1alpha1.KeystoneIdentityBackend]{
		name:  "identity providers of the KeystoneIdentityBackend",
		table: true,
		actions: []action{{
			when: s.waitingForFederationSecret(""),
			do: func(ctx context.Context) (string, error) {
				secret, err := s.o.NewClientSecret()
				if err != nil {
					return "", err
				}
				if _, err := simulate.MarkExternalSecretSynced(ctx, s.c, clientKey,
					map[string][]byte{clientRef.Key: []byte(secret)}); err != nil {
					return "", err
				}
				return fmt.Sprintf("ESO (played): synced %q into Secret %s (a random OpenID Connect client secret, not shown)",
					remoteKey, clientKey), nil
			},
		}, {
			when: s.waitingForFederationSecret(oidc.ID),
			do: func(ctx context.Context) (string, error) {
				if _, err := simulate.MarkCertificateReady(ctx, s.c, certKey); err != nil {
					return "", err
				}
				return fmt.Sprintf("cert-manager (played): Certificate %s issued into Secret %s (kubernetes.io/tls; the private key is not shown)",
					certKey, certKey), nil
			},
		}},
		done: func(_ context.Context, b *ksv1alpha1.KeystoneIdentityBackend) (bool, string, error) {
			r, ok := backendCondition(b, reconcile.ConditionReady)
			return ok && r.isTrue(), "Ready=True", nil
		},
	})
	if err != nil {
		return err
	}
	var registered []string
	for _, p := range b.Status.IdentityProviders {
		registered = append(registered, fmt.Sprintf("%s (%s)", p.ID, p.Protocol))
	}
	s.d.Linef("    ✓ Ready=True after %.1f s: domain %s (ID %s); status.identityProviders: %s",
		took.Seconds(), b.Spec.Domain, b.Status.DomainID, strings.Join(registered, ", "))
	if err := s.showRegistered(ctx, b); err != nil {
		return err
	}

	var projected string
	k, took, err := s.phase(ctx, phase[*ksv1alpha1.Keystone]{
		name: "the Keystone's rollout of the identity providers",
		done: func(_ context.Context, k *ksv1alpha1.Keystone) (bool, string, error) {
			for _, r := range rowsIn(k, keystoneConditionOrder) {
				if r.Type == keystone.ConditionIdentityBackendsReady {
					projected = r.Message
					if !r.isTrue() || r.Reason != identitybackend.ReasonIdentityBackendsProjected {
						return false, "IdentityBackendsReady to be True, reason " + identitybackend.ReasonIdentityBackendsProjected, nil
					}
				}
			}
			return keystoneReadyNow(k), "Ready=True", nil
		},
	})
	if err != nil {
		return err
	}
	s.d.Linef("    ✓ Keystone %s Ready=True, %.1f s after the backend; IdentityBackendsReady: %s", s.key, took.Seconds(), projected)
	return s.showFederationSecret(ctx, k)
}

// showRegistered reads back, through the played identity API as the admin user, each
// identity provider of b's status.identityProviders and its protocol, and prints them.
// It fails when one is missing, lies in another domain than b's or applies another
// mapping than the status records.
func (s *keystoneScenario) showRegistered(ctx context.Context, b *ksv1alpha1.KeystoneIdentityBackend) error {
	api, err := keystoneapi.New(s.api.URL(), keystoneapi.Credentials{
		Username: keystoneAdminUser(s.k), Password: s.adminPassword, ProjectName: "admin",
	}, keystoneapi.Options{Policy: outbound.Policy{AllowCIDRs: outbound.LoopbackPrefixes}})
	if err != nil {
		return fmt.Errorf("a client of the played identity API: %w", err)
	}
	s.d.Linef("    The played identity API (%s) as the controller left it:", s.api.URL())
	for _, st := range b.Status.IdentityProviders {
		p, err := api.GetIdentityProvider(ctx, st.ID)
		if err != nil {
			return fmt.Errorf("reading identity provider %s of KeystoneIdentityBackend %s back: %w", st.ID, s.backend, err)
		}
		if p.DomainID != b.Status.DomainID {
			return fmt.Errorf("identity provider %s of KeystoneIdentityBackend %s lies in domain %s, want the backend's %s",
				st.ID, s.backend, p.DomainID, b.Status.DomainID)
		}
		proto, err := api.GetProtocol(ctx, st.ID, st.Protocol)
		if err != nil {
			return fmt.Errorf("reading protocol %s of identity provider %s back: %w", st.Protocol, st.ID, err)
		}
		if proto.MappingID != st.MappingID {
			return fmt.Errorf("protocol %s of identity provider %s applies mapping %s, want %s (status.identityProviders)",
				st.Protocol, st.ID, proto.MappingID, st.MappingID)
		}
		if _, err := api.GetMapping(ctx, st.MappingID); err != nil {
			return fmt.Errorf("reading mapping %s of identity provider %s back: %w", st.MappingID, st.ID, err)
		}
		s.d.Linef("      GET /v3/OS-FEDERATION/identity_providers/%s: domain_id %s, remote_ids %v, enabled %t",
			p.ID, p.DomainID, p.RemoteIDs, p.Enabled)
		s.d.Linef("      GET /v3/OS-FEDERATION/identity_providers/%s/protocols/%s: mapping_id %s (mapping found)",
			st.ID, proto.ID, proto.MappingID)
	}
	return nil
}

// showFederationSecret prints the federation Secret k's Deployment mounts, by name and
// data keys (never a value), and hands its data and the key pair's to
// options.afterFederation.
func (s *keystoneScenario) showFederationSecret(ctx context.Context, k *ksv1alpha1.Keystone) error {
	deployKey := client.ObjectKey{Namespace: namespace, Name: k.Name}
	d := &appsv1.Deployment{}
	if err := s.c.Get(ctx, deployKey, d); err != nil {
		return fmt.Errorf("reading Deployment %s: %w", deployKey, err)
	}
	name := satellite.SecretNameForVolume(&d.Spec.Template.Spec, identitybackend.FederationVolumeName)
	if name == "" {
		return fmt.Errorf("deployment %s mounts no Secret as volume %s", deployKey, identitybackend.FederationVolumeName)
	}
	secret := &corev1.Secret{}
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		return fmt.Errorf("reading federation Secret %s/%s: %w", namespace, name, err)
	}
	keys := make([]string, 0, len(secret.Data))
	for key := range secret.Data {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	s.d.Linef("    Deployment %s mounts Secret %s at %s; its keys (values not shown):", deployKey, name, identitybackend.FederationDir)
	for _, key := range keys {
		s.d.Linef("      %s", key)
	}
	if s.o.afterFederation != nil {
		pair := &corev1.Secret{}
		if err := s.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: samlKeyPairName}, pair); err != nil {
			return fmt.Errorf("reading Secret %s/%s: %w", namespace, samlKeyPairName, err)
		}
		s.o.afterFederation(secret.Data, pair.Data)
	}
	return nil
}
