// Package world plays, on envtest, the controllers a custom resource depends on: the
// External Secrets Operator (stores, ExternalSecrets from an in-memory backend,
// PushSecrets into it), mariadb-operator (MariaDB, Database, User, Grant), cert-manager
// Certificates, Gateway API HTTPRoutes and, where no real controller runs, Deployments
// and Jobs.
//
// A [World] is built once per test (or per conformance run) with what to play, and
// [World.Play] is called on every poll while the test waits. Play is idempotent: it
// writes only what is not already so, so a converged world costs reads and wakes no
// controller. Its signature is that of conformance.Options.MakeReady:
//
//	w := world.New(env.Client,
//		world.WithSecret("app/admin", map[string][]byte{"password": []byte("s3cr3t-long-enough")}),
//		world.WithMariaDB("mariadb"))
//	conformance.Run(t, conformance.Options{..., MakeReady: w.Play})
//
// and [World.Hook] hands it to a condition wait that plays while it waits:
//
//	testenv.ExpectConditionWhile(t, env.Client, cr, "Ready", metav1.ConditionTrue, w.Hook(cr))
//
// Play covers every object of the kinds it plays in the custom resource's namespace
// (testenv gives each test its own), whoever created it; it leaves objects being deleted
// alone, skips kinds whose API is not installed, and refuses a cluster-scoped custom
// resource ([ErrClusterScoped]). ExternalSecrets follow ESO: a value the backend lacks
// answers "no backup" (SecretDeleted) under deletionPolicy Delete, and fails the sync
// under Retain, which Play also returns as [ErrNoValue] naming the remote key, so a
// conformance run that never turns Ready says which [WithSecret] is missing. A test that needs a dependency to stay
// not Ready plays that one with package simulate instead.
//
// The package builds on testenv/simulate and does not import testenv.
package world
