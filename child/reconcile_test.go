package child_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/child"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// After a pass, the child's key holds:
const (
	ours      = "ours"      // the desired child, controlled by the owner
	gone      = "gone"      // nothing: the owner's child was deleted
	absent    = "absent"    // nothing, as before
	unchanged = "unchanged" // the existing object, unwritten
)

var errRefused = errors.New("refused by the check")

func TestReconcile(t *testing.T) {
	type want struct {
		out     reconcile.Outcome
		err     error
		errText string // with the namespace replaced by NS
		writes  int
		after   string
		// failed: the outcome is False with this reason and the error's text.
		failed string
	}
	foreign := noneMessage + "; ConfigMap NS/child is not controlled by owner and was left in place"
	applied := reconcile.Done(reconcile.TrueCondition(condType, reasonReady, "ConfigMap NS/child applied"))
	none := reconcile.Done(reconcile.TrueCondition(condType, reasonNone, noneMessage))
	cases := map[string]struct {
		reason   string
		existing *existing
		wanted   bool
		mutate   func(*child.Optional[*corev1.ConfigMap])
		want     want
	}{
		"wanted, absent": {
			reason: "A wanted child is created with the owner as controller.",
			wanted: true,
			want:   want{out: applied, writes: 1, after: ours},
		},
		"wanted, the owner's": {
			reason:   "The owner's child is applied over.",
			existing: &existing{controller: "owner"}, wanted: true,
			want: want{out: applied, writes: 1, after: ours},
		},
		"not wanted, absent": {
			reason: "Nothing wanted and nothing there: True, no write.",
			want:   want{out: none, after: absent},
		},
		"not wanted, the owner's": {
			reason:   "The owner's child no longer wanted is deleted.",
			existing: &existing{controller: "owner"},
			want:     want{out: none, writes: 1, after: gone},
		},
		"wanted, unowned": {
			reason:   "A wanted name taken by an object without a controller is refused, nothing written.",
			existing: &existing{}, wanted: true,
			want: want{err: apply.ErrNotControlled, errText: "ConfigMap NS/child exists and has no controller", after: unchanged},
		},
		"wanted, someone else's": {
			reason:   "A wanted name taken by another controller's object is refused, naming it.",
			existing: &existing{controller: "other"}, wanted: true,
			want: want{err: apply.ErrNotControlled, errText: "is controlled by ConfigMap someone-else", after: unchanged},
		},
		"wanted, the owner's being deleted": {
			reason:   "The owner's child being deleted is not applied to.",
			existing: &existing{controller: "owner", deleting: true}, wanted: true,
			want: want{err: apply.ErrBeingDeleted, errText: "reconcile ConfigMap", after: unchanged},
		},
		"wanted, someone else's being deleted": {
			reason:   "Another's child being deleted is refused.",
			existing: &existing{controller: "other", deleting: true}, wanted: true,
			want: want{err: apply.ErrBeingDeleted, errText: "being deleted", after: unchanged},
		},
		"not wanted, unowned": {
			reason:   "An object without a controller is left in place, and the message says so.",
			existing: &existing{},
			want:     want{out: reconcile.Done(reconcile.TrueCondition(condType, reasonNone, foreign)), after: unchanged},
		},
		"not wanted, someone else's": {
			reason:   "Another controller's object is left in place, and the message says so.",
			existing: &existing{controller: "other"},
			want:     want{out: reconcile.Done(reconcile.TrueCondition(condType, reasonNone, foreign)), after: unchanged},
		},
		"not wanted, the owner's being deleted": {
			reason:   "The owner's child already being deleted is left to finish.",
			existing: &existing{controller: "owner", deleting: true},
			want:     want{out: none, after: unchanged},
		},
		"key mismatch": {
			reason: "A desired child of another name is refused before any request.",
			wanted: true,
			mutate: func(o *child.Optional[*corev1.ConfigMap]) { o.Desired.Name = "other" },
			want:   want{err: child.ErrKeyMismatch, errText: "reconcile ConfigMap NS/child: desired object does not match the child's key: desired NS/other", after: absent},
		},
		"desired without name or namespace": {
			reason: "An empty name and namespace are taken from the key.",
			wanted: true,
			mutate: func(o *child.Optional[*corev1.ConfigMap]) { o.Desired.Name, o.Desired.Namespace = "", "" },
			want:   want{out: applied, writes: 1, after: ours},
		},
		"key without a name, wanted": {
			reason: "A key without a name is refused.",
			wanted: true,
			mutate: func(o *child.Optional[*corev1.ConfigMap]) { o.Key.Name = "" },
			want:   want{err: apply.ErrMissingName, errText: "reconcile ConfigMap NS/", after: absent},
		},
		"key without a name, not wanted": {
			reason: "A key without a name is refused when nothing is wanted too.",
			mutate: func(o *child.Optional[*corev1.ConfigMap]) { o.Key.Name = "" },
			want:   want{err: apply.ErrMissingName, errText: "reconcile ConfigMap NS/", after: absent},
		},
		"the check refuses": {
			reason:   "Check refuses the desired child before any request; the existing one stays.",
			existing: &existing{controller: "owner"}, wanted: true,
			mutate: func(o *child.Optional[*corev1.ConfigMap]) {
				o.Check = func(*corev1.ConfigMap) error { return errRefused }
			},
			want: want{err: errRefused, errText: "reconcile ConfigMap NS/child: refused by the check", after: unchanged},
		},
		"the verdict asks for a requeue": {
			reason: "The verdict on the applied child is the outcome, requeue included.",
			wanted: true,
			mutate: func(o *child.Optional[*corev1.ConfigMap]) {
				o.Verdict = func(applied *corev1.ConfigMap) reconcile.Outcome {
					if applied.UID == "" || applied.Data["value"] != "ours" {
						return reconcile.Outcome{}
					}
					return reconcile.Requeue(reconcile.FalseCondition(condType, "ChildPending", "waiting for "+applied.Name), 5*time.Second)
				}
			},
			want: want{out: reconcile.Requeue(reconcile.FalseCondition(condType, "ChildPending", "waiting for child"), 5*time.Second),
				writes: 1, after: ours},
		},
		"a failure reason": {
			reason:   "With Failed set, an error comes with the False condition carrying its text.",
			existing: &existing{}, wanted: true,
			mutate: func(o *child.Optional[*corev1.ConfigMap]) { o.Failed = "ChildError" },
			want: want{failed: "ChildError", err: apply.ErrNotControlled,
				errText: "reconcile ConfigMap: ConfigMap NS/child exists and has no controller", after: unchanged},
		},
		"a served kind": {
			reason: "NotServed set on a kind the cluster serves: the probe passes and the child is applied.",
			wanted: true,
			mutate: func(o *child.Optional[*corev1.ConfigMap]) {
				o.NotServed = &child.Reason{Reason: "ConfigMapsNotServed", Message: "no ConfigMaps here"}
			},
			want: want{out: applied, writes: 1, after: ours},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			var before *corev1.ConfigMap
			if tc.existing != nil {
				before = tc.existing.create(t, ns, "child", owner)
			}
			var desired *corev1.ConfigMap
			if tc.wanted {
				desired = configMap(ns, "child", "ours")
			}
			o := optional(ns, desired)
			if tc.mutate != nil {
				tc.mutate(&o)
			}
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}

			out, err := child.Reconcile(ctx, c, env.Scheme, owner, o)

			wantOut := tc.want.out
			if tc.want.failed != "" && err != nil {
				wantOut = reconcile.Done(reconcile.FalseCondition(condType, tc.want.failed, strings.ReplaceAll(err.Error(), ns, "NS")))
			}
			if err != nil && !out.Result.IsZero() {
				t.Errorf("result %+v together with an error", out.Result)
			}
			checkErr(t, ns, err, tc.want.err, tc.want.errText)
			diff(t, "outcome", wantOut, outcome(out, ns))
			if counter.Writes() != tc.want.writes {
				t.Errorf("%d writes, want %d", counter.Writes(), tc.want.writes)
			}
			checkAfter(t, ns, owner, before, tc.want.after)
		})
	}
}

