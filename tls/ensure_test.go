package tls_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
	"github.com/c5c3/reconciler-sdk/tls"
)

func newOwner(t *testing.T, ns string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	return owner
}

func desiredCert(ns string, dnsNames ...string) *certmanagerv1.Certificate {
	if len(dnsNames) == 0 {
		dnsNames = []string{"identity-db.example.org"}
	}
	return &certmanagerv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Name: "identity-db", Namespace: ns},
		Spec: certmanagerv1.CertificateSpec{
			SecretName: "identity-db-tls",
			DNSNames:   dnsNames,
			IssuerRef:  cmmeta.IssuerReference{Name: "internal-ca", Kind: "ClusterIssuer"},
		},
	}
}

func TestEnsureCertificateLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	cert := desiredCert(ns)
	ready, err := tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, cert)
	if err != nil || ready {
		t.Fatalf("create: ready=%v err=%v, want (false, nil)", ready, err)
	}
	if ref := metav1.GetControllerOf(cert); ref == nil || ref.UID != owner.UID {
		t.Fatalf("controller reference = %+v, want owner %s", ref, owner.UID)
	}

	if _, err := simulate.MarkCertificateNotReady(ctx, env.Client, client.ObjectKeyFromObject(cert), "Issuing"); err != nil {
		t.Fatal(err)
	}
	if ready, err := tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, desiredCert(ns)); err != nil || ready {
		t.Fatalf("issuing: ready=%v err=%v, want (false, nil)", ready, err)
	}

	if _, err := simulate.MarkCertificateReady(ctx, env.Client, client.ObjectKeyFromObject(cert)); err != nil {
		t.Fatal(err)
	}
	issued := desiredCert(ns)
	ready, err = tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, issued)
	if err != nil || !ready {
		t.Fatalf("issued: ready=%v err=%v, want (true, nil)", ready, err)
	}
	secret := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "identity-db-tls"}, secret); err != nil {
		t.Fatalf("TLS secret: %v", err)
	}

	// A converged apply does not write.
	again := desiredCert(ns)
	if _, err := tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, again); err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != issued.ResourceVersion {
		t.Errorf("converged apply moved resourceVersion %s -> %s", issued.ResourceVersion, again.ResourceVersion)
	}

	// A spec change makes the old Ready condition stale until cert-manager re-issues.
	changed := desiredCert(ns, "identity-db.example.org", "db.identity.svc")
	ready, err = tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, changed)
	if err != nil || ready {
		t.Fatalf("after spec change: ready=%v err=%v, want (false, nil) until re-issued", ready, err)
	}
	stored := &certmanagerv1.Certificate{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(changed), stored); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"identity-db.example.org", "db.identity.svc"}, stored.Spec.DNSNames); diff != "" || stored.Generation == issued.Generation {
		t.Errorf("stored dnsNames at generation %d (was %d), want the new names at a new generation (-want +got):\n%s",
			stored.Generation, issued.Generation, diff)
	}
	if _, err := simulate.MarkCertificateReady(ctx, env.Client, client.ObjectKeyFromObject(cert)); err != nil {
		t.Fatal(err)
	}
	if ready, err := tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, desiredCert(ns, "identity-db.example.org", "db.identity.svc")); err != nil || !ready {
		t.Fatalf("re-issued: ready=%v err=%v, want (true, nil)", ready, err)
	}
}

func TestEnsureCertificateRestoresDriftAndKeepsOthersFields(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	if _, err := tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, desiredCert(ns)); err != nil {
		t.Fatal(err)
	}
	edited := &certmanagerv1.Certificate{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "identity-db"}, edited); err != nil {
		t.Fatal(err)
	}
	edited.Spec.SecretName = "hijacked"
	edited.Spec.RenewBefore = &metav1.Duration{Duration: 3600_000_000_000} // a field we never set
	if err := env.Client.Update(ctx, edited, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}
	got := desiredCert(ns)
	if _, err := tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.SecretName != "identity-db-tls" {
		t.Errorf("secretName = %q, want our value restored", got.Spec.SecretName)
	}
	if got.Spec.RenewBefore == nil {
		t.Error("renewBefore set by another manager was dropped")
	}
}

func TestEnsureCertificateErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	if _, err := tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, nil); !errors.Is(err, tls.ErrNilCertificate) || !errors.Is(err, apply.ErrNilObject) {
		t.Errorf("nil certificate: err = %v, want ErrNilCertificate and apply.ErrNilObject", err)
	}

	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	failing := interceptor.NewClient(base, interceptor.Funcs{
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "cert-manager.io", Resource: "certificates"}, "identity-db", errors.New("denied"))
		},
	})
	ready, err := tls.EnsureCertificate(ctx, failing, env.Scheme, owner, desiredCert(ns))
	if ready || !apierrors.IsForbidden(err) {
		t.Fatalf("ready=%v err=%v, want (false, Forbidden)", ready, err)
	}
	if want := "Certificate " + ns + "/identity-db"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
}

func TestIsCertificateReady(t *testing.T) {
	cond := func(status cmmeta.ConditionStatus, observed int64) certmanagerv1.CertificateCondition {
		return certmanagerv1.CertificateCondition{Type: certmanagerv1.CertificateConditionReady, Status: status, ObservedGeneration: observed}
	}
	cases := map[string]struct {
		cert *certmanagerv1.Certificate
		want bool
	}{
		"nil":                     {cert: nil, want: false},
		"no conditions":           {cert: &certmanagerv1.Certificate{}, want: false},
		"ready for current spec":  {cert: withCond(2, cond(cmmeta.ConditionTrue, 2)), want: true},
		"ready without observed":  {cert: withCond(2, cond(cmmeta.ConditionTrue, 0)), want: true},
		"ready for an older spec": {cert: withCond(3, cond(cmmeta.ConditionTrue, 2)), want: false},
		"not ready":               {cert: withCond(1, cond(cmmeta.ConditionFalse, 1)), want: false},
		"unknown":                 {cert: withCond(1, cond(cmmeta.ConditionUnknown, 1)), want: false},
		"only an issuing condition": {cert: withCond(1, certmanagerv1.CertificateCondition{
			Type: certmanagerv1.CertificateConditionIssuing, Status: cmmeta.ConditionTrue}), want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := tls.IsCertificateReady(tc.cert); got != tc.want {
				t.Errorf("IsCertificateReady = %v, want %v", got, tc.want)
			}
		})
	}
}

func withCond(generation int64, conds ...certmanagerv1.CertificateCondition) *certmanagerv1.Certificate {
	return &certmanagerv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Generation: generation},
		Status:     certmanagerv1.CertificateStatus{Conditions: conds},
	}
}
