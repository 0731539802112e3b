package tls_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
	"github.com/c5c3/reconciler-sdk/tls"
)

// TestEnsureCertificateNeverTakesOver: an existing Certificate of the desired name that
// the owner does not control (made by kubectl or Helm, or controlled by another
// object) is refused and left exactly as it was; so is one that is being deleted.
func TestEnsureCertificateNeverTakesOver(t *testing.T) {
	tests := map[string]struct {
		prepare  func(t *testing.T, ns string, owner, cert client.Object)
		deleting bool
		want     error
		text     string
	}{
		"unowned": {
			prepare: func(*testing.T, string, client.Object, client.Object) {},
			want:    apply.ErrNotControlled, text: "has no controller",
		},
		"controlled by another owner": {
			prepare: func(t *testing.T, ns string, _, cert client.Object) {
				other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "helm-release", Namespace: ns}}
				if err := env.Client.Create(context.Background(), other); err != nil {
					t.Fatal(err)
				}
				if err := controllerutil.SetControllerReference(other, cert, env.Scheme); err != nil {
					t.Fatal(err)
				}
			},
			want: apply.ErrNotControlled, text: "is controlled by ConfigMap helm-release",
		},
		"being deleted": {
			prepare: func(t *testing.T, _ string, owner, cert client.Object) {
				if err := controllerutil.SetControllerReference(owner, cert, env.Scheme); err != nil {
					t.Fatal(err)
				}
			},
			deleting: true, want: apply.ErrBeingDeleted,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)
			existing := desiredCert(ns, "someone-elses.example.org")
			tc.prepare(t, ns, owner, existing)
			if tc.deleting {
				env.CreateBeingDeleted(t, existing)
			} else if err := env.Client.Create(ctx, existing); err != nil {
				t.Fatal(err)
			}
			before := &certmanagerv1.Certificate{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(existing), before); err != nil {
				t.Fatal(err)
			}

			ready, err := tls.EnsureCertificate(ctx, env.Client, env.Scheme, owner, desiredCert(ns))
			if ready || !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) ||
				!strings.Contains(err.Error(), "Certificate "+ns+"/identity-db") {
				t.Fatalf("ready=%v err=%v, want %v naming the Certificate and containing %q", ready, err, tc.want, tc.text)
			}
			after := &certmanagerv1.Certificate{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(existing), after); err != nil {
				t.Fatalf("the existing Certificate: %v, want it untouched", err)
			}
			if after.ResourceVersion != before.ResourceVersion || after.UID != before.UID {
				t.Errorf("the existing Certificate was written: resourceVersion %s -> %s", before.ResourceVersion, after.ResourceVersion)
			}
			if diff := cmp.Diff(before.OwnerReferences, after.OwnerReferences); diff != "" {
				t.Errorf("owner references changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"someone-elses.example.org"}, after.Spec.DNSNames); diff != "" {
				t.Errorf("dnsNames changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestEnsureCertificateFaultMatrix ensures a Certificate until cert-manager (its
// simulator) reports it Ready, with every API call failing once: the Certificate is
// never deleted or re-created, and every run converges to the Certificate of the run
// that never failed. A read never answers 409 and a timed-out read has no effect, so
// reads meet 500 and a cancelled context only.
func TestEnsureCertificateFaultMatrix(t *testing.T) {
	setup := func(t *testing.T) faults.Scenario {
		ns := env.Namespace(t)
		owner := newOwner(t, ns)
		k := client.ObjectKey{Namespace: ns, Name: "identity-db"}
		var uid string
		return faults.Scenario{
			Client: env.Client,
			Pass: func(ctx context.Context, c client.Client) (ctrl.Result, error) {
				ready, err := tls.EnsureCertificate(ctx, c, env.Scheme, owner, desiredCert(ns))
				switch {
				case err != nil:
					return ctrl.Result{}, err
				case ready:
					return ctrl.Result{}, nil
				}
				if _, err := simulate.MarkCertificateReady(context.Background(), env.Client, k); err != nil {
					return ctrl.Result{}, err
				}
				return ctrl.Result{RequeueAfter: 10 * time.Second}, nil
			},
			Check: func(t *testing.T) {
				cert := &certmanagerv1.Certificate{}
				switch err := env.Client.Get(context.Background(), k, cert); {
				case apierrors.IsNotFound(err):
					if uid != "" {
						t.Error("the Certificate was deleted")
					}
				case err != nil:
					t.Fatal(err)
				case uid == "":
					uid = string(cert.UID)
				case uid != string(cert.UID):
					t.Error("the Certificate was re-created")
				}
			},
			State: func(t *testing.T) any {
				cert := &certmanagerv1.Certificate{}
				if err := env.Client.Get(context.Background(), k, cert); err != nil {
					t.Fatal(err)
				}
				ref := metav1.GetControllerOf(cert)
				if ref == nil {
					t.Fatal("the Certificate has no controller")
				}
				return struct {
					Spec       certmanagerv1.CertificateSpec
					Controller string
					Ready      bool
				}{cert.Spec, ref.Kind + " " + ref.Name, tls.IsCertificateReady(cert)}
			},
		}
	}
	faults.Matrix{Setup: setup}.RunWritesAndReads(t)
}

// TestEnsureCertificateNilScheme: a nil scheme is an error wrapping apply.ErrNilScheme
// that names the Certificate, before any API call; never a panic.
func TestEnsureCertificateNilScheme(t *testing.T) {
	calls := 0
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(env.Scheme).Build(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, o client.Object, opts ...client.GetOption) error {
			calls++
			return c.Get(ctx, k, o, opts...)
		},
	})
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "identity", Namespace: "ns", UID: "uid-1"}}
	ready, err := tls.EnsureCertificate(context.Background(), c, nil, owner, desiredCert("ns"))
	if ready || !errors.Is(err, apply.ErrNilScheme) || !strings.Contains(err.Error(), "Certificate ns/identity-db") {
		t.Errorf("ready=%v err=%v, want apply.ErrNilScheme naming Certificate ns/identity-db", ready, err)
	}
	if calls != 0 {
		t.Errorf("%d API calls, want none", calls)
	}
}
