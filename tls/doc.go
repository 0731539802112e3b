// Package tls manages cert-manager Certificates for operators built with the SDK.
//
// [EnsureCertificate] applies a Certificate through Server-Side Apply (package apply)
// with the owner as controller, and reports readiness as data: true once cert-manager
// has issued the certificate for the current spec, when the Secret named by
// spec.secretName holds it. The caller sets its own condition and requeues while the
// Certificate is not ready.
//
// The package uses cert-manager's typed API (github.com/cert-manager/cert-manager
// v1.20, certmanager/v1); register it in the manager's scheme with
// certmanagerv1.AddToScheme.
package tls
