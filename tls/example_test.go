package tls_test

import (
	"context"
	"fmt"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/testenv/simulate"
	"github.com/c5c3/reconciler-sdk/tls"
)

// ExampleEnsureCertificate shows the DatabaseTLS step of a reconciler: ensure the
// Certificate, and requeue until cert-manager reports it Ready.
func ExampleEnsureCertificate() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c, scheme := env.Client, env.Scheme
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns.Name}}
	if err := c.Create(ctx, owner); err != nil {
		panic(err)
	}
	desired := func() *certmanagerv1.Certificate {
		return &certmanagerv1.Certificate{
			ObjectMeta: metav1.ObjectMeta{Name: "identity-db", Namespace: ns.Name},
			Spec: certmanagerv1.CertificateSpec{
				SecretName: "identity-db-tls",
				DNSNames:   []string{"identity-db." + ns.Name + ".svc"},
				IssuerRef:  cmmeta.IssuerReference{Name: "internal-ca", Kind: "ClusterIssuer"},
			},
		}
	}

	ready, err := tls.EnsureCertificate(ctx, c, scheme, owner, desired())
	fmt.Println("first pass ready:", ready, err)

	// cert-manager issues the certificate (simulated here).
	if _, err := simulate.MarkCertificateReady(ctx, c, client.ObjectKey{Namespace: ns.Name, Name: "identity-db"}); err != nil {
		panic(err)
	}
	ready, err = tls.EnsureCertificate(ctx, c, scheme, owner, desired())
	fmt.Println("next pass ready:", ready, err)
	// Output:
	// first pass ready: false <nil>
	// next pass ready: true <nil>
}
