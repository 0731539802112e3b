package testenv_test

import (
	"crypto/tls"
	"net"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/c5c3/reconciler-sdk/testenv"
)

// FreePort can be listened on at once, and ServingCertDir's pair is a loadable key
// pair whose certificate names 127.0.0.1.
func TestFreePortAndServingCertDir(t *testing.T) {
	port := testenv.FreePort(t)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("listen on FreePort %d: %v", port, err)
	}
	_ = l.Close()
	dir := testenv.ServingCertDir(t)
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatalf("ServingCertDir's pair: %v", err)
	}
	if pair.Leaf == nil || pair.Leaf.VerifyHostname("127.0.0.1") != nil {
		t.Fatalf("ServingCertDir's certificate does not name 127.0.0.1")
	}
}