// checkAfter fails the test unless the child's key ns/child holds what after says.
func checkAfter(t *testing.T, ns string, owner client.Object, before *corev1.ConfigMap, after string) {
	t.Helper()
	now := &corev1.ConfigMap{}
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "child"}, now)
	switch after {
	case ours:
		if err != nil || !metav1.IsControlledBy(now, owner) || now.Data["value"] != "ours" {
			t.Errorf("child: %v, controller %+v, data %v; want the desired child controlled by the owner",
				err, metav1.GetControllerOf(now), now.Data)
		}
	case gone, absent:
		if !apierrors.IsNotFound(err) {
			t.Errorf("child: %v (data %v), want none", err, now.Data)
		}
	case unchanged:
		untouched(t, before)
	}
}

// vpa is a VerticalPodAutoscaler child: its kind is in the scheme, but env does not
// serve it.
func vpa(ns string) *vpav1.VerticalPodAutoscaler {
	return &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns}}
}

var notServed = child.Reason{Reason: "VPANotInstalled", Message: "the cluster does not serve VerticalPodAutoscaler"}

func TestReconcileProbe(t *testing.T) {
	type want struct {
		out     reconcile.Outcome
		err     error
		errText string
	}
	probeFailed := reconcile.Done(reconcile.FalseCondition(condType, capability.ReasonCapabilityProbeFailed,
		"cannot tell whether the cluster serves VerticalPodAutoscaler.autoscaling.k8s.io: discovery failed: "+
			"capability probe failed: is VerticalPodAutoscaler.autoscaling.k8s.io/v1 served: failed to get server groups: connection refused"))
	cases := map[string]struct {
		reason string
		broken bool
		wanted bool
		want   want
	}{
		"not served, wanted": {
			reason: "A wanted child of a kind the cluster does not serve: False with the caller's reason, no error.",
			wanted: true,
			want:   want{out: reconcile.Done(reconcile.FalseCondition(condType, notServed.Reason, notServed.Message))},
		},
		"not served, not wanted": {
			reason: "Nothing wanted on a cluster without the kind: True, NotRequired.",
			want:   want{out: reconcile.Done(reconcile.TrueCondition(condType, reasonNone, noneMessage))},
		},
		"discovery failed, wanted": {
			reason: "The probe cannot tell: False CapabilityProbeFailed and the error, no requeue.",
			broken: true, wanted: true,
			want: want{out: probeFailed, err: capability.ErrProbeFailed, errText: "reconcile VerticalPodAutoscaler NS/child: capability probe failed"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			if tc.broken {
				c = brokenDiscovery(t)
			}
			o := child.Optional[*vpav1.VerticalPodAutoscaler]{
				Key: client.ObjectKey{Namespace: ns, Name: "child"}, Type: condType, Ready: reasonReady,
				NotRequired: child.Reason{Reason: reasonNone, Message: noneMessage}, NotServed: &notServed,
			}
			if tc.wanted {
				o.Desired = vpa(ns)
			}
			out, err := child.Reconcile(context.Background(), c, env.Scheme, owner, o)
			t.Log(tc.reason)
			checkErr(t, ns, err, tc.want.err, tc.want.errText)
			diff(t, "outcome", tc.want.out, outcome(out, ns))
			if counter.Writes() != 0 {
				t.Errorf("%d writes, want none", counter.Writes())
			}
		})
	}
}

