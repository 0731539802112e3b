package shard_test

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// With the feature gate on, the API server honours each member's selector: every list
// answer echoes it, holds only the member's slice, and the slices of three members are
// the whole collection, each object in exactly one. ServesShardSelector says so, for
// typed and unstructured lists; a control plane without the gate ignores the selector,
// and ServesShardSelector says that too.
func TestServerSideSelector(t *testing.T) {
	ns := env.Namespace(t)
	all := sets.New[string]()
	for i := range 40 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%d", i)}}
		if err := env.Client.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		all.Insert(string(cm.UID))
	}
	seen := sets.New[string]()
	for member, rs := range Assign([]string{"a", "b", "c"}, 0) {
		var list corev1.ConfigMapList
		if err := env.Client.List(t.Context(), &list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ShardSelector: rs.Selector()}}); err != nil {
			t.Fatal(err)
		}
		if list.ShardInfo == nil || list.ShardInfo.Selector != rs.Selector() {
			t.Errorf("member %s: shardInfo %+v, want its selector echoed", member, list.ShardInfo)
		}
		for _, cm := range list.Items {
			if !rs.Owns(cm.UID) {
				t.Errorf("member %s got %s, whose UID hashes outside its ranges", member, cm.Name)
			}
			if seen.Has(string(cm.UID)) {
				t.Errorf("%s listed by two members", cm.Name)
			}
			seen.Insert(string(cm.UID))
		}
	}
	if !seen.Equal(all) {
		t.Errorf("the members' slices hold %d of the %d ConfigMaps", seen.Len(), all.Len())
	}

	u := &unstructured.UnstructuredList{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMapList")
	for name, list := range map[string]client.ObjectList{"typed": &corev1.ConfigMapList{}, "unstructured": u} {
		served, err := ServesShardSelector(t.Context(), env.Client, list, client.InNamespace(ns))
		if err != nil || !served {
			t.Errorf("%s: ServesShardSelector with the gate on = %v, %v; want true", name, served, err)
		}
	}

	off, err := testenv.Start(testenv.Options{CRDSources: []testenv.CRDSource{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = off.Stop() })
	served, err := ServesShardSelector(t.Context(), off.Client, &corev1.ConfigMapList{})
	if err != nil || served {
		t.Errorf("ServesShardSelector with the gate off = %v, %v; want false", served, err)
	}
}
