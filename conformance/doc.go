// Package conformance is the behavioural suite an operator built with the SDK runs
// against itself: one call in the operator's own `go test` runs every promise the SDK
// makes about a reconciler on the kit's envtest ([testenv]), with real controllers
// where they matter, and reports each broken promise with the object, the field and
// the fix.
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, conformance.Options{
//			Env:              env, // testenv.Main with the CRDs and Controllers: true
//			FieldManager:     "memo-operator",
//			Start:            startOperator, // runs the manager, registers run.Wrap(reconciler)
//			Samples:          []client.Object{sampleMemo()},
//			Invalid:          []conformance.InvalidSample{{Object: badMemo(), Field: "spec.port"}},
//			ClusterRolePaths: []string{"../config/rbac/role.yaml"},
//			ExpectNoRequests: true,
//		})
//	}
//
// Each check is a subtest named after it, so `go test -run 'TestConformance/Quiescence'`
// runs one. Each starts the operator afresh (Options.Start, on a rest.Config the suite
// instruments) in a fresh namespace, creates the samples there, and waits until each is
// Ready, calling Options.MakeReady on every poll to play the controllers envtest does
// not run. [RunCheck] runs one check and returns its findings, each a *[Violation]
// (errors.Is [ErrViolation]); [Checks] lists the names.
//
// # What the suite sees
//
// Start must register its reconciler as run.Wrap(reconciler): every pass then carries
// its identity in its context, so each request the operator sends is attributed to the
// pass that sent it (requests outside a pass, such as informers and event
// broadcasters, are kept apart), the suite sees each pass's result and error, and it
// runs passes of its own by calling the wrapped reconciler directly. The operator's
// children are the objects of the CR's namespace whose managedFields name
// Options.FieldManager (Events excluded). Its logs are what it writes through
// RunOptions.Logger up to V(7) ([MaxVerbosity]), errors included — client-go's among
// them, which log through the logger of the request's context: at V(8) and above
// client-go dumps every request and response body ("Request Body", "Response Body"),
// the data of each Secret the operator reads or writes, and those levels are not
// captured (client-go asks the logger first and renders nothing). Its metrics are what
// it registers on RunOptions.Registerer, its events what the API server stores.
//
// Some children are write-once: the operator creates them and never writes them
// again. The suite recognises a Job carrying job.PodSpecHashAnnotation (job.RunJob's
// re-run key; a Job is never updated in place) and a ConfigMap or Secret with
// immutable: true (config.CreateImmutableConfigMap, CreateImmutableSecret);
// Options.WriteOnce declares the others, such as a credential Secret of
// secrets.EnsureGeneratedSecret, which carries no mark.
//
// # The checks and what they promise
//
//   - Convergence: each valid sample converges within Options.MaxPasses passes and
//     Options.Timeout: kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status, which Flux's
//     health checks use) reads it as Current — not being deleted,
//     status.observedGeneration (when the CR has it) equal to metadata.generation, no
//     Reconciling or Stalled condition True, no Ready condition False or Unknown — and
//     its Ready condition is True with observedGeneration equal to metadata.generation
//     (kstatus alone calls a CR that has no such conditions yet Current). A violation
//     names the CR and what kstatus said, its status and message.
//   - Quiescence: once Ready, a pass writes nothing (no POST, PUT, PATCH or DELETE, by
//     the pass or outside it while it runs) and moves no resourceVersion of the CR or a
//     child through the operator's field manager; with Options.ExpectNoRequests it sends
//     no request at all. The suite runs passes until one is quiet, then three more.
//   - Ownership: every child has a controller owner reference to a sample CR or the
//     claim of apply.ClaimLabels for one; nothing the operator writes during the check
//     lies outside the CR's namespace unless Options.OtherNamespaces declares it (the
//     objects of other namespaces written by Options.FieldManager are listed before the
//     operator starts and after the samples converge: run the suite where no other
//     instance of the operator writes meanwhile). No
//     child at all means Options.FieldManager is wrong, and is reported.
//   - Conditions: every condition carries the current observedGeneration and a reason
//     reconcile.ValidateReason accepts; Ready is True exactly when every sub-condition
//     (Options.SubConditions, or every other condition) is True; three further passes
//     change no condition (status, reason, message, lastTransitionTime).
//   - Errors: no pass returns a non-zero result together with an error. Then, for each
//     client verb (testenv.Verbs) and each of 409 Conflict, 500 and a timeout (the
//     write served, its answer lost), the suite changes an operator-owned label of
//     every child but the write-once ones (and deletes one child, for the verbs a
//     re-creation and a status flip use), arms the fault for the next such request of
//     a pass and runs passes until it fires. The pass that met it must not hide the
//     failure: it returns an error (controller-runtime logs it and runs the pass again
//     with backoff; that is how a step whose condition has no False reason fails), or
//     it sends the failed request again and that one succeeds, or it writes the CR's
//     status after the fault, or the stored status no longer reports Ready=True. A
//     pass that returns no error, retries nothing, writes no status and leaves
//     Ready=True is reported (a fault on the read of the CR or on the status write
//     itself is left out: the pass could not write then). Once the fault is gone the
//     CRs converge again, no pass has deleted a child, and every child that existed
//     before or right after the fault keeps its UID. A verb no pass used is logged as
//     not exercised.
//   - Drift: a label of a child that the operator's field manager owns (found from
//     managedFields; apply.ManagedByLabel and the claim labels, which select the
//     operator's cache, are left alone), set to another value by another client, is
//     restored; a child deleted by another client is re-created. Each child is drifted
//     from a converged world (the suite waits for Ready again between children), and
//     the suite runs passes of the owning CR until the repair shows, at most
//     Options.MaxPasses of them. A write-once child is held to what write-once means
//     instead: its drifted label may stay, but the three passes that follow and the
//     wait for Ready leave the child itself alone — it keeps its UID (a Job is not run
//     again, a credential is not minted again) and, a ConfigMap or Secret, every value
//     of its data. Deleted, it is re-created, as for any child (deleting a Job runs it
//     again, which is how job.RunJob is told to); a Secret that comes back with other
//     data — a credential generated anew, as secrets.EnsureGeneratedSecret does without
//     GeneratedSecret.RestoreFrom or with an empty backup — must have been reported: a
//     log line (up to V(7)) or an Event the operator wrote after the deletion names the
//     Secret (EnsureGeneratedSecret logs "generated credential Secret" with its
//     namespace/name). Otherwise the credential was minted silently, and the finding
//     names the Secret and the key, never a value.
//   - Deletion: deleting the CRs leaves no finalizer behind (each CR is gone within the
//     timeout) and the garbage collector takes every child. It needs the Env to run
//     real controllers (testenv.Options{Controllers: true}); otherwise the check fails
//     and says so.
//   - Validation: every Options.Invalid sample is refused at admission (CRD schema, CEL
//     rule or webhook) with a message that names its Field.
//   - Secrets: after convergence and three more passes, no value of a Secret of the
//     namespace (MinSecretLength bytes or longer, as is or base64-encoded) appears in
//     the operator's logs (up to V(7): client-go's body dumps at V(8) are not
//     captured), the namespace's Events (core and events.k8s.io), the CRs' status or
//     the operator's metrics. The finding names the Secret, the key and where the
//     value showed, never the value.
//   - LeastPrivilege: the operator converges as a user bound only to the ClusterRoles
//     of Options.ClusterRolePaths (testenv.LoadClusterRoles, [testenv.Env.ConfigAs]);
//     when it does not, the finding lists every request the API server refused.
//   - TwoReplicas: two instances reconciling the same CRs at once converge; passes of
//     the two in turn change no condition, and leave the children as they were (no
//     child replaced, none added).
//   - Sharded: three instances started as members of one shard ring
//     ([RunOptions.Sharded]: multicluster.OperatorOptions.Sharded, package shard)
//     converge every sample, and no CR is reconciled by two of them at the same time.
//
// Options.Skip opts out of a check with a reason, which the skipped subtest reports; an
// empty reason is refused.
//
// # Cost
//
// Every check converges the samples once; Errors does it once per verb and fault
// (twenty-seven times). For a toy operator whose samples are Ready in under a second,
// the whole suite takes about fifteen seconds; an operator whose samples wait for a
// Deployment's rollout takes that rollout's time per convergence.
package conformance
