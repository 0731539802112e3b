package identitybackend_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/examples/keystone/identitybackend"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// TestStepFaults fails each API call of the IdentityBackends row in turn: the list of
// the backends, the read of a bind password, the create of the domains Secret and the
// delete of an older one. Each ends the pass with the error, sets
// IdentityBackendsReady False IdentityBackendsError naming the object, and never
// quotes a password.
func TestStepFaults(t *testing.T) {
	for _, tc := range []struct {
		verb faults.Verb
		nth  int
		want string
	}{
		{faults.VerbList, 1, "listing the KeystoneIdentityBackends of namespace"},
		{faults.VerbGet, 1, "reading the bind password of KeystoneIdentityBackend"},
		{faults.VerbCreate, 1, "writing the domains Secret of Keystone"},
		{faults.VerbDelete, 1, "pruning the older domains Secrets of Keystone"},
	} {
		t.Run(string(tc.verb), func(t *testing.T) {
			ns := env.Namespace(t)
			startOperator(t, ns)
			k := newKeystone(t, ns, "keystone", "http://keystone:5000")
			newAdminSecret(t, k, adminPassword)
			newSecret(t, ns, "corp-bind", "password", bindPassword)
			b := newBackend(t, k, "corp-ldap", "corp", "corp-bind")
			expectReason(t, b, condDomain, metav1.ConditionTrue, identitybackend.ReasonDomainCreated)
			ctx := context.Background()
			for i := range identitybackend.RetainDomainsSecrets + 1 { // older Secrets the prune deletes
				if _, err := config.CreateImmutableSecret(ctx, env.Client, env.Scheme, k, names.DomainsBaseName(k), ns,
					map[string][]byte{"old": []byte(fmt.Sprint(i))}); err != nil {
					t.Fatal(err)
				}
			}

			inj := faults.NewInjector()
			c := apply.NewApplier(inj.Client(env.Client), apply.ApplierOptions{FieldManager: fieldManager})
			inj.Arm(tc.verb, tc.nth, faults.Internal)
			_, err := identitybackend.NewStep(c).Reconcile(ctx, k)
			if !inj.Fired() || !errors.Is(err, faults.ErrInjected) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("step: %v (fired %v), want the injected fault under %q", err, inj.Fired(), tc.want)
			}
			cond := keystoneCondition(k)
			if cond.Status != metav1.ConditionFalse || cond.Reason != identitybackend.ReasonIdentityBackendsError ||
				!strings.Contains(cond.Message, tc.want) {
				t.Fatalf("IdentityBackendsReady = %s/%s %q", cond.Status, cond.Reason, cond.Message)
			}
			noSecretIn(t, err.Error())
			noSecretIn(t, cond.Message)

			inj.Disarm()
			if _, err := identitybackend.NewStep(c).Reconcile(ctx, k); err != nil {
				t.Fatalf("the step does not recover once the fault is gone: %v", err)
			}
			if cond := keystoneCondition(k); cond.Reason != identitybackend.ReasonIdentityBackendsProjected {
				t.Fatalf("after recovery: %s %q", cond.Reason, cond.Message)
			}
		})
	}
}

// TestReconcilerFaults fails each API call of a backend's pass in turn: the read of
// the backend, of its Keystone, of its bind password Secret, the list of its siblings
// and the status write. Each pass returns the error naming what it read and never
// quotes a password; the next pass converges.
func TestReconcilerFaults(t *testing.T) {
	for _, tc := range []struct {
		verb faults.Verb
		nth  int
		want string
	}{
		{faults.VerbGet, 1, "KeystoneIdentityBackend"},
		{faults.VerbGet, 2, "fetching parent Keystone"},
		{faults.VerbGet, 3, "reading the bind password of KeystoneIdentityBackend"},
		{faults.VerbList, 1, "listing the KeystoneIdentityBackends of namespace"},
		{faults.VerbStatusUpdate, 1, "KeystoneIdentityBackend"},
	} {
		t.Run(fmt.Sprintf("%s-%d", tc.verb, tc.nth), func(t *testing.T) {
			ns := env.Namespace(t)
			op := startManager(t, ns, false)
			k := newKeystone(t, ns, "keystone", "http://keystone:5000")
			newAdminSecret(t, k, adminPassword)
			newSecret(t, ns, "corp-bind", "password", bindPassword)
			b := newBackend(t, k, "corp-ldap", "corp", "corp-bind")

			inj := faults.NewInjector()
			opts := op.opts
			opts.Client = apply.NewApplier(inj.Client(env.Client), apply.ApplierOptions{FieldManager: fieldManager})
			rec, err := identitybackend.NewReconciler(op.resolver, opts)
			if err != nil {
				t.Fatal(err)
			}
			req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(b)}
			inj.Arm(tc.verb, tc.nth, faults.Internal)
			res, err := rec.Reconcile(context.Background(), req)
			if !inj.Fired() || !errors.Is(err, faults.ErrInjected) || !strings.Contains(err.Error(), tc.want) || !res.IsZero() {
				t.Fatalf("Reconcile = %+v, %v (fired %v), want only the injected fault under %q", res, err, inj.Fired(), tc.want)
			}
			noSecretIn(t, err.Error())

			inj.Disarm()
			if _, err := rec.Reconcile(context.Background(), req); err != nil {
				t.Fatalf("the pass does not recover once the fault is gone: %v", err)
			}
			want := identitybackend.ReasonDomainCreated
			if tc.verb == faults.VerbStatusUpdate {
				// The create went through but its status was lost: the next pass finds
				// a domain it has no record of.
				want = identitybackend.ReasonDomainAdopted
			}
			expectReason(t, b, condDomain, metav1.ConditionTrue, want)
		})
	}
}
