package multicluster_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcmulticluster "sigs.k8s.io/multicluster-runtime/pkg/multicluster"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/reconcile"
	"github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// targetWrite is one write a replica's step sent to the target cluster: for the
// Gadget of uid, and whether the replica held the Gadget's hash then.
type targetWrite struct {
	replica string
	uid     types.UID
	held    bool
}

// With --sharded --shard-selectors the children on a target cluster are narrowed like
// those on the management cluster: each of two replicas' target-cluster cache holds the
// ConfigMaps and the Sprockets (a kind only the target cluster serves) of its own
// Gadgets only (each stamped with its owner's bucket), every
// Gadget's child exists there, one written before sharding (no bucket) is found and
// repaired by its owner, and no replica writes a child of a Gadget it does not hold.
// When a replica stops, the survivor's target cache gains the moved children and it
// reconciles them.
func TestShardedOperatorNarrowsTargetChildren(t *testing.T) {
	const edge = "edge"
	ns, clustersNS := env.Namespace(t), env.Namespace(t)
	namespaceOn(t, target, ns)
	installSprockets(t)
	target.RegisterTarget(t, env, clustersNS, edge, ns)

	// A Gadget whose child an unsharded operator wrote: claimed, without a bucket.
	stale := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: "stale", Namespace: ns},
		Spec: GadgetSpec{Message: "one", TargetClusterRef: edgeRef(edge)}}
	if err := env.Client.Create(t.Context(), stale); err != nil {
		t.Fatal(err)
	}
	id, err := multicluster.ManagementClusterID(t.Context(), env.Client)
	if err != nil {
		t.Fatal(err)
	}
	unsharded := apply.NewApplier(target.Client, apply.ApplierOptions{FieldManager: "gadget-operator",
		Remote: &apply.RemoteOwnership{ManagementCluster: id}})
	old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "stale-config", Namespace: ns},
		Data: map[string]string{"message": "before sharding"}}
	if err := apply.EnsureObject(t.Context(), unsharded, env.Scheme, stale, old, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if _, ok := old.Labels[shard.LabelBucket]; ok {
		t.Fatalf("the unsharded Applier stamped a bucket: %v", old.Labels)
	}

	var mu sync.Mutex
	var passes []gadgetPass
	var writes []targetWrite
	step := func(r *shardedReplica, cr **multicluster.CRReconciler[*Gadget]) reconcile.Step[*Gadget] {
		s := configStep(cr)
		s.Owns = append(s.Owns, &Sprocket{})
		run := s.Run
		s.Run = func(ctx context.Context, g *Gadget) (ctrl.Result, error) {
			target := (*cr).TargetOf(ctx)
			if target.IsLocal() {
				return run(ctx, g)
			}
			held := r.shard.Load().Held().Owns(g.UID)
			mu.Lock()
			writes = append(writes, targetWrite{replica: r.name, uid: g.UID, held: held})
			mu.Unlock()
			sp := &Sprocket{ObjectMeta: metav1.ObjectMeta{Name: g.Name + "-sprocket", Namespace: g.Namespace},
				Spec: SprocketSpec{Message: g.Spec.Message}}
			if err := apply.EnsureObject(ctx, target.Client, target.Client.Scheme(), g, sp, apply.FieldManager); err != nil {
				return ctrl.Result{}, err
			}
			return run(ctx, g)
		}
		return s
	}
	so := shardedOptions{ns: ns, clustersNS: clustersNS, mu: &mu, passes: &passes, step: step}
	replicas := []*shardedReplica{runShardedWith(t, env, "a", so), runShardedWith(t, env, "b", so)}
	split := shard.Assign([]string{"a", "b"}, 0)
	testenv.Eventually(t, time.Minute, "the ring split between a and b", func(context.Context) (bool, error) {
		for _, r := range replicas {
			if m := r.shard.Load(); m == nil || !cmpRanges(m.Active(), split[r.name]) {
				return false, nil
			}
		}
		return true, nil
	})

	gadgets := []*Gadget{stale}
	for i := range 40 {
		g := &Gadget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("g-%d", i), Namespace: ns},
			Spec: GadgetSpec{Message: "one", TargetClusterRef: edgeRef(edge)}}
		if err := env.Client.Create(t.Context(), g); err != nil {
			t.Fatal(err)
		}
		gadgets = append(gadgets, g)
	}
	for _, r := range replicas {
		if n := len(ownedBy(gadgets, split[r.name])); n == 0 || n == len(gadgets) {
			t.Fatalf("%s's ranges own %d of %d Gadgets: the split should give it some, not all", r.name, n, len(gadgets))
		}
	}
	convergedOnTarget(t, ns, gadgets, "one")
	expectTargetChildrenSliced(t, replicas, edge, ns, gadgets, split)
	expectTargetSprocketsSliced(t, replicas, edge, ns, gadgets, split)
	expectWritesHeld(t, &mu, &writes)

	replicas[1].stop()
	if err := <-replicas[1].done; err != nil {
		t.Fatalf("replica b stopping: %v", err)
	}
	replicas[1].done <- nil // for the cleanup
	testenv.Eventually(t, time.Minute, "a holds the whole ring", func(context.Context) (bool, error) {
		return cmpRanges(replicas[0].shard.Load().Active(), shard.Full()), nil
	})
	all := map[string]shard.Ranges{"a": shard.Full()}
	expectTargetChildrenSliced(t, replicas[:1], edge, ns, gadgets, all)
	expectTargetSprocketsSliced(t, replicas[:1], edge, ns, gadgets, all)
	for _, g := range gadgets {
		patch := client.MergeFrom(g.DeepCopyObject().(*Gadget))
		g.Spec.Message = "two"
		if err := env.Client.Patch(t.Context(), g, patch); err != nil {
			t.Fatal(err)
		}
	}
	convergedOnTarget(t, ns, gadgets, "two")
	expectWritesHeld(t, &mu, &writes)
	mu.Lock()
	for _, p := range passes {
		if p.replica == "b" && !split["b"].Owns(p.uid) {
			t.Errorf("b reconciled Gadget %s, outside its ranges", p.uid)
		}
	}
	mu.Unlock()
}

