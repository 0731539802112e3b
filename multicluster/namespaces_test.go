package multicluster_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/testenv"
)

const allowedNamespacesAnnotation = multicluster.AllowedNamespacesAnnotation

// targetKubeconfigBytes returns the shared target's kubeconfig.
func targetKubeconfigBytes(t *testing.T) []byte {
	t.Helper()
	data, err := target.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// annotate sets the allowed-namespaces annotation of the registration Secret name to
// allowed and waits until the operator's cache, which the resolver reads, has it.
func (o *operator) annotate(t *testing.T, name, allowed string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.clustersNS, Name: name}}
	patch := client.RawPatch(client.Merge.Type(),
		[]byte(`{"metadata":{"annotations":{"`+allowedNamespacesAnnotation+`":"`+allowed+`"}}}`))
	if err := o.mgmt.Client.Patch(context.Background(), s, patch); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the cache sees the annotation", func(ctx context.Context) (bool, error) {
		cached := &corev1.Secret{}
		err := o.mgr.GetLocalManager().GetClient().Get(ctx, client.ObjectKeyFromObject(s), cached)
		return err == nil && cached.Annotations[allowedNamespacesAnnotation] == allowed, err
	})
}

// touch changes the Gadget's message, so that a pass runs now and observes a new
// generation.
func touch(t *testing.T, g *Gadget, message string) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(g), g); err != nil {
		t.Fatal(err)
	}
	g.Spec.Message = message
	if err := env.Client.Update(context.Background(), g); err != nil {
		t.Fatal(err)
	}
}

// A target cluster serves only the namespaces its kubeconfig Secret lists in the
// allowed-namespaces annotation: without it, or with a list that leaves the CR's
// namespace out, the CR gets TargetClusterUnavailable naming the annotation and nothing
// is written there; listing the namespace (or "*") lets it in.
func TestAllowedNamespaces(t *testing.T) {
	ns := env.Namespace(t)
	namespaceOn(t, target, ns)
	op := startOperator(t, ns, operatorOptions{})
	op.registerKubeconfig(t, "edge", targetKubeconfigBytes(t), "")

	g := op.newGadget(t, ns, "g", "edge", "v1")
	fragments := []string{`target cluster "edge"`, `namespace "` + ns + `"`, allowedNamespacesAnnotation,
		"kubeconfig Secret " + op.clustersNS + "/edge"}
	expectReason(t, env, g, multicluster.TargetClusterUnavailable, 30*time.Second, fragments...)
	if ok, _ := get(context.Background(), target, childOf(g)); ok {
		t.Fatal("a child was written for a namespace the Secret does not list")
	}
	if len(g.Finalizers) != 0 {
		t.Fatalf("finalizers = %v, want none for a cluster the namespace may not use", g.Finalizers)
	}
	for what, ctx := range map[string]context.Context{
		"the CR's namespace": multicluster.WithNamespace(context.Background(), ns),
		"no namespace":       context.Background(),
	} {
		_, err := op.resolver.Resolve(ctx, g.Spec.TargetClusterRef)
		if !errors.Is(err, multicluster.ErrNamespaceNotAllowed) || !errors.Is(err, multicluster.ErrTargetClusterUnavailable) {
			t.Errorf("Resolve with %s = %v, want ErrNamespaceNotAllowed and ErrTargetClusterUnavailable", what, err)
		}
	}

	op.annotate(t, "edge", "elsewhere")
	touch(t, g, "v2")
	expectReason(t, env, g, multicluster.TargetClusterUnavailable, 30*time.Second, fragments...)
	if ok, _ := get(context.Background(), target, childOf(g)); ok {
		t.Fatal("a child was written for a namespace the Secret does not list")
	}

	op.annotate(t, "edge", " elsewhere , "+ns+" ")
	if _, err := op.resolver.Resolve(context.Background(), g.Spec.TargetClusterRef); !errors.Is(err, multicluster.ErrNamespaceNotAllowed) {
		t.Errorf("Resolve without the CR's namespace in the context = %v, want ErrNamespaceNotAllowed", err)
	}
	touch(t, g, "v3")
	expectReason(t, env, g, "ChildrenApplied", 30*time.Second, "target cluster edge")
	if cm := childOf(g); !must(get(context.Background(), target, cm)) || cm.Data["message"] != "v3" {
		t.Fatalf("child on the target once the namespace is listed: %v", cm.Data)
	}

	op.registerKubeconfig(t, "anywhere", targetKubeconfigBytes(t), "*")
	op.waitResolves(t, "anywhere")
	g2 := op.newGadget(t, ns, "g2", "anywhere", "v1")
	testenv.ExpectCondition(t, env.Client, g2, "Ready", metav1.ConditionTrue)
}

// must is a found flag, failing on an error.
func must(found bool, err error) bool { return found && err == nil }

// A namespace taken off a target cluster's list has nothing swept there either: a
// deleted CR's children stay (the CR is let go after GiveUpAfter), and so do those of a
// CR that moves back to the management cluster, whose finalizer waits.
func TestAllowedNamespacesBoundTheSweep(t *testing.T) {
	ns := env.Namespace(t)
	namespaceOn(t, target, ns)
	op := startOperator(t, ns, operatorOptions{giveUpAfter: 3 * time.Second})
	op.registerKubeconfig(t, "edge", targetKubeconfigBytes(t), ns)
	op.registerKubeconfig(t, "west", targetKubeconfigBytes(t), ns)
	op.waitResolves(t, "edge")
	op.waitResolves(t, "west")
	deleted := op.newGadget(t, ns, "deleted", "edge", "v1")
	moved := op.newGadget(t, ns, "moved", "west", "v1")
	testenv.ExpectCondition(t, env.Client, deleted, "Ready", metav1.ConditionTrue)
	testenv.ExpectCondition(t, env.Client, moved, "Ready", metav1.ConditionTrue)

	op.annotate(t, "edge", "elsewhere")
	op.annotate(t, "west", "elsewhere")

	if err := env.Client.Delete(context.Background(), deleted); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "Gadget let go", func(ctx context.Context) (bool, error) {
		ok, err := get(ctx, env, &Gadget{ObjectMeta: deleted.ObjectMeta})
		return !ok && err == nil, err
	})
	if !must(get(context.Background(), target, childOf(deleted))) {
		t.Fatal("the sweep deleted a child on a cluster the namespace may no longer use")
	}
	var abandoned bool
	for _, e := range events(t, env, deleted) {
		abandoned = abandoned || (strings.HasPrefix(e, "Warning "+multicluster.ReasonTargetClusterSweepAbandoned) &&
			strings.Contains(e, allowedNamespacesAnnotation))
	}
	if !abandoned {
		t.Fatalf("no %s event naming the annotation; events: %v", multicluster.ReasonTargetClusterSweepAbandoned, events(t, env, deleted))
	}

	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(moved), moved); err != nil {
		t.Fatal(err)
	}
	moved.Spec.TargetClusterRef = nil
	if err := env.Client.Update(context.Background(), moved); err != nil {
		t.Fatal(err)
	}
	expectReason(t, env, moved, "ChildrenApplied", 30*time.Second, "the management cluster")
	if !must(get(context.Background(), target, childOf(moved))) {
		t.Fatal("moving back swept a cluster the namespace may no longer use")
	}
	if !slices.Contains(moved.Finalizers, multicluster.FinalizerFor("west")) {
		t.Fatalf("finalizers = %v; the unswept cluster's finalizer must stay", moved.Finalizers)
	}
}
