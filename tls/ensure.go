package tls

import (
	"context"
	"errors"
	"fmt"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
)

// ErrNilCertificate reports a nil Certificate passed to EnsureCertificate; the error
// wraps apply.ErrNilObject too, like every other helper's nil-object refusal.
var ErrNilCertificate = errors.New("certificate is nil")

// EnsureCertificate creates or updates the cert-manager Certificate cert, owned by
// owner, with [apply.EnsureObject] (the ownership rule included), and reports whether it
// is Ready for its current generation ([IsCertificateReady]); right after its creation
// it is not. On return cert holds the server's copy, status included.
func EnsureCertificate(
	ctx context.Context,
	c client.Client,
	scheme *runtime.Scheme,
	owner client.Object,
	cert *certmanagerv1.Certificate,
) (bool, error) {
	if cert == nil {
		return false, fmt.Errorf("ensure certificate: %w: %w", ErrNilCertificate, apply.ErrNilObject)
	}
	if err := apply.EnsureObject(ctx, c, scheme, owner, cert, apply.FieldManager); err != nil {
		return false, fmt.Errorf("ensure certificate: %w", err)
	}
	return IsCertificateReady(cert), nil
}

// IsCertificateReady reports whether cert has a Ready condition with status True that
// was observed for its current generation. A Ready condition left over from an older
// spec (observedGeneration below metadata.generation) does not count: cert-manager has
// not issued a certificate for the new spec yet. A condition without observedGeneration
// is taken at face value.
func IsCertificateReady(cert *certmanagerv1.Certificate) bool {
	if cert == nil {
		return false
	}
	for _, cond := range cert.Status.Conditions {
		if cond.Type != certmanagerv1.CertificateConditionReady {
			continue
		}
		if cond.ObservedGeneration != 0 && cond.ObservedGeneration < cert.Generation {
			return false
		}
		return cond.Status == cmmeta.ConditionTrue
	}
	return false
}
