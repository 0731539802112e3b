// Package controller is the Horizon operator's reconciler: one pass resolves the
// Horizon's target cluster, then runs a table of steps built from the SDK's flows, each
// answering a reconcile.Outcome (its condition and requeue) that reconcile.Settle hands
// to the pass. Ready (reason AllReady) is True exactly when all nine sub-conditions
// are True; conditions and status are written on every exit path, and a converged pass
// writes nothing.
//
// # Pipeline
//
// The steps run in this order. The first six end the pass at the first requeue or
// error; the group after them (Exposure) runs all of its members and requeues after the
// shortest interval any of them asked for.
//
//	Step          What it does                                                      Condition
//	Secrets       secrets.Sync: gate on the secret store of spec.secretStoreRef     SecretsReady
//	              (default ClusterSecretStore openbao-cluster-store; a SecretStore
//	              in the Horizon's namespace), sync spec.secretKey through the
//	              ExternalSecret <name>-secret-key, digest the key for the pods
//	WebSSO        read the KeystoneIdentityBackends of spec.websso.identityBackends WebSSOReady
//	              (the Horizon's namespace, the management cluster) and derive a
//	              choice <idp>_<protocol> with its WEBSSO_IDP_MAPPING entry for
//	              every provider their status reports registered (ProviderChoices)
//	Config        render local_settings.py, the WebSSO row's choices after the      ConfigReady
//	              hand-written ones, into the immutable ConfigMap
//	              <name>-config-<hash> (status.configMap)
//	Deployment    the uWSGI Deployment (login-page readiness and startup probes,    DeploymentReady
//	              HORIZON_SECRET_KEY from the Secret, the key's digest as pod
//	              annotation), the Service (port 8080) and the PDB;
//	              status.endpoint
//	Prune         delete the ConfigMaps older than the newest three, never one a    ConfigReady on failure
//	              workload still mounts (the Deployment keeps three old
//	              ReplicaSets, deployment.DefaultRevisionHistoryLimit)
//	HTTPRoute     the HTTPRoute of spec.gateway; the Gateway's Accepted verdict     HTTPRouteReady
//	HealthCheck   GET of the login page through a 30 s TTL probe cache              HorizonAPIReady
//	HPA           the HorizontalPodAutoscaler of spec.autoscaling, or none          HPAReady
//	VPA           the VerticalPodAutoscaler of spec.vpa, or none                    VPAReady
//	NetworkPolicy the NetworkPolicy of spec.networkPolicy, or none; an empty        NetworkPolicyReady
//	              ingress list is refused
//
// Each step is instrumented under the metrics prefix horizon_operator
// (horizon_operator_reconcile_duration_seconds, horizon_operator_reconcile_errors_total).
//
// # Conditions
//
//	Type                True reasons                          False reasons
//	SecretsReady        SecretsAvailable                      TargetClusterUnavailable, SecretStoreNotReady,
//	                                                          ClusterSecretStoreUnsupported, WaitingForSecretKey,
//	                                                          SecretsError
//	WebSSOReady         IdentityBackendsNotRequired,          WaitingForIdentityBackend, WebSSOChoiceConflict,
//	                    IdentityProvidersOffered              IdentityBackendInvalid, IdentityBackendsNotInstalled,
//	                                                          IdentityBackendError
//	ConfigReady         ConfigRendered                        ConfigError
//	DeploymentReady     DeploymentReady                       WaitingForDeployment, DeploymentError
//	HTTPRouteReady      HTTPRouteAccepted, HTTPRouteNotRequired HTTPRouteNotAccepted, GatewayAPINotInstalled,
//	                                                          CapabilityProbeFailed
//	HorizonAPIReady     APIHealthy                            APIUnhealthy, EndpointNotReady, HealthCheckTimeout,
//	                                                          ConnectionFailed, HealthCheckFailed
//	HPAReady            HPAReady, HPANotRequired              — (errors propagate)
//	VPAReady            VPAReady, VPANotRequired              VPANotInstalled, CapabilityProbeFailed, VPAError
//	NetworkPolicyReady  NetworkPolicyReady, NetworkPolicyNotRequired — (errors propagate)
//
// TargetClusterUnavailable is set ahead of every step when spec.targetClusterRef names
// a cluster that is not registered or does not answer: the message carries the
// resolver's error, the Horizon requeues after 15 seconds and nothing is written on any
// cluster.
//
// # Requeues
//
//	10 s   Deployment readiness, HTTPRoute acceptance, health-check retry
//	15 s   secret store and SECRET_KEY polling; an unavailable target cluster
//	15 s   a converged Horizon on a target cluster (multicluster.Target.Recheck)
//	30 s   TTL of a passing login-page probe
//
// # Single sign-on through Keystone's identity providers
//
// The WebSSO row never fails a Horizon for a backend it cannot use yet: a backend that
// does not exist, declares no federation or has not registered a provider leaves its
// choices out, WebSSOReady False (WaitingForIdentityBackend) names it and its field
// (spec.websso.identityBackends[i]), and the settings render with the other choices.
// When the Keystone controller reports the providers registered, the backend watch
// brings the Horizon, the settings gain the choices, and the content-addressed
// ConfigMap rolls the pods once. A provider's choice whose id is already a hand-written
// choice's is left out (the hand-written one wins: initialChoice and idpMapping refer to
// it) and reported as WebSSOChoiceConflict. A name refers to a backend of the Horizon's
// own namespace only; the API has no field for another. The row reads through the
// management cluster's cache, so a converged pass sends no request.
//
// The backends are read as unstructured objects of keystone.openstack.c5c3.io/v1alpha1
// KeystoneIdentityBackend: the package does not import the Keystone example's Go types
// and the operator's scheme holds no Keystone group. Only the fields the row needs are
// decoded (the providers' id, description and protocol under spec.federation, and the
// id and protocol of status.identityProviders); a backend where one of them has another
// JSON type adds no choice and is reported as IdentityBackendInvalid, naming the field.
//
// # Rotation and deletion
//
// SECRET_KEY is rotated at the secret backend: when ESO syncs a new value into the
// Secret, the Secret watch brings the Horizon, the Secrets step computes a new digest,
// the pod-template annotation changes and the Deployment rolls (the key is read from the
// environment, so only a restart picks it up).
//
// On the management cluster deletion needs no finalizer: every child is namespaced and
// carries a controller owner reference, so the garbage collector reclaims the whole set.
// A Horizon with spec.targetClusterRef gets one finalizer per target cluster
// (multicluster.Cleanup): at deletion its children there, found by their ownership
// labels, are swept, bounded in time when the cluster does not answer.
//
// # Watches
//
// See [Reconciler.SetupWithManager]: the kinds the steps declare in Owns (the same list
// is [Reconciler.Children], what the target-cluster sweep deletes); the SECRET_KEY
// Secrets through a field index; both store kinds (the ClusterSecretStore leg absent in
// namespace-scoped mode); KeystoneIdentityBackends, status included, when the
// management cluster serves them ([HorizonsNaming]); HTTPRoutes only when the Gateway API is installed; the
// children on target clusters. For a Horizon with a target cluster the HTTPRoute and
// VPA kinds are probed on that cluster on every pass.
package controller
