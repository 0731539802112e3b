#!/usr/bin/env bash
# downstream-check.sh proves that the test kit, its control-plane binaries and apply work
# from a module that imports the SDK (not only inside this repository): it writes a
# throwaway module that requires github.com/c5c3/reconciler-sdk (replaced by this
# checkout), gets the binaries there with `go run github.com/c5c3/reconciler-sdk/cmd/envtest`
# into an EMPTY asset cache (the Go build and module caches stay shared, so a warm
# machine pays only the link), and runs a test on testenv.Main with Controllers: true
# that applies a cert-manager Certificate and watches real controllers roll out a
# Deployment and garbage-collect it once its owner is deleted.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(cd "$(mktemp -d)" && pwd -P)
trap 'rm -rf "$work"' EXIT
# The asset cache is under XDG_CACHE_HOME, and so is Go's build cache by default: pin
# the Go caches to where they are now before pointing XDG_CACHE_HOME at an empty dir.
GOCACHE=$(go env GOCACHE)
GOMODCACHE=$(go env GOMODCACHE)
export GOCACHE GOMODCACHE

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
	"time"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Controllers: true}, &env))
}

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

// The real Deployment and ReplicaSet controllers, kube-scheduler and kwok roll a
// Deployment out; the garbage collector removes it once its owner is deleted.
func TestDownstreamControllersRollOutAndCollect(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "api"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "example.org/api:1"}}},
			},
		},
	}
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, dep, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, "Deployment api has 2 available replicas", func(ctx context.Context) (bool, error) {
		var got appsv1.Deployment
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), &got); err != nil {
			return false, err
		}
		return got.Status.AvailableReplicas == 2, nil
	})
	if err := env.Client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, "the garbage collector deletes Deployment api", func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), &appsv1.Deployment{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
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
# The binaries, as an operator author gets them in their own module: no KUBEBUILDER_ASSETS,
# no setup-envtest (it ships no kube-controller-manager, kube-scheduler or kwok), an
# empty asset cache.
echo "downstream: building the envtest binaries into an empty asset cache" >&2
start=$SECONDS
assets=$(env -u KUBEBUILDER_ASSETS XDG_CACHE_HOME="$work/xdg-cache" \
  go run github.com/c5c3/reconciler-sdk/cmd/envtest -no-download)
echo "downstream: envtest binaries in $assets after $((SECONDS - start))s" >&2
case "$assets" in
"$work/xdg-cache/reconciler-sdk/envtest/"*) ;;
*) echo "downstream: cmd/envtest printed $assets, not a directory of the empty asset cache" >&2; exit 1 ;;
esac
KUBEBUILDER_ASSETS="$assets" go test -count=1 -v ./...
