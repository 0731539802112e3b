// Package simulate writes the status that the controllers envtest does not run would
// write, so a test drives an operator through its dependencies on a real API server.
//
// Every simulator reads the object through the client it is given, writes through the
// status subresource (retrying on conflict), and returns the object as stored; errors
// name the kind and key and never carry a secret's value:
//
//   - workloads: [MarkDeploymentAvailable], [MarkJobComplete], [MarkJobFailed] (with
//     [SimulatedJob], so that a real Job controller leaves the Job alone);
//   - cert-manager: [MarkCertificateReady] (it also issues the TLS Secret),
//     [MarkCertificateNotReady];
//   - Gateway API: [SetHTTPRouteAccepted];
//   - External Secrets Operator: [MarkExternalSecretSynced] (it also writes the target
//     Secret), [MarkExternalSecretEmpty], [MarkPushSecretSynced], [MarkPushSecretFailed],
//     [MarkSecretStoreReady], [MarkClusterSecretStoreReady] and their NotReady
//     counterparts;
//     [EnsureClusterSecretStoreReady] creates a missing ClusterSecretStore first;
//   - mariadb-operator: [MarkMariaDBReady], [MarkDatabaseReady], [MarkUserReady],
//     [MarkGrantReady] and their NotReady counterparts.
//
// [SecretBackend] goes one step further and plays an in-memory secret backend (OpenBao,
// say) behind ESO v0.20: [SecretBackend.Push] runs a PushSecret and [SecretBackend.Sync]
// an ExternalSecret, so a test follows a credential from its Secret into the backend and
// back.
//
// With testenv's real controllers (Options.Controllers) Deployments and Jobs are the
// real controllers' business; the workload simulators remain for what those cannot
// produce on demand (a Job that fails permanently, marked [SimulatedJob]).
//
// The package does not import testenv. Package testenv/world builds on it to play every
// dependency of a custom resource at once. The old names in package testenv
// (testenv.MarkDeploymentAvailable, ...) are deprecated wrappers of these.
package simulate
