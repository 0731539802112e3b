// Package tls manages cert-manager Certificates for operators built with the SDK.
//
// [EnsureCertificate] applies a Certificate through Server-Side Apply (package apply)
// with the owner as controller, and reports readiness as data: true once cert-manager
// has issued the certificate for the current spec, when the Secret named by
// spec.secretName holds it. The caller sets its own condition and requeues while the
// Certificate is not ready. A Ready condition observed for an older generation than the
// Certificate's spec (observedGeneration below metadata.generation) does not count:
// cert-manager has not issued for the new spec yet.
//
// An existing Certificate of the desired name that the owner does not control — made
// by kubectl or Helm, or controlled by another object — is never taken over: it is
// refused with an error wrapping apply.ErrNotControlled that names its controller, and
// one that is being deleted with apply.ErrBeingDeleted; it is left as it is. A nil
// *runtime.Scheme is refused with an error wrapping apply.ErrNilScheme.
//
// The package uses cert-manager's typed API (github.com/cert-manager/cert-manager
// v1.20, certmanager/v1); register it in the manager's scheme with
// certmanagerv1.AddToScheme.
package tls
