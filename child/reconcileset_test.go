package child_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/child"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// set is the descriptor of a set of child ConfigMaps.
func set(desired ...*corev1.ConfigMap) child.Set[*corev1.ConfigMap] {
	return child.Set[*corev1.ConfigMap]{
		Desired: desired, Type: condType, Ready: reasonReady,
		NotRequired: child.Reason{Reason: reasonNone, Message: noneMessage},
	}
}

// children lists the child ConfigMaps in ns (the test label) as name=controller.
func children(t *testing.T, ns string) []string {
	t.Helper()
	list := &corev1.ConfigMapList{}
	if err := env.Client.List(context.Background(), list, client.InNamespace(ns), client.HasLabels{"test.c5c3.io/child"}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range list.Items {
		cm := &list.Items[i]
		ctrl := ""
		if ref := metav1.GetControllerOf(cm); ref != nil {
			ctrl = ref.Name
		}
		if cm.DeletionTimestamp != nil {
			ctrl += " (being deleted)"
		}
		out = append(out, cm.Name+"="+ctrl)
	}
	slices.Sort(out)
	return out
}

func TestReconcileSet(t *testing.T) {
	type want struct {
		out      reconcile.Outcome
		err      error
		errText  string
		failed   string
		children []string
		requests int // -1: not checked
	}
	// Before each case: the owner's "old" and "web", one without a controller and one
	// of another owner's.
	cases := map[string]struct {
		reason  string
		desired func(ns string) []*corev1.ConfigMap
		mutate  func(*child.Set[*corev1.ConfigMap])
		want    want
	}{
		"apply and prune": {
			reason: "The desired children are applied, then the owner's that are not desired are deleted; others' stay.",
			desired: func(ns string) []*corev1.ConfigMap {
				return []*corev1.ConfigMap{configMap(ns, "worker", "ours"), configMap(ns, "web", "ours")}
			},
			want: want{out: reconcile.Done(reconcile.TrueCondition(condType, reasonReady, "ConfigMap applied: NS/web, NS/worker")),
				children: []string{"foreign=someone-else", "unowned=", "web=owner", "worker=owner"}, requests: -1},
		},
		"nothing wanted": {
			reason:  "Every child the owner controls goes; True, NotRequired.",
			desired: func(string) []*corev1.ConfigMap { return nil },
			want: want{out: reconcile.Done(reconcile.TrueCondition(condType, reasonNone, noneMessage)),
				children: []string{"foreign=someone-else", "unowned="}, requests: -1},
		},
		"an empty namespace is the owner's": {
			reason:  "An entry without a namespace lands in the owner's.",
			desired: func(string) []*corev1.ConfigMap { return []*corev1.ConfigMap{configMap("", "web", "ours")} },
			want: want{out: reconcile.Done(reconcile.TrueCondition(condType, reasonReady, "ConfigMap applied: NS/web")),
				children: []string{"foreign=someone-else", "unowned=", "web=owner"}, requests: -1},
		},
		"a wanted name taken": {
			reason:  "A wanted child whose name someone else's object holds is refused; nothing is pruned.",
			desired: func(ns string) []*corev1.ConfigMap { return []*corev1.ConfigMap{configMap(ns, "unowned", "ours")} },
			mutate:  func(s *child.Set[*corev1.ConfigMap]) { s.Failed = "ChildError" },
			want: want{failed: "ChildError", err: apply.ErrNotControlled,
				errText:  "reconcile ConfigMaps: ConfigMap NS/unowned exists and has no controller",
				children: []string{"foreign=someone-else", "old=owner", "unowned=", "web=owner"}, requests: -1},
		},
		"a nil entry": {
			reason:  "An invalid set is refused before any request.",
			desired: func(ns string) []*corev1.ConfigMap { return []*corev1.ConfigMap{configMap(ns, "web", "ours"), nil} },
			mutate:  func(s *child.Set[*corev1.ConfigMap]) { s.Failed = "ChildError" },
			want: want{failed: "ChildError", err: child.ErrInvalidSet, errText: "reconcile ConfigMaps: invalid set of children: entry 1 is nil",
				children: []string{"foreign=someone-else", "old=owner", "unowned=", "web=owner"}},
		},
		"an entry without a name": {
			reason:  "An entry without a name is refused before any request.",
			desired: func(ns string) []*corev1.ConfigMap { return []*corev1.ConfigMap{configMap(ns, "", "ours")} },
			want: want{err: child.ErrInvalidSet, errText: "entry 0 has no metadata.name",
				children: []string{"foreign=someone-else", "old=owner", "unowned=", "web=owner"}},
		},
		"an entry listed twice": {
			reason: "Two entries of one key are refused before any request.",
			desired: func(ns string) []*corev1.ConfigMap {
				return []*corev1.ConfigMap{configMap(ns, "web", "a"), configMap("", "web", "b")}
			},
			want: want{err: child.ErrInvalidSet, errText: "NS/web is listed twice",
				children: []string{"foreign=someone-else", "old=owner", "unowned=", "web=owner"}},
		},
		"an entry in another namespace": {
			reason:  "The prune covers the owner's namespace only, so an entry elsewhere is refused.",
			desired: func(string) []*corev1.ConfigMap { return []*corev1.ConfigMap{configMap("elsewhere", "web", "ours")} },
			want: want{err: child.ErrInvalidSet, errText: `entry 0 (elsewhere/web) is not in the owner's namespace "NS"`,
				children: []string{"foreign=someone-else", "old=owner", "unowned=", "web=owner"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			existing{controller: "owner"}.create(t, ns, "old", owner)
			existing{controller: "owner"}.create(t, ns, "web", owner)
			existing{}.create(t, ns, "unowned", owner)
			existing{controller: "other"}.create(t, ns, "foreign", owner)
			s := set(tc.desired(ns)...)
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}

			out, err := child.ReconcileSet(context.Background(), c, env.Scheme, owner, s)

			t.Log(tc.reason)
			wantOut := tc.want.out
			if tc.want.failed != "" && err != nil {
				wantOut = reconcile.Done(reconcile.FalseCondition(condType, tc.want.failed, replaceNS(err.Error(), ns)))
			}
			checkErr(t, ns, err, tc.want.err, tc.want.errText)
			diff(t, "outcome", wantOut, outcome(out, ns))
			diff(t, "children", tc.want.children, children(t, ns))
			if tc.want.requests >= 0 && counter.Total() != tc.want.requests {
				t.Errorf("%d requests, want %d", counter.Total(), tc.want.requests)
			}
		})
	}
}

// TestReconcileSetSparesWhatIsBeingDeleted: a child of the owner's that is being deleted
// and no longer wanted is left to finish: no second delete.
func TestReconcileSetSparesWhatIsBeingDeleted(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	held := existing{controller: "owner", deleting: true}.create(t, ns, "old", owner)
	c, counter, err := env.CountingClient()
	if err != nil {
		t.Fatal(err)
	}
	out, err := child.ReconcileSet(context.Background(), c, env.Scheme, owner, set())
	if err != nil {
		t.Fatal(err)
	}
	diff(t, "outcome", reconcile.Done(reconcile.TrueCondition(condType, reasonNone, noneMessage)), out)
	if counter.Writes() != 0 {
		t.Errorf("%d writes, want none", counter.Writes())
	}
	untouched(t, held)
}

func TestReconcileSetProbe(t *testing.T) {
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
			reason: "Wanted children of a kind the cluster does not serve: False with the caller's reason, no error.",
			wanted: true,
			want:   want{out: reconcile.Done(reconcile.FalseCondition(condType, notServed.Reason, notServed.Message))},
		},
		"not served, none wanted": {
			reason: "None wanted on a cluster without the kind: True, NotRequired.",
			want:   want{out: reconcile.Done(reconcile.TrueCondition(condType, reasonNone, noneMessage))},
		},
		"discovery failed, wanted": {
			reason: "The probe cannot tell: False CapabilityProbeFailed and the error.",
			broken: true, wanted: true,
			want: want{out: probeFailed, err: capability.ErrProbeFailed, errText: "reconcile VerticalPodAutoscalers: capability probe failed"},
		},
		"discovery failed, none wanted": {
			reason: "The set form probes before its prune lists the kind, wanted or not.",
			broken: true,
			want:   want{out: probeFailed, err: capability.ErrProbeFailed, errText: "reconcile VerticalPodAutoscalers: capability probe failed"},
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
			s := child.Set[*vpav1.VerticalPodAutoscaler]{
				Type: condType, Ready: reasonReady, Failed: "ChildError",
				NotRequired: child.Reason{Reason: reasonNone, Message: noneMessage}, NotServed: &notServed,
			}
			if tc.wanted {
				s.Desired = []*vpav1.VerticalPodAutoscaler{vpa(ns)}
			}
			out, err := child.ReconcileSet(context.Background(), c, env.Scheme, owner, s)
			t.Log(tc.reason)
			checkErr(t, ns, err, tc.want.err, tc.want.errText)
			diff(t, "outcome", tc.want.out, outcome(out, ns))
			if counter.Writes() != 0 {
				t.Errorf("%d writes, want none", counter.Writes())
			}
		})
	}
}

