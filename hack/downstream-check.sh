#!/usr/bin/env bash
# downstream-check.sh proves that the test kit and apply work from a module that imports
# the SDK (not only inside this repository): it writes a throwaway module that requires
# github.com/c5c3/reconciler-sdk (replaced by this checkout), with a TestMain on
# testenv.Main that applies a cert-manager Certificate, and runs its test on envtest.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
assets=$("$repo/hack/envtest.sh")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$work"
cat > go.mod <<MOD
module example.com/downstream-operator

go 1.26.8

require github.com/c5c3/reconciler-sdk v0.0.0

replace github.com/c5c3/reconciler-sdk => $repo
MOD
cat > downstream_test.go <<'GO'
package downstream

import (
	"context"
	"os"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, &env)) }

func TestDownstreamApplyCertificate(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	cert := &cmv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: cmv1.CertificateSpec{SecretName: "api-tls", DNSNames: []string{"api.example.org"},
			IssuerRef: cmmeta.IssuerReference{Name: "ca", Kind: "ClusterIssuer"}},
	}
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, cert, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if cert.UID == "" || metav1.GetControllerOf(cert) == nil {
		t.Fatalf("Certificate not applied with a controller reference: %+v", cert.ObjectMeta)
	}
}
GO
echo "downstream: resolving modules" >&2
GOFLAGS=-mod=mod go mod tidy >&2
# Keep the SDK's pinned versions: MVS must not have lifted anything the SDK pins.
for m in sigs.k8s.io/controller-runtime k8s.io/api k8s.io/client-go github.com/cert-manager/cert-manager; do
  want=$(cd "$repo" && go list -m -f '{{.Version}}' "$m")
  got=$(go list -m -f '{{.Version}}' "$m")
  [ "$want" = "$got" ] || { echo "downstream: $m resolved to $got, the SDK pins $want" >&2; exit 1; }
done
KUBEBUILDER_ASSETS="$assets" go test -count=1 ./...
