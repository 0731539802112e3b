package httpauth

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// The file names TLSConfig reads in its certificate directory, as controller-runtime's
// metrics and webhook servers name them.
const (
	// CertName is the certificate (chain) file, PEM.
	CertName = "tls.crt"
	// KeyName is the private key file, PEM.
	KeyName = "tls.key"
)

// TLSConfig returns the TLS configuration of a server that serves the certificate
// CertName and key KeyName of certDir, reloaded whenever they change, or, when certDir
// is empty, a self-signed certificate made for this process (for localhost and
// 127.0.0.1): the connection is encrypted either way, and a client that knows no CA
// for it skips verification, as Prometheus does for a self-signed metrics endpoint.
// Only HTTP/1.1 is offered (no HTTP/2, as kubebuilder's scaffold does by default).
// watch runs the reloading until ctx ends; it returns at once when certDir is empty.
// A certDir without both files is an error naming them.
func TLSConfig(certDir string) (cfg *tls.Config, watch func(ctx context.Context) error, err error) {
	cfg = &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if certDir == "" {
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("httpauth: generate a self-signed certificate: %w", err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, nil, fmt.Errorf("httpauth: self-signed key pair: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
		return cfg, func(context.Context) error { return nil }, nil
	}
	certPath, keyPath := filepath.Join(certDir, CertName), filepath.Join(certDir, KeyName)
	for _, p := range []string{certPath, keyPath} {
		if _, err := os.Stat(p); err != nil {
			return nil, nil, fmt.Errorf("httpauth: certificate directory %s: %w", certDir, err)
		}
	}
	w, err := certwatcher.New(certPath, keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("httpauth: certificate %s and key %s: %w", certPath, keyPath, err)
	}
	cfg.GetCertificate = w.GetCertificate
	return cfg, w.Start, nil
}
