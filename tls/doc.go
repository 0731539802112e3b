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
// The fields of the desired Certificate's spec are owned by the operator's field manager
// and restored when another manager changes them; spec fields it leaves unset are left
// to others. Ownership follows the SDK's rule (package [apply], "Ownership"): a
// Certificate the owner does not control, or one being deleted, is refused and left as
// it is. A nil *runtime.Scheme is refused with an error wrapping [apply.ErrNilScheme].
//
// The package uses cert-manager's typed API (github.com/cert-manager/cert-manager
// v1.20, certmanager/v1); register it in the manager's scheme with
// certmanagerv1.AddToScheme.
//
// # Footprint
//
// Per helper: what it reads and writes, which reads start an informer when the client is
// a manager's cached client (a typed Get or List through mgr.GetClient() does; a read as
// unstructured, or through an APIReader, does not), and the RBAC verbs it needs, as
// the +kubebuilder:rbac markers in rbac.go grant them (rbac/tls/role.yaml). list and
// watch come with every get: a cached read lists and watches the kind.
//
//   - [EnsureCertificate]: gets the Certificate (the control check of apply.EnsureObject;
//     informer: Certificates) and applies it. RBAC: cert-manager.io certificates get, list,
//     watch, create, patch. The Secret cert-manager writes is not read.
//   - [IsCertificateReady]: no API call.
package tls
