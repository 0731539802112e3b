package testenv

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	certutil "k8s.io/client-go/util/cert"
)

// FreeAddress returns a loopback address ("127.0.0.1:port") that no listener holds at
// the moment of the call, for a server a test starts right after (metrics, probes).
func FreeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: free address: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("testenv: free address: %v", err)
	}
	return addr
}

// FreePort is the port of [FreeAddress].
func FreePort(t testing.TB) int {
	t.Helper()
	_, port, err := net.SplitHostPort(FreeAddress(t))
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	return p
}

// ServingCertDir writes a self-signed tls.crt and tls.key for 127.0.0.1 into a new
// directory, removed when the test ends, and returns it: the certificate directory of
// a webhook or metrics server a test starts (operator.Options.WebhookCertDir).
func ServingCertDir(t testing.TB) string {
	t.Helper()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("serving.test", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		t.Fatalf("testenv: serving certificate: %v", err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatalf("testenv: serving certificate: %v", err)
		}
	}
	return dir
}
