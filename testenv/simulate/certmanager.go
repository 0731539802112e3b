package simulate

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MarkCertificateReady stands in for cert-manager, which envtest does not run: it
// issues a self-signed certificate for the Certificate's DNS names into the
// kubernetes.io/tls Secret named by spec.secretName and sets the Ready condition True
// for the current generation. It returns the updated Certificate.
func MarkCertificateReady(ctx context.Context, c client.Client, key client.ObjectKey) (*certmanagerv1.Certificate, error) {
	cert := &certmanagerv1.Certificate{}
	if err := c.Get(ctx, key, cert); err != nil {
		return nil, fmt.Errorf("simulate: mark Certificate %s ready: %w", key, err)
	}
	crt, keyPEM, err := selfSigned(cert.Spec.CommonName, cert.Spec.DNSNames)
	if err != nil {
		return nil, fmt.Errorf("simulate: mark Certificate %s ready: %w", key, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: cert.Spec.SecretName, Namespace: key.Namespace,
			Annotations: map[string]string{"cert-manager.io/certificate-name": key.Name}},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": crt},
	}
	if err := c.Create(ctx, secret); apierrors.IsAlreadyExists(err) {
		err = c.Update(ctx, secret)
		if err != nil {
			return nil, fmt.Errorf("simulate: update TLS Secret %s/%s: %w", key.Namespace, secret.Name, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("simulate: create TLS Secret %s/%s: %w", key.Namespace, secret.Name, err)
	}
	return setCertificateCondition(ctx, c, key, cmmeta.ConditionTrue, "Ready", "Certificate is up to date and has not expired")
}

// MarkCertificateNotReady sets the Certificate's Ready condition False with reason,
// as cert-manager does while it issues or when issuance fails.
func MarkCertificateNotReady(ctx context.Context, c client.Client, key client.ObjectKey, reason string) (*certmanagerv1.Certificate, error) {
	return setCertificateCondition(ctx, c, key, cmmeta.ConditionFalse, reason, "Issuing certificate as Secret does not exist")
}

func setCertificateCondition(ctx context.Context, c client.Client, key client.ObjectKey, status cmmeta.ConditionStatus, reason, msg string) (*certmanagerv1.Certificate, error) {
	cert := &certmanagerv1.Certificate{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, cert); err != nil {
			return err
		}
		now := metav1.Now()
		cond := certmanagerv1.CertificateCondition{
			Type: certmanagerv1.CertificateConditionReady, Status: status, Reason: reason,
			Message: msg, LastTransitionTime: &now, ObservedGeneration: cert.Generation,
		}
		replaced := false
		for i := range cert.Status.Conditions {
			if cert.Status.Conditions[i].Type == certmanagerv1.CertificateConditionReady {
				cert.Status.Conditions[i], replaced = cond, true
			}
		}
		if !replaced {
			cert.Status.Conditions = append(cert.Status.Conditions, cond)
		}
		return c.Status().Update(ctx, cert)
	})
	if err != nil {
		return nil, fmt.Errorf("simulate: set Certificate %s Ready=%s: %w", key, status, err)
	}
	return cert, nil
}

// selfSigned returns a PEM certificate and PEM private key for the names.
func selfSigned(commonName string, dnsNames []string) (certPEM, keyPEM []byte, err error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: commonName},
		DNSNames:     dnsNames,
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
