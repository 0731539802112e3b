package satellite_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/satellite"
)

// The test satellites are ConfigMaps: the gate passes those labelled gate=true, and
// the default rule marks those labelled default=true.
func gated(cm *corev1.ConfigMap) bool     { return cm.Labels["gate"] == "true" }
func isDefault(cm *corev1.ConfigMap) bool { return cm.Labels["default"] == "true" }

// sat returns a satellite in namespace ns; flags are "gate", "default" and "deleting".
func sat(ns, name string, flags ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{}}}
	for _, f := range flags {
		if f == "deleting" {
			cm.DeletionTimestamp = &metav1.Time{Time: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
			continue
		}
		cm.Labels[f] = "true"
	}
	return cm
}

// collected is a Collection as names, for cmp.Diff.
type collected struct {
	Attached, Gated, DefaultCandidates []string
	Valid                              bool
}

func keys(items []*corev1.ConfigMap) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Namespace+"/"+it.Name)
	}
	return out
}

func names(c satellite.Collection[corev1.ConfigMap, *corev1.ConfigMap]) collected {
	return collected{keys(c.Attached), keys(c.Gated), keys(c.DefaultCandidates), c.Valid}
}

// TestCollect has one row per rule of Collect.
func TestCollect(t *testing.T) {
	type args struct {
		items     []*corev1.ConfigMap
		gate      bool
		isDefault bool
	}
	cases := map[string]struct {
		reason string
		args   args
		want   collected
	}{
		"NoItems": {
			reason: "Nothing attached is valid without a default rule.",
			want:   collected{Valid: true},
		},
		"NoItemsWithDefaultRule": {
			reason: "Nothing attached cannot satisfy a default rule.",
			args:   args{isDefault: true},
			want:   collected{},
		},
		"NilGatePassesAll": {
			reason: "Without a gate every attached satellite is gated, sorted by name.",
			args:   args{items: []*corev1.ConfigMap{sat("ns", "b"), sat("ns", "c"), sat("ns", "a")}},
			want: collected{Attached: []string{"ns/a", "ns/b", "ns/c"}, Gated: []string{"ns/a", "ns/b", "ns/c"},
				Valid: true},
		},
		"GateSkipsButGoesOn": {
			reason: "A satellite whose gate is not True is skipped; the others are still gated.",
			args:   args{items: []*corev1.ConfigMap{sat("ns", "c", "gate"), sat("ns", "b"), sat("ns", "a", "gate")}, gate: true},
			want:   collected{Attached: []string{"ns/a", "ns/b", "ns/c"}, Gated: []string{"ns/a", "ns/c"}, Valid: true},
		},
		"DeletingDropsOut": {
			reason: "A satellite with a deletion timestamp is neither attached nor gated.",
			args:   args{items: []*corev1.ConfigMap{sat("ns", "a", "gate", "deleting"), sat("ns", "b", "gate")}, gate: true},
			want:   collected{Attached: []string{"ns/b"}, Gated: []string{"ns/b"}, Valid: true},
		},
		"ExactlyOneDefault": {
			reason: "One gated satellite marked as default satisfies the rule.",
			args: args{items: []*corev1.ConfigMap{sat("ns", "b", "gate"), sat("ns", "a", "gate", "default")},
				gate: true, isDefault: true},
			want: collected{Attached: []string{"ns/a", "ns/b"}, Gated: []string{"ns/a", "ns/b"},
				DefaultCandidates: []string{"ns/a"}, Valid: true},
		},
		"TwoDefaults": {
			reason: "Two gated defaults break the rule; both are candidates, in order.",
			args: args{items: []*corev1.ConfigMap{sat("ns", "b", "gate", "default"), sat("ns", "a", "gate", "default")},
				gate: true, isDefault: true},
			want: collected{Attached: []string{"ns/a", "ns/b"}, Gated: []string{"ns/a", "ns/b"},
				DefaultCandidates: []string{"ns/a", "ns/b"}},
		},
		"NoDefault": {
			reason: "No satellite marked as default breaks the rule.",
			args:   args{items: []*corev1.ConfigMap{sat("ns", "a", "gate")}, gate: true, isDefault: true},
			want:   collected{Attached: []string{"ns/a"}, Gated: []string{"ns/a"}},
		},
		"UngatedDefaultIsNoCandidate": {
			reason: "A default that is not gated is not a candidate: the rule counts only what is rendered.",
			args: args{items: []*corev1.ConfigMap{sat("ns", "a", "default"), sat("ns", "b", "gate")},
				gate: true, isDefault: true},
			want: collected{Attached: []string{"ns/a", "ns/b"}, Gated: []string{"ns/b"}},
		},
		"UngatedSecondDefaultLeavesOneCandidate": {
			reason: "Of two defaults only the gated one counts, so the rule holds.",
			args: args{items: []*corev1.ConfigMap{sat("ns", "a", "default"), sat("ns", "b", "gate", "default")},
				gate: true, isDefault: true},
			want: collected{Attached: []string{"ns/a", "ns/b"}, Gated: []string{"ns/b"},
				DefaultCandidates: []string{"ns/b"}, Valid: true},
		},
		"DeletingDefaultDropsOut": {
			reason: "A default being deleted is no candidate.",
			args: args{items: []*corev1.ConfigMap{sat("ns", "a", "gate", "default", "deleting"), sat("ns", "b", "gate")},
				gate: true, isDefault: true},
			want: collected{Attached: []string{"ns/b"}, Gated: []string{"ns/b"}},
		},
		"NilItemsSkipped": {
			reason: "Nil entries are skipped.",
			args:   args{items: []*corev1.ConfigMap{nil, sat("ns", "a"), nil}},
			want:   collected{Attached: []string{"ns/a"}, Gated: []string{"ns/a"}, Valid: true},
		},
		"TiesByNamespace": {
			reason: "Equal names sort by namespace.",
			args:   args{items: []*corev1.ConfigMap{sat("ns-b", "a"), sat("ns-c", "a"), sat("ns-a", "a"), sat("ns-a", "0")}},
			want: collected{Attached: []string{"ns-a/0", "ns-a/a", "ns-b/a", "ns-c/a"},
				Gated: []string{"ns-a/0", "ns-a/a", "ns-b/a", "ns-c/a"}, Valid: true},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := satellite.CollectParams[corev1.ConfigMap, *corev1.ConfigMap]{Items: tc.args.items}
			if tc.args.gate {
				p.Gate = gated
			}
			if tc.args.isDefault {
				p.IsDefault = isDefault
			}
			if diff := cmp.Diff(tc.want, names(satellite.Collect(p)), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestCollectStableOrder shuffles the same satellites many times: the collection, and
// so the rendered configuration and its hash, is the same every time.
func TestCollectStableOrder(t *testing.T) {
	items := []*corev1.ConfigMap{
		sat("ns", "swift", "gate"), sat("ns", "ceph", "gate", "default"), sat("ns", "s3", "gate"),
		sat("ns", "nfs"), sat("other", "ceph", "gate"), sat("ns", "old", "gate", "deleting"),
	}
	p := satellite.CollectParams[corev1.ConfigMap, *corev1.ConfigMap]{Items: items, Gate: gated, IsDefault: isDefault}
	want := names(satellite.Collect(p))
	if diff := cmp.Diff(collected{
		Attached:          []string{"ns/ceph", "other/ceph", "ns/nfs", "ns/s3", "ns/swift"},
		Gated:             []string{"ns/ceph", "other/ceph", "ns/s3", "ns/swift"},
		DefaultCandidates: []string{"ns/ceph"},
		Valid:             true,
	}, want); diff != "" {
		t.Fatalf("-want, +got:\n%s", diff)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		shuffled := append([]*corev1.ConfigMap(nil), items...)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		p.Items = shuffled
		if diff := cmp.Diff(want, names(satellite.Collect(p))); diff != "" {
			t.Fatalf("shuffle %d (%v): -want, +got:\n%s", i, keys(shuffled), diff)
		}
	}
}

// TestCollectAliasesItems checks that Collect returns the caller's objects, not
// copies, and leaves the caller's slice in its order.
func TestCollectAliasesItems(t *testing.T) {
	list := corev1.ConfigMapList{Items: []corev1.ConfigMap{*sat("ns", "b", "gate", "default"), *sat("ns", "a", "gate")}}
	items := make([]*corev1.ConfigMap, 0, len(list.Items))
	for i := range list.Items {
		items = append(items, &list.Items[i])
	}
	got := satellite.Collect(satellite.CollectParams[corev1.ConfigMap, *corev1.ConfigMap]{
		Items: items, Gate: gated, IsDefault: isDefault,
	})
	if got.Attached[0] != &list.Items[1] || got.Attached[1] != &list.Items[0] ||
		got.Gated[0] != &list.Items[1] || got.DefaultCandidates[0] != &list.Items[0] {
		t.Fatal("Collect returned pointers other than the caller's items")
	}
	got.DefaultCandidates[0].Data = map[string]string{"seen": "yes"}
	if list.Items[0].Data["seen"] != "yes" {
		t.Error("a write through the returned pointer did not reach the caller's list")
	}
	if items[0] != &list.Items[0] || items[1] != &list.Items[1] {
		t.Error("Collect reordered the caller's Items")
	}
}