// TestReconcileSetOnATargetCluster: through an Applier for a target cluster the set's
// children carry the owner's claim, and the prune deletes only children claimed for the
// owner by this management cluster.
func TestReconcileSetOnATargetCluster(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	ours, theirs := testenv.TargetApplier(env.Client, "child-test", "mgmt-a"), testenv.TargetApplier(env.Client, "child-test", "mgmt-b")
	if _, err := child.ReconcileSet(ctx, ours, env.Scheme, owner, set(configMap(ns, "web", "a"), configMap(ns, "old", "a"))); err != nil {
		t.Fatal(err)
	}
	if _, err := child.ReconcileSet(ctx, theirs, env.Scheme, owner, set(configMap(ns, "mgmt-b", "b"))); err != nil {
		t.Fatal(err)
	}
	if _, err := child.ReconcileSet(ctx, ours, env.Scheme, owner, set(configMap(ns, "web", "a"))); err != nil {
		t.Fatal(err)
	}
	diff(t, "children (claims carry no controller reference)", []string{"mgmt-b=", "web="}, children(t, ns))
	web := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, web); err != nil {
		t.Fatal(err)
	}
	if !apply.IsControlled(ours, owner, web) || apply.IsControlled(theirs, owner, web) {
		t.Errorf("web carries labels %v, want mgmt-a's claim for the owner", web.Labels)
	}
}

// TestReconcileSetConvergedThroughApplier: a converged set sends no request through an
// Applier over a manager's cache.
func TestReconcileSetConvergedThroughApplier(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	a, counter := env.StartApplier(t, ns, "child-test")
	testenv.ExpectQuiet(t, counter, 0, func(ctx context.Context) error {
		_, err := child.ReconcileSet(ctx, a, env.Scheme, owner, set(configMap(ns, "web", "a"), configMap(ns, "worker", "a")))
		return err
	})
}
