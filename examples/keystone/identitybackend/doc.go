// Package identitybackend is the Keystone operator's side of the KeystoneIdentityBackend,
// a satellite of a Keystone (package satellite): its controller ([Reconciler]) and the
// Keystone pipeline's IdentityBackends row ([Step]), which projects the backends into
// the Keystone's pods.
//
// # The handshake
//
// The [Reconciler] creates or adopts the backend's domain in Keystone (DomainReady, the
// gate the row reads) and observes the domain's keystone.<domain>.conf in the
// Keystone's pods (ConfigProjected); it writes nothing but the backend's status. The
// [Step] renders the file of every gated backend into the Keystone's content-addressed
// domains Secret, which the Keystone's Deployment mounts under [DomainsVolumeName].
//
//	Condition              Object                    True reasons                     False reasons
//	DomainReady            KeystoneIdentityBackend   DomainCreated, DomainAdopted     WaitingForKeystone, ExternalEndpointRequired,
//	                                                                                  InvalidConfig, BindPasswordMissing,
//	                                                                                  AdminPasswordMissing, KeystoneUnreachable,
//	                                                                                  AdminCredentialsRejected, DomainCreateFailed,
//	                                                                                  TargetClusterUnavailable
//	FederationReady        KeystoneIdentityBackend   IdentityProvidersRegistered,     WaitingForKeystone, WaitingForFederationSecret,
//	                                                 NoIdentityProviders              FederationInvalid, FederationRejected,
//	                                                                                  TooManyOpenIDProviders, KeystoneUnreachable,
//	                                                                                  AdminCredentialsRejected
//	ConfigProjected        KeystoneIdentityBackend   Projected                        NotProjected, WaitingForRollout, DomainConflict
//	IdentityBackendsReady  Keystone                  IdentityBackendsProjected,       IdentityBackendConflict, IdentityBackendsError
//	                                                 NoIdentityBackends
//
// # Where the admin password goes
//
// The [Reconciler] signs in to the Keystone API as the admin user, with the admin
// password, to create or adopt the backend's domain. It sends that password only to the
// Keystone it manages:
//
//   - A Keystone on the operator's cluster is reached at its Service, at the URL
//     names.Endpoint computes from the Keystone's name and namespace
//     (http://<name>.<namespace>.svc:5000), and only while the Service of that name is
//     controlled by the Keystone. status.endpoint is read only as the sign that the API
//     runs, never as an address: whoever may write keystones/status could point it
//     anywhere.
//   - A Keystone on a target cluster (spec.targetClusterRef) is reached at
//     spec.externalEndpoint only, an https URL the Keystone's author sets; the
//     Service's name would resolve on the operator's own cluster, where a Service of
//     that name is not this Keystone. Without it the backend is refused: DomainReady
//     False, reason ExternalEndpointRequired, and the admin password is not even read.
//   - The client (package keystoneapi) follows no redirect and dials through the
//     outbound package's default policy (loopback, link-local, unspecified and
//     multicast addresses refused after name resolution; no proxy). A Keystone API is
//     a cluster Service or a routed https endpoint, so the operator has no flag to
//     open that policy; Options.OutboundPolicy does, in Go, for tests.
//
// No bind password, admin password or client secret reaches a log, an event, a
// condition or an error.
//
// # Federation
//
// A backend's spec.federation declares the identity providers whose users sign in to
// its domain. The [Step] renders the providers of the backends it projects into a
// second content-addressed Secret, {keystone}-federation-{hash}, created once and
// pruned like the domains Secret (never one a live ReplicaSet or pod mounts), and
// hands its name and data keys on in [Projection]:
//
//	keystone-federation.conf           keystone.conf fragment for keystone.conf.d: [auth] methods,
//	                                   [federation] trusted_dashboard, [openid]/[saml2] remote_id_attribute
//	httpd-openid-<id>.conf             mod_auth_openidc relying party of OpenID Connect provider <id>
//	                                   (its client secret, read from clientSecretRef, and its session
//	                                   passphrase)
//	httpd-saml2-<id>.conf              mod_auth_mellon locations of SAML provider <id>, naming the
//	saml2-<id>-idp-metadata.xml        IdP metadata (inline or from a ConfigMap key),
//	saml2-<id>-sp.crt, saml2-<id>-sp.key the service provider's key pair (tls.crt, tls.key)
//
// The files are rendered for [FederationDir]. A backend without federation adds
// nothing, and a Keystone none of whose projected backends declares a provider gets
// no federation Secret. A provider is left out, and named in IdentityBackendsReady's
// message, while its backend's federation does not validate ([ValidateFederation],
// which the admission webhook runs too), while an older backend's provider holds its
// id or one of its remote ids, or while a document it needs is missing. The identity
// providers, their mapping rules and protocols are Keystone API objects, not files: the
// [Reconciler] creates or adopts them through the Keystone API (OS-FEDERATION), keeps
// them matching the spec, records in status.identityProviders what it created, and
// reports FederationReady (Keystone's own message when it refuses one, never a
// secret). The Keystone's Deployment mounts the federation Secret
// whole at [FederationDir], its keystone.conf fragment under keystone.conf.d and each
// web server fragment where the web server includes its configuration; the backend's
// ConfigProjected is True only once every pod runs with its providers' files as this
// generation renders them, besides its domain file.
//
// # One OpenID Connect provider per Keystone
//
// mod_auth_openidc reads one relying party (discovery URL, client id and secret,
// session passphrase, redirect URI) per virtual host, so a Keystone serves at most one
// OpenID Connect provider; SAML providers are not limited. The admission webhook
// refuses a backend declaring two, at the second one's
// spec.federation.identityProviders[i].protocol ([ValidateFederation]). Across the
// backends of a Keystone the first OpenID Connect provider of the oldest backend (by
// creation, then name) whose federation validates is the Keystone's, whether or not
// it has passed its gate; any other, in a newer backend or written past the webhook
// into the same one, is neither rendered nor registered in Keystone: FederationReady
// False, [ReasonTooManyOpenIDProviders], naming the provider, its field and the
// provider holding the place, and IdentityBackendsReady names it among those left out.
// The backends' other providers and the Keystone's OpenID Connect provider are served
// as before, and what Keystone already holds for the refused provider is not deleted.
// Once the holder's backend is deleted or drops its provider, the next one takes its
// place on its next pass.
//
// # Session passphrase
//
// The session passphrase of the OpenID Connect provider (OIDCCryptoPassphrase, the key
// mod_auth_openidc encrypts its session state and cookies with) is random: the [Step]
// generates it once (secrets.EnsureGeneratedSecret, 32 alphanumeric characters) into
// the Secret names.OpenIDPassphraseSecretName ({keystone}-openid-passphrase) next to
// the Keystone's Deployment, one data key per provider id, controlled by the Keystone
// and garbage-collected with it, and reads it from there on every pass. So every
// replica renders the same value, it survives operator restarts, and it owes nothing to
// the client secret: holding the client secret does not decrypt sessions, and a new
// client secret keeps them. A provider of a new id gets a new passphrase (the old key
// stays). Deleting the Secret generates a new one, which ends the current sessions. The
// passphrase reaches no log, event, condition or error.
//
// # Resync
//
// A pass that asks for no earlier requeue (a Ready backend among them) is requeued
// after Options.ResyncInterval ([DefaultResyncInterval], 5 minutes): it looks the
// domain, the identity providers, their mappings and protocols up in Keystone again,
// so an object deleted or changed there behind the operator's back is restored
// without another event.
//
// # Deletion
//
// Deleting a backend leaves its domain in Keystone: the Keystone's next pass drops the
// domain's file; the domain's projects, groups and role assignments stay, and a backend
// created again for the domain adopts it. A backend with spec.federation carries
// [FederationFinalizer]: on deletion the identity providers, mappings and protocols the
// [Reconciler] created are deleted through the Keystone API (adopted ones stay; a Normal
// EventFederationRemoved), and after Options.FederationGiveUpAfter without success it
// gives up with a Warning EventFederationRemovalAbandoned, leaving them in Keystone.
package identitybackend
