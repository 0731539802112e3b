package multicluster_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"github.com/c5c3/reconciler-sdk/capability"
	"github.com/c5c3/reconciler-sdk/multicluster"
)

// The resolver keeps a target cluster's target (its Applier, clients and transports)
// only while the provider keeps the cluster engaged. The kubeconfig provider makes a
// cluster gettable before the manager engages it, and a Resolve may hold a cluster that
// is disengaged before it builds the target: a target built for a cluster the resolver
// was never told of, or whose engagement already ended, is handed out but not kept, so
// nothing of a removed cluster stays behind.
func TestResolverKeepsTargetsOfEngagedClustersOnly(t *testing.T) {
	r, err := multicluster.NewResolver(context.Background(), localManager(t), multicluster.ResolverOptions{ManagementCluster: "mgmt"})
	if err != nil {
		t.Fatal(err)
	}
	newCluster := func() cluster.Cluster {
		t.Helper()
		cl, err := cluster.New(target.Config, func(o *cluster.Options) { o.Scheme = target.Scheme })
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	cached := func(want ...string) {
		t.Helper()
		if got := r.CachedTargets(); !slices.Equal(got, want) {
			t.Fatalf("cached targets %v, want %v", got, want)
		}
	}
	targetFor := func(name string, cl cluster.Cluster) *multicluster.Target {
		t.Helper()
		tgt, err := r.TargetFor(name, cl)
		if err != nil {
			t.Fatalf("target of cluster %s: %v", name, err)
		}
		if tgt == nil || tgt.Client == nil || tgt.Name != name {
			t.Fatalf("target of cluster %s = %+v, want one named %s with a client", name, tgt, name)
		}
		return tgt
	}

	// Gettable from the provider, but not engaged yet (or its engagement failed).
	early := newCluster()
	targetFor("early", early)
	cached()

	// Engaged: built once and kept.
	ctx, disengage := context.WithCancel(context.Background())
	defer disengage()
	live := newCluster()
	if err := r.Engaged(ctx, "edge", live); err != nil {
		t.Fatal(err)
	}
	first := targetFor("edge", live)
	cached("edge")
	if again := targetFor("edge", live); again != first {
		t.Fatal("a second resolve of the engaged cluster built a new target")
	}

	// Disengaged: dropped, and a resolve that got the cluster just before its removal
	// builds a target that is not kept.
	disengage()
	eventually(t, 10*time.Second, "the disengaged cluster's target is dropped", func(context.Context) (bool, error) {
		return len(r.CachedTargets()) == 0, nil
	})
	if late := targetFor("edge", live); late == first {
		t.Fatal("the disengaged cluster's dropped target was handed out again")
	}
	cached()

	// Engaged with a lifetime that had already ended.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	dead := newCluster()
	if err := r.Engaged(done, "gone", dead); err != nil {
		t.Fatal(err)
	}
	targetFor("gone", dead)
	cached()

	// A newer cluster under a kept name, not engaged yet, leaves the kept one alone;
	// once engaged it replaces it.
	ctx2, disengage2 := context.WithCancel(context.Background())
	defer disengage2()
	old := newCluster()
	if err := r.Engaged(ctx2, "edge", old); err != nil {
		t.Fatal(err)
	}
	kept := targetFor("edge", old)
	newer := newCluster()
	targetFor("edge", newer)
	if again := targetFor("edge", old); again != kept {
		t.Fatal("an unengaged newer cluster under the same name displaced the engaged one's target")
	}
	ctx3, disengage3 := context.WithCancel(context.Background())
	defer disengage3()
	if err := r.Engaged(ctx3, "edge", newer); err != nil {
		t.Fatal(err)
	}
	replaced := targetFor("edge", newer)
	if again := targetFor("edge", newer); again != replaced {
		t.Fatal("the engaged newer cluster's target is not kept")
	}
	cached("edge")
}

// A target cluster's watch of a kind maps the kind once when its cluster serves it,
// reports a kind it does not serve as unmapped without error, and says why a kind
// cannot be looked up.
func TestKindMappingOfATargetCluster(t *testing.T) {
	served := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(served, meta.RESTScopeNamespace)
	mapping, err := multicluster.KindMapping(mapper, served)
	if err != nil || mapping == nil || mapping.Resource.GroupResource() != corev1.Resource("configmaps") {
		t.Fatalf("KindMapping(%s) = %+v, %v; want the configmaps resource", served, mapping, err)
	}
	absent := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	if mapping, err := multicluster.KindMapping(mapper, absent); mapping != nil || err != nil {
		t.Fatalf("KindMapping(%s) = %+v, %v; want not served, no error", absent, mapping, err)
	}
	if _, err := multicluster.KindMapping(nil, served); !errors.Is(err, capability.ErrNilMapper) {
		t.Fatalf("KindMapping without a mapper = %v, want capability.ErrNilMapper", err)
	}
	if _, err := multicluster.KindMapping(mapper, schema.GroupVersionKind{Kind: "ConfigMap"}); !errors.Is(err, capability.ErrIncompleteGVK) {
		t.Fatalf("KindMapping without a version = %v, want capability.ErrIncompleteGVK", err)
	}
}
