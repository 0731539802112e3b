package katalog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// member runs a member of the engine tests' ring named identity until the test ends.
func member(t *testing.T, ns, identity string) *shard.Member {
	t.Helper()
	o := shard.DefaultOptions(ns, "katalog")
	o.Identity, o.LeaseDuration, o.RenewPeriod = identity, 4*time.Second, 500*time.Millisecond
	m, err := shard.NewMember(env.Client, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return m
}

// An engine given a shard member (EngineOptions.Shard, katalog --sharded) reconciles
// the custom resources of the member's ranges only: with a second member holding the
// rest (an engine replica of its own would reconcile those), the engine's CRs turn
// Ready and the others' are never touched.
func TestShardedEngine(t *testing.T) {
	ns := env.Namespace(t)
	a, b := member(t, ns, "a"), member(t, ns, "b")
	split := shard.Assign([]string{"a", "b"}, 0)
	testenv.Eventually(t, time.Minute, "the ring split", func(context.Context) (bool, error) {
		return a.Active().String() == split["a"].String() && b.Active().String() == split["b"].String(), nil
	})
	opts := testOptions()
	opts.Shard = a
	startEngine(t, []*Katalog{mustParse(t, "gates.yaml", gateKatalog)}, opts, ns)
	var mine, theirs []*unstructured.Unstructured
	for i := range 12 {
		g := newObject("Gadget", ns, fmt.Sprintf("g%d", i), map[string]any{"a": "on", "b": "off"})
		create(t, g)
		if a.Active().Owns(g.GetUID()) {
			mine = append(mine, g)
		} else {
			theirs = append(theirs, g)
		}
	}
	if len(mine) == 0 || len(theirs) == 0 {
		t.Fatalf("%d of 12 custom resources in the engine's ranges: want some on each side", len(mine))
	}
	for _, g := range mine {
		waitReady(t, g, "True", ReasonReconciled)
	}
	time.Sleep(time.Second) // the engine's other passes would have run by now
	for _, g := range theirs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(g.GroupVersionKind())
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(g), got); err != nil {
			t.Fatal(err)
		}
		if conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions"); len(conds) > 0 {
			t.Errorf("%s, outside the engine's ranges, has conditions %v", g.GetName(), conds)
		}
		if err := getConfigMap(t.Context(), ns, g.GetName()+"-a"); err == nil {
			t.Errorf("%s, outside the engine's ranges, got its child", g.GetName())
		}
	}
}