// edgeRef is the targetClusterRef naming cluster.
func edgeRef(cluster string) *commonv1.TargetClusterRefSpec {
	return &commonv1.TargetClusterRefSpec{Name: cluster}
}

// ownedBy returns the names of the children of the gadgets whose hash lies in rs.
func ownedBy(gadgets []*Gadget, rs shard.Ranges) map[string]bool {
	out := map[string]bool{}
	for _, g := range gadgets {
		if rs.Owns(g.UID) {
			out[g.Name+"-config"] = true
		}
	}
	return out
}

// convergedOnTarget waits until every Gadget's ConfigMap and Sprocket on the target
// cluster say message and carry the bucket of its Gadget.
func convergedOnTarget(t *testing.T, ns string, gadgets []*Gadget, message string) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, "every Gadget's ConfigMap and Sprocket on the target cluster say "+message, func(ctx context.Context) (bool, error) {
		for _, g := range gadgets {
			cm := &corev1.ConfigMap{}
			if err := target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: g.Name + "-config"}, cm); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if cm.Data["message"] != message || cm.Labels[shard.LabelBucket] != shard.BucketOf(g.UID) {
				return false, nil
			}
			sp := &Sprocket{}
			if err := target.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: g.Name + "-sprocket"}, sp); err != nil {
				return false, client.IgnoreNotFound(err)
			}
			if sp.Spec.Message != message || sp.Labels[shard.LabelBucket] != shard.BucketOf(g.UID) {
				return false, nil
			}
		}
		return true, nil
	})
}

// expectTargetChildrenSliced waits until the target-cluster cache of each of replicas
// holds the ConfigMap of every Gadget split assigns it and no other.
func expectTargetChildrenSliced(t *testing.T, replicas []*shardedReplica, cluster, ns string, gadgets []*Gadget, split map[string]shard.Ranges) {
	t.Helper()
	byName := map[string]*Gadget{}
	for _, g := range gadgets {
		byName[g.Name+"-config"] = g
	}
	for _, r := range replicas {
		want := ownedBy(gadgets, split[r.name])
		testenv.Eventually(t, time.Minute, r.name+"'s target-cluster cache holds the children of its Gadgets only", func(ctx context.Context) (bool, error) {
			cl, err := (*r.mgr.Load()).GetCluster(ctx, mcmulticluster.ClusterName(cluster))
			if err != nil {
				return false, err
			}
			var list corev1.ConfigMapList
			if err := cl.GetCache().List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			got := map[string]bool{}
			for _, cm := range list.Items {
				g := byName[cm.Name]
				if g == nil {
					return false, fmt.Errorf("ConfigMap %s is no Gadget's child", cm.Name)
				}
				if cm.Labels[shard.LabelBucket] != shard.BucketOf(g.UID) {
					// A child not yet stamped by its owner is only cached by a cache that
					// does not narrow: never by these.
					return false, fmt.Errorf("ConfigMap %s: bucket label %q, want %q", cm.Name, cm.Labels[shard.LabelBucket], shard.BucketOf(g.UID))
				}
				got[cm.Name] = true
			}
			return maps.Equal(got, want), nil
		})
	}
}