// TestReconcileRefusesInput: an owner that is nil or never persisted and a nil scheme
// are refused with an error naming the child, before any request, whether a child is
// wanted or not.
func TestReconcileRefusesInput(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	var typedNil *corev1.ConfigMap
	cases := map[string]struct {
		reason    string
		owner     client.Object
		nilScheme bool
		want      error
	}{
		"nil owner":       {reason: "A nil owner controls nothing.", owner: nil, want: apply.ErrNilOwner},
		"typed nil owner": {reason: "A typed nil owner is nil too.", owner: typedNil, want: apply.ErrNilOwner},
		"owner never persisted": {reason: "An owner without a UID was never read from the API server.",
			owner: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns}}, want: apply.ErrOwnerNotPersisted},
		"nil scheme": {reason: "A nil scheme is an error, never a panic.", owner: owner, nilScheme: true, want: apply.ErrNilScheme},
	}
	for name, tc := range cases {
		for sub, wanted := range map[string]bool{"wanted": true, "not wanted": false} {
			t.Run(name+"/"+sub, func(t *testing.T) {
				c, counter, err := env.CountingClient()
				if err != nil {
					t.Fatal(err)
				}
				var desired *corev1.ConfigMap
				if wanted {
					desired = configMap(ns, "child", "ours")
				}
				scheme := env.Scheme
				if tc.nilScheme {
					scheme = nil
				}
				out, err := child.Reconcile(context.Background(), c, scheme, tc.owner, optional(ns, desired))
				t.Log(tc.reason)
				checkErr(t, ns, err, tc.want, "reconcile ConfigMap NS/child")
				diff(t, "outcome", reconcile.Outcome{}, out)
				if counter.Total() != 0 {
					t.Errorf("%d requests, want none", counter.Total())
				}
			})
		}
	}
}

// TestReconcileConvergedThroughApplier: through an Applier over a manager's cache, a
// converged pass sends no request, whether the child is wanted or not.
func TestReconcileConvergedThroughApplier(t *testing.T) {
	for name, wanted := range map[string]bool{"wanted": true, "not wanted": false} {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			a, counter := env.StartApplier(t, ns, "child-test")
			testenv.ExpectQuiet(t, counter, 0, func(ctx context.Context) error {
				var desired *corev1.ConfigMap
				if wanted {
					desired = configMap(ns, "child", "ours")
				}
				_, err := child.Reconcile(ctx, a, env.Scheme, owner, optional(ns, desired))
				return err
			})
		})
	}
}
