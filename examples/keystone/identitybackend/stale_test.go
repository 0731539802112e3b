package identitybackend_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystoneapi/keystonetest"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// laggingClient is a cache that lags behind the API server: while a copy is set
// (serve), every read of that backend returns the copy, as an informer that has not
// yet seen the later writes does. Everything else goes to the API server.
type laggingClient struct {
	client.Client
	mu     sync.Mutex
	old    *v1alpha1.KeystoneIdentityBackend
	served int
}

// serve makes the reads of old's backend return old until serve(nil).
func (c *laggingClient) serve(old *v1alpha1.KeystoneIdentityBackend) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.old, c.served = old, 0
}

// Get returns the copy serve set for its backend, the API server's object otherwise.
func (c *laggingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b, ok := obj.(*v1alpha1.KeystoneIdentityBackend); ok && c.old != nil && key == client.ObjectKeyFromObject(c.old) {
		c.old.DeepCopyInto(b)
		c.served++
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestLaggingCache runs a pass of a registered backend that reads the backend from a
// cache that has not yet seen the status writes that registered its domain or its
// identity providers, as a pass that starts right after the registering one may: while
// Keystone does not answer the domain lookup, while it does not answer the provider
// lookup, and while it answers, holding the objects the registering pass created. The
// pass decides from the lagging copy (DomainReady or FederationReady False, the domain
// or the providers adopted), and its status write conflicts: reconcile.RunPass keeps what the
// registering pass stored wherever it differs from what this pass read, so every
// condition stays as stored (a True one True, with its lastTransitionTime), and
// status.domainID and status.identityProviders (what deleting the backend deletes)
// unchanged; the pass asks to run again within reconcile.StaleStatusRequeue.
func TestLaggingCache(t *testing.T) {
	ns := env.Namespace(t)
	op := startManager(t, ns, false)
	ctx := context.Background()
	lag := &laggingClient{Client: env.Client}
	opts := op.opts
	opts.Client = apply.NewApplier(lag, apply.ApplierOptions{FieldManager: fieldManager})
	rec, err := identitybackend.NewReconciler(op.resolver, opts)
	if err != nil {
		t.Fatal(err)
	}
	reconcileOnce := func(b *v1alpha1.KeystoneIdentityBackend) (ctrl.Result, error) {
		return rec.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(b)})
	}
	pass := func(t *testing.T, b *v1alpha1.KeystoneIdentityBackend) {
		t.Helper()
		if _, err := reconcileOnce(b); err != nil {
			t.Fatalf("pass: %v", err)
		}
	}
	stored := func(t *testing.T, b *v1alpha1.KeystoneIdentityBackend) *v1alpha1.KeystoneIdentityBackend {
		t.Helper()
		got := &v1alpha1.KeystoneIdentityBackend{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(b), got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	cond := func(t *testing.T, b *v1alpha1.KeystoneIdentityBackend, condType string) metav1.Condition {
		t.Helper()
		c := meta.FindStatusCondition(b.Status.Conditions, condType)
		if c == nil {
			t.Fatalf("no %s on %+v", condType, b.Status)
		}
		return *c
	}
	// register creates backend name (domain name), of a Keystone of its own, and
	// registers it in two passes,
	// returning the backend as stored before the first pass (no status), after it
	// (the domain and the SAML provider registered; the OpenID Connect provider waits
	// for its client secret) and after the second (everything registered).
	register := func(t *testing.T, name string) (created, waiting, registered *v1alpha1.KeystoneIdentityBackend) {
		t.Helper()
		// A Keystone of its own: a Keystone serves one OpenID Connect provider.
		k := newKeystone(t, ns, name+"-keystone", "http://"+name+"-keystone."+ns+".svc:5000")
		newAdminSecret(t, k, adminPassword)
		b := newFederatedBackend(t, k, name, name)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-client"}}
		if err := env.Client.Delete(ctx, secret); err != nil {
			t.Fatal(err)
		}
		created = stored(t, b)
		pass(t, b)
		waiting = stored(t, b)
		if c := cond(t, waiting, condDomain); c.Status != metav1.ConditionTrue || c.Reason != identitybackend.ReasonDomainCreated {
			t.Fatalf("after the first pass DomainReady = %s/%s %q", c.Status, c.Reason, c.Message)
		}
		if c := cond(t, waiting, condFederation); c.Reason != identitybackend.ReasonWaitingForFederationSecret {
			t.Fatalf("after the first pass FederationReady = %s/%s %q", c.Status, c.Reason, c.Message)
		}
		newSecret(t, ns, name+"-client", "secret", clientSecret)
		pass(t, b)
		registered = stored(t, b)
		for _, condType := range []string{condDomain, condFederation} {
			if c := cond(t, registered, condType); c.Status != metav1.ConditionTrue {
				t.Fatalf("after the second pass %s = %s/%s %q", condType, c.Status, c.Reason, c.Message)
			}
		}
		if len(registered.Status.IdentityProviders) != 2 {
			t.Fatalf("status.identityProviders = %+v, want both providers", registered.Status.IdentityProviders)
		}
		return created, waiting, registered
	}

	unavailable := func(down bool) { op.keystone.SetUnavailable(down) }
	federationDown := func(down bool) {
		status := 0
		if down {
			status = http.StatusServiceUnavailable
		}
		op.keystone.Refuse(http.MethodGet, keystonetest.RouteIdentityProvider, status, "Service Unavailable")
	}
	for i, tc := range []struct {
		name         string
		beforeDomain bool // the cached copy has no status; else it has the first pass's
		outage       func(down bool)
		// The pass ends in the Conflict of the federation finalizer's patch: the cached
		// copy, older than the finalizer, carries an older resourceVersion.
		finalizerConflict bool
	}{
		{"domain lookup unanswered, cached before the domain", true, unavailable, false},
		{"domain lookup unanswered, cached before the providers", false, unavailable, false},
		{"provider lookup unanswered, cached before the providers", false, federationDown, false},
		{"Keystone answering, cached before the domain", true, func(bool) {}, true},
		{"Keystone answering, cached before the providers", false, func(bool) {}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created, waiting, registered := register(t, fmt.Sprintf("corp%d", i))
			old := waiting
			if tc.beforeDomain {
				old = created
			}
			tc.outage(true)
			lag.serve(old)
			res, err := reconcileOnce(registered)
			served := lag.served
			lag.serve(nil)
			tc.outage(false)
			if served == 0 {
				t.Fatal("the pass did not read the lagging copy")
			}
			switch {
			case tc.finalizerConflict:
				// The error's retry runs the pass again.
				if !apierrors.IsConflict(err) || !res.IsZero() {
					t.Fatalf("the lagging pass = %+v, %v; want the finalizer patch's Conflict alone", res, err)
				}
			case err != nil:
				t.Fatalf("the lagging pass: %v", err)
			case res.RequeueAfter <= 0 || res.RequeueAfter > reconcile.StaleStatusRequeue:
				t.Errorf("the lagging pass's result = %+v, want a requeue within %s to decide from the stored backend", res, reconcile.StaleStatusRequeue)
			}
			got := stored(t, registered)
			for _, w := range registered.Status.Conditions {
				if g := cond(t, got, w.Type); g != w {
					t.Errorf("%s = %s/%s %q (since %s), want it as registered: %s/%s %q (since %s)", w.Type,
						g.Status, g.Reason, g.Message, g.LastTransitionTime, w.Status, w.Reason, w.Message, w.LastTransitionTime)
				}
			}
			if got.Status.DomainID != registered.Status.DomainID {
				t.Errorf("status.domainID = %q, want %q", got.Status.DomainID, registered.Status.DomainID)
			}
			if !reflect.DeepEqual(got.Status.IdentityProviders, registered.Status.IdentityProviders) {
				t.Errorf("status.identityProviders = %+v, want %+v", got.Status.IdentityProviders, registered.Status.IdentityProviders)
			}
		})
	}
}