// installSprockets installs the Sprocket CRD on the target cluster (only there) for the
// rest of the test and waits until its discovery serves the kind.
func installSprockets(t *testing.T) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "sprockets." + gadgetGV.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: gadgetGV.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: "Sprocket", ListKind: "SprocketList",
				Plural: "sprockets", Singular: "sprocket"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: gadgetGV.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}}}}
	if err := target.Client.Create(t.Context(), crd); err != nil {
		t.Fatalf("install the Sprocket CRD on the target cluster: %v", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(target.Config)
	if err != nil {
		t.Fatal(err)
	}
	served := func() bool {
		rl, err := dc.ServerResourcesForGroupVersion(gadgetGV.String())
		if err != nil {
			return false
		}
		for _, r := range rl.APIResources {
			if r.Kind == "Sprocket" {
				return true
			}
		}
		return false
	}
	t.Cleanup(func() {
		if err := target.Client.Delete(context.Background(), crd); err != nil {
			t.Errorf("remove the Sprocket CRD: %v", err)
			return
		}
		eventually(t, time.Minute, "the target cluster no longer serves Sprockets", func(context.Context) (bool, error) {
			return !served(), nil
		})
	})
	eventually(t, time.Minute, "the target cluster serves Sprockets", func(context.Context) (bool, error) {
		return served(), nil
	})
}

// expectTargetSprocketsSliced waits until the target-cluster cache of each of replicas
// holds the Sprocket of every Gadget split assigns it and no other.
func expectTargetSprocketsSliced(t *testing.T, replicas []*shardedReplica, cluster, ns string, gadgets []*Gadget, split map[string]shard.Ranges) {
	t.Helper()
	for _, r := range replicas {
		want := map[string]bool{}
		for _, g := range gadgets {
			if split[r.name].Owns(g.UID) {
				want[g.Name+"-sprocket"] = true
			}
		}
		testenv.Eventually(t, time.Minute, r.name+"'s target-cluster cache holds the Sprockets of its Gadgets only", func(ctx context.Context) (bool, error) {
			cl, err := (*r.mgr.Load()).GetCluster(ctx, mcmulticluster.ClusterName(cluster))
			if err != nil {
				return false, err
			}
			var list SprocketList
			if err := cl.GetCache().List(ctx, &list, client.InNamespace(ns)); err != nil {
				return false, err
			}
			got := map[string]bool{}
			for _, sp := range list.Items {
				got[sp.Name] = true
			}
			return maps.Equal(got, want), nil
		})
	}
}

// expectWritesHeld fails the test for every recorded target write of a Gadget its
// replica did not hold.
func expectWritesHeld(t *testing.T, mu *sync.Mutex, writes *[]targetWrite) {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if len(*writes) == 0 {
		t.Fatal("no write to the target cluster was recorded")
	}
	for _, w := range *writes {
		if !w.held {
			t.Errorf("%s wrote the child of Gadget %s on the target cluster without holding its hash", w.replica, w.uid)
		}
	}
}

// A manager whose ManagerOptions.Shard narrows the target clusters' children gives the
// resolver's target Appliers what the narrowed caches need even when ResolverOptions
// asks for neither: a child the cache cannot show (the member holds no range yet, so
// its target cache holds nothing) is created after a confirmed miss, carries its
// owner's bucket, and a changed Gadget updates it rather than failing on the unseen
// child. Without Shard the same operator caches the child and stamps no bucket.
func TestNarrowedTargetAppliersConfirmAndStamp(t *testing.T) {
	ns := env.Namespace(t)
	namespaceOn(t, target, ns)
	member, err := shard.NewMember(env.Client, shard.Options{Namespace: ns, Ring: "narrowed", Identity: "idle"})
	if err != nil {
		t.Fatal(err)
	}
	member.SelectOwned(corev1.Resource("configmaps"))
	for _, narrowed := range []bool{true, false} {
		t.Run(fmt.Sprintf("narrowed=%v", narrowed), func(t *testing.T) {
			o := operatorOptions{}
			if narrowed {
				o.shard = member
			}
			op := startOperator(t, ns, o)
			name := fmt.Sprintf("edge-%v", narrowed)
			op.register(t, target, name)
			g := op.newGadget(t, ns, fmt.Sprintf("bucketed-%v", narrowed), name, "one")
			key := client.ObjectKey{Namespace: ns, Name: g.Name + "-config"}
			onTarget := func(message string) {
				t.Helper()
				eventually(t, time.Minute, "the child on the target cluster says "+message, func(ctx context.Context) (bool, error) {
					cm := &corev1.ConfigMap{}
					if err := target.Client.Get(ctx, key, cm); err != nil {
						return false, client.IgnoreNotFound(err)
					}
					bucket, stamped := cm.Labels[shard.LabelBucket]
					if stamped != narrowed || (narrowed && bucket != shard.BucketOf(g.UID)) {
						return false, fmt.Errorf("bucket label %q (stamped %v), want stamped %v with %q", bucket, stamped, narrowed, shard.BucketOf(g.UID))
					}
					return cm.Data["message"] == message, nil
				})
			}
			onTarget("one")
			cl, err := op.mgr.GetCluster(t.Context(), mcmulticluster.ClusterName(name))
			if err != nil {
				t.Fatal(err)
			}
			eventually(t, time.Minute, "the target cache shows the child only when not narrowed", func(ctx context.Context) (bool, error) {
				var list corev1.ConfigMapList
				if err := cl.GetCache().List(ctx, &list, client.InNamespace(ns)); err != nil {
					return false, err
				}
				return (len(list.Items) > 0) != narrowed, nil
			})
			patch := client.MergeFrom(g.DeepCopyObject().(*Gadget))
			g.Spec.Message = "two"
			if err := env.Client.Patch(t.Context(), g, patch); err != nil {
				t.Fatal(err)
			}
			onTarget("two")
		})
	}
}
