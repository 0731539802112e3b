package shard

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServesShardSelector asks the API server whether it honours ListOptions.shardSelector
// for list's kind, with one List of at most one object (opts narrow it, a namespace for
// instance): true when the answer echoes the selector in its shardInfo (Kubernetes 1.36 and
// later with the ShardedListAndWatch feature gate), false when the server ignored it
// (older servers, the gate off). c must read from the API server, not from a cache.
func ServesShardSelector(ctx context.Context, c client.Reader, list client.ObjectList, opts ...client.ListOption) (bool, error) {
	sel := Full().Selector()
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	o.Limit = 1
	if o.Raw == nil {
		o.Raw = &metav1.ListOptions{}
	}
	o.Raw.ShardSelector = sel
	if err := c.List(ctx, list, o); err != nil {
		return false, fmt.Errorf("shard: probing shardSelector support: %w", err)
	}
	return echoed(list) == sel, nil
}

// echoed is the shard selector a list answer's shardInfo echoes, "" without one.
func echoed(list client.ObjectList) string {
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		s, _, _ := unstructured.NestedString(u.Object, "metadata", "shardInfo", "selector")
		return s
	}
	if a, ok := list.(metav1.ListMetaAccessor); ok {
		if lm, ok := a.GetListMeta().(*metav1.ListMeta); ok && lm.ShardInfo != nil {
			return lm.ShardInfo.Selector
		}
	}
	return ""
}
