// Command demo runs the Horizon example operator (examples/horizon) against a local
// control plane and shows what it does, step by step.
//
// It starts kube-apiserver and etcd (envtest) with real kube-controller-manager
// (garbage collector, Deployment and ReplicaSet controllers), kube-scheduler and kwok,
// installs the Horizon CRD, runs the operator in-process (its log goes to a file whose
// path is printed at the end) and applies the minimal sample Horizon
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
// Each phase is bounded (three minutes); a phase that does not finish makes the demo
// exit with status 1 and a message that names the condition that is not True, with
// its reason and message. At the end it prints the kubectl commands that show the same
// on a real cluster.
//
// Run it with `make demo`, which provides the envtest binaries (hack/envtest.sh).
package main
