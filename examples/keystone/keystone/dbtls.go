package keystone

import (
	"context"
	"fmt"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/secrets"
	"github.com/c5c3/reconciler-sdk/tls"
)

// DatabaseTLSDir is where the pods and Jobs mount the database client certificate's
// Secret (tls.crt, tls.key and ca.crt, as cert-manager issues it).
const DatabaseTLSDir = "/etc/keystone/db-tls"

// DatabaseCAFile is the CA file the connection URL names (ssl_ca) when the database
// connection uses TLS.
const DatabaseCAFile = DatabaseTLSDir + "/ca.crt"

// DatabaseCertificateName is the cert-manager Certificate of the database client
// certificate.
func DatabaseCertificateName(k *v1alpha1.Keystone) string { return k.Name + "-db-client" }

// DatabaseCertificateSecretName is the Secret cert-manager issues the database client
// certificate into.
func DatabaseCertificateSecretName(k *v1alpha1.Keystone) string { return k.Name + "-db-client-tls" }

// reconcileDatabaseTLS is the DatabaseTLS row: with spec.database.tls the client
// certificate of the database account, issued by cert-manager; without it none (a
// Certificate the Keystone made before is deleted, one of someone else's is left).
func (r *Reconciler) reconcileDatabaseTLS(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	key := client.ObjectKey{Namespace: k.Namespace, Name: DatabaseCertificateName(k)}
	if k.Spec.Database.TLS == nil {
		if _, err := apply.DeleteControlled(ctx, target.Client, k, &certmanagerv1.Certificate{}, key); err != nil {
			return reconcile.Outcome{}, err
		}
		return reconcile.Done(reconcile.TrueCondition(ConditionDatabaseTLSReady, ReasonTLSNotRequired,
			"the database connection does not use TLS")), nil
	}
	ready, err := tls.EnsureCertificate(ctx, target.Client, target.Client.Scheme(), k, desiredCertificate(k))
	if err != nil {
		return reconcile.Outcome{}, err
	}
	if !ready {
		return reconcile.Requeue(reconcile.FalseCondition(ConditionDatabaseTLSReady, ReasonWaitingForCertificate,
			fmt.Sprintf("waiting for cert-manager to issue Certificate %s", key)), secrets.PollInterval), nil
	}
	return reconcile.Done(reconcile.TrueCondition(ConditionDatabaseTLSReady, ReasonCertificateReady,
		fmt.Sprintf("Certificate %s issued into Secret %s", key, DatabaseCertificateSecretName(k)))), nil
}

// desiredCertificate is the client certificate of the database account: its common
// name is the account's user name, its issuer spec.database.tls.issuerRef.
func desiredCertificate(k *v1alpha1.Keystone) *certmanagerv1.Certificate {
	issuer := k.Spec.Database.TLS.IssuerRef
	return &certmanagerv1.Certificate{
		ObjectMeta: metav1.ObjectMeta{Name: DatabaseCertificateName(k), Namespace: k.Namespace, Labels: labels(k)},
		Spec: certmanagerv1.CertificateSpec{
			CommonName: databaseUser(k),
			SecretName: DatabaseCertificateSecretName(k),
			IssuerRef:  cmmeta.IssuerReference{Name: issuer.Name, Kind: issuer.Kind, Group: "cert-manager.io"},
			Usages:     []certmanagerv1.KeyUsage{certmanagerv1.UsageClientAuth, certmanagerv1.UsageDigitalSignature},
		},
	}
}
