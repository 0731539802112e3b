// Command demo runs the Horizon example operator (examples/horizon), then the Keystone
// example operator (examples/keystone), against a local control plane and shows what
// they do, step by step. The flag -scene picks horizon, keystone or all (the default:
// both, Horizon first); `make demo DEMO_FLAGS=-scene=keystone` passes it.
//
// It starts kube-apiserver and etcd (envtest) with real kube-controller-manager
// (garbage collector, Deployment, ReplicaSet and Job controllers), kube-scheduler and
// kwok, and installs the Horizon and Keystone CRDs. Each scene runs its operator
// in-process (the log goes to a file whose path is printed at the end).
//
// # Horizon
//
// The Horizon scene applies the minimal sample Horizon
// (examples/horizon/config/samples/horizon_v1alpha1_horizon_minimal.yaml) in the
// namespace openstack.
//
// The operators that do not run here are played by the demo, with short pauses so
// that each step can be followed: the ClusterSecretStore openbao-cluster-store of the
// External Secrets Operator turns Ready, ESO syncs a random SECRET_KEY into the Secret
// of the ExternalSecret horizon-secret-key (the key is never printed), and a local
// HTTP server answers the health check's request for the login page with an HTML page
// holding a form that posts to /auth/login/.
//
// The demo then shows:
//
//  1. every condition of the Horizon until Ready is True, as a table redrawn in place
//     when standard output is a terminal and as one line per change otherwise;
//  2. a rotation of the SECRET_KEY: the pod-template annotation
//     horizon.openstack.c5c3.io/secret-key-hash changes, a new ReplicaSet rolls out and
//     Ready returns to True;
//  3. several changes of spec.timeZone: a new content-addressed ConfigMap each time,
//     and the prune keeping the current ConfigMap, the three newest older ones and every
//     one a ReplicaSet still mounts, deleting the others.
//
// # Keystone
//
// The Keystone scene runs the Keystone operator as examples/keystone/cmd wires it,
// with its KeystoneIdentityBackend controller, and applies the minimal sample Keystone
// (examples/keystone/config/samples/keystone_v1alpha1_keystone_minimal.yaml) in the
// namespace openstack, next to a MariaDB "mariadb" that is not Ready yet. The demo
// plays, each when the Keystone's conditions ask for it: the ClusterSecretStore turning
// Ready (unless the Horizon scene left it so), ESO syncing a random admin password into
// the Secret of the ExternalSecret keystone-admin-password (never printed), the
// key-restore ExternalSecrets of the fernet and credential repositories finding no
// backup (a first install, so the operator generates the keys), and mariadb-operator
// reporting the MariaDB, then the Database, User and Grant Ready. The db-sync and
// bootstrap Jobs complete through the real Job controller on kwok's fake node.
//
// A local HTTP server plays the identity API: it answers the health check's GET /v3
// with a version document of v3.14 and hands every other request to the stand-in of
// package keystonetest (examples/keystone/keystoneapi/keystonetest), which serves the
// tokens, domains and OS-FEDERATION identity providers, mappings and protocols the
// KeystoneIdentityBackend controller calls. It accepts the admin password ESO synced,
// as the bootstrap would set it. The controller is given that server's URL as its
// Options.KeystoneURL, loopback in its outbound policy, and a poll interval of 2 s
// (the command's is 15 s) for the Secrets it waits for.
//
// The demo then shows:
//
//  1. every condition of the Keystone until Ready is True;
//  2. a fernet key rotation as the rotation CronJob's pod performs it
//     (controller.RotateKeys, its clock past the rotation interval): the primary key
//     index moves, FernetKeysReady reports the new repository and Ready stays True.
//     Only the indices and their roles are printed, never a key;
//  3. identity providers: the sample KeystoneIdentityBackend corp-sso
//     (examples/keystone/config/samples/keystone_v1alpha1_keystoneidentitybackend_federation.yaml,
//     an OpenID Connect provider corp-oidc) with a SAML provider corp-saml the demo
//     adds (metadata inline, key pair from the Secret of the Certificate corp-saml-sp).
//     The demo creates the ExternalSecret corp-sso-client and the Certificate, plays
//     ESO syncing a random client secret and cert-manager issuing the key pair, each
//     while FederationReady says WaitingForFederationSecret, and shows every condition
//     of the backend until Ready is True (DomainReady, FederationReady,
//     ConfigProjected), the providers and protocols as the played identity API returns
//     them (GET /v3/OS-FEDERATION/identity_providers/{id} and its protocol), the
//     Keystone Ready again with IdentityBackendsReady naming the federation Secret, and
//     that Secret's name and data keys. No value of a Secret is printed.
//
// # Failures
//
// Each phase is bounded (three minutes); a phase that does not finish makes the demo
// exit with status 1 and a message that names the condition that is not True (of the
// Horizon or the Keystone), with its reason and message. At the end of each scene it
// prints the kubectl commands that show the same on a real cluster.
//
// Run it with `make demo`, which provides the envtest binaries (hack/envtest.sh).
package main
