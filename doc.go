// Package reconcilersdk is the root of reconciler-sdk, a set of building blocks for
// Kubernetes operators that manage OpenStack services (Keystone, Horizon, Glance, ...)
// and, more generally, any operator whose custom resource owns a tree of children.
//
// The root package holds no code; the packages below it do, each with one concern:
//
//   - apply: the Server-Side Apply primitive (EnsureObject, FieldManager) every Ensure*
//     helper builds on: one field manager, ForceOwnership, conflict retry, the controller
//     owner reference re-asserted on every call, and converged applies that never write.
//   - testenv: the test kit: one envtest control plane (kube-apiserver and etcd) per test
//     package with the upstream CRDs of External Secrets Operator, cert-manager,
//     mariadb-operator, Gateway API and VerticalPodAutoscaler, a namespace per test,
//     request counting and status simulators for controllers envtest does not run.
//
// The remaining packages of the design (config, policy, deployment, job, tls, secrets,
// database, satellite and reconcile) and the example operators under examples/ arrive
// one capability at a time; README.md tracks what has landed.
//
// # How the pieces compose
//
// A reconciler fetches its custom resource, then runs a table of steps. Each step builds
// the desired child objects from scratch and hands them to apply.EnsureObject (or a
// higher-level Ensure* helper built on it), which applies them under the SDK's field
// manager with the custom resource as controller. Readiness comes back as data, the
// step sets a condition and asks for a requeue when a child is not ready yet.
package reconcilersdk
