package shard_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	. "github.com/c5c3/reconciler-sdk/shard"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// A transport narrows the informers of the children kinds of SelectOwned to the
// member's buckets, on any API server: a cache that selects the operator's ConfigMaps
// by ManagedByLabel holds those labelled with one of the member's buckets, not the other
// member's nor unlabelled ones; a list that selects by another label (a registration, a
// lookup by owner) is sent unchanged. When the other member leaves, the informer lists
// again and holds every bucket.
func TestOwnedTransport(t *testing.T) {
	ns := env.Namespace(t)
	a, b := start(t, ns, "a"), start(t, ns, "b")
	expectSplit(t, time.Minute, a, b)

	const fieldManager = "children-operator"
	var children []string // names of the labelled children
	for i := range 120 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("child-%d", i),
			Labels: map[string]string{apply.ManagedByLabel: fieldManager, "role": "child"}}}
		maps.Copy(cm.Labels, OwnerLabels(uuid.NewUUID()))
		if err := env.Client.Create(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		children = append(children, cm.Name)
	}
	stray := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unbucketed",
		Labels: map[string]string{apply.ManagedByLabel: fieldManager, "role": "child"}}}
	if err := env.Client.Create(t.Context(), stray); err != nil {
		t.Fatal(err)
	}

	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(a.OwnedTransport())
	a.SelectOwned(schema.GroupResource{Resource: "configmaps"})
	if a.ServerSide() {
		t.Error("ServerSide() with only an OwnedTransport, want false: the custom resources are filtered on the client")
	}
	c, err := cache.New(cfg, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}},
		ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
			Label: labels.SelectorFromSet(labels.Set{apply.ManagedByLabel: fieldManager})}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("cache: %v", err)
		}
	})

	holds := func(active Ranges) map[string]bool {
		want := map[string]bool{}
		sel, err := labels.Parse(active.BucketSelector())
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range children {
			cm := &corev1.ConfigMap{}
			if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
				t.Fatal(err)
			}
			if sel.Matches(labels.Set(cm.Labels)) {
				want[name] = true
			}
		}
		return want
	}
	expectCached := func(what string, want map[string]bool) {
		t.Helper()
		testenv.Eventually(t, time.Minute, what, func(ctx context.Context) (bool, error) {
			var list corev1.ConfigMapList
			if err := c.List(ctx, &list); err != nil {
				return false, err
			}
			got := map[string]bool{}
			for _, cm := range list.Items {
				got[cm.Name] = true
			}
			return maps.Equal(got, want), nil
		})
	}
	mine := holds(a.Active())
	if len(mine) == 0 || len(mine) == len(children) {
		t.Fatalf("a's buckets hold %d of %d children: the split should give it some, not all", len(mine), len(children))
	}
	expectCached("a's cache holds the children of its buckets only", mine)

	other, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	var byRole corev1.ConfigMapList
	if err := other.List(t.Context(), &byRole, client.InNamespace(ns), client.MatchingLabels{"role": "child"}); err != nil {
		t.Fatal(err)
	}
	if got, want := len(byRole.Items), len(children)+1; got != want {
		t.Errorf("a list selecting by another label returned %d ConfigMaps, want all %d: it must pass unchanged", got, want)
	}

	if err := b.leave(); err != nil {
		t.Fatal(err)
	}
	expectSplit(t, time.Minute, a)
	all := map[string]bool{}
	for _, name := range children {
		all[name] = true
	}
	expectCached("a's cache holds every bucket once b left, and still no unbucketed child", all)
}

// The member keeps nothing of a transport once its client is gone (a target cluster
// disengaged, its cache stopped): the transport is garbage collected, and the watches
// it opened are no longer counted open, whether their client closed them or only ended
// their request's context. A member whose ranges change closes only the watches open
// then.
func TestTransportLeavesNothingBehind(t *testing.T) {
	ns := env.Namespace(t)
	a, b := start(t, ns, "a"), start(t, ns, "b")
	expectSplit(t, time.Minute, a, b)
	a.SelectOwned(schema.GroupResource{Resource: "configmaps"})
	const fieldManager = "children-operator"

	var collected []func() bool
	var mu sync.Mutex
	for i := range 3 {
		cfg := rest.CopyConfig(env.Config)
		cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
			rt := a.OwnedTransport()(next)
			mu.Lock()
			collected = append(collected, Collected(rt))
			mu.Unlock()
			return rt
		})
		c, err := cache.New(cfg, cache.Options{Scheme: env.Scheme, DefaultNamespaces: map[string]cache.Config{ns: {}},
			ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
				Label: labels.SelectorFromSet(labels.Set{apply.ManagedByLabel: fieldManager})}}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan error, 1)
		go func() { stopped <- c.Start(ctx) }()
		var list corev1.ConfigMapList
		testenv.Eventually(t, time.Minute, fmt.Sprintf("cache %d lists and watches ConfigMaps", i), func(ctx context.Context) (bool, error) {
			if err := c.List(ctx, &list); err != nil {
				return false, err
			}
			return a.OpenWatches() == 1, nil
		})
		cancel()
		if err := <-stopped; err != nil {
			t.Fatalf("cache %d: %v", i, err)
		}
		testenv.Eventually(t, time.Minute, fmt.Sprintf("cache %d's watch is no longer open once it stopped", i), func(context.Context) (bool, error) {
			return a.OpenWatches() == 0, nil
		})
	}
	mu.Lock()
	if len(collected) == 0 {
		t.Fatal("no transport was built for the caches")
	}
	mu.Unlock()
	testenv.Eventually(t, time.Minute, "the transports of the stopped caches are garbage collected", func(context.Context) (bool, error) {
		runtime.GC()
		mu.Lock()
		defer mu.Unlock()
		for _, gone := range collected {
			if !gone() {
				return false, nil
			}
		}
		return true, nil
	})

	// A watch whose body nobody closes is forgotten when its request's context ends.
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(a.OwnedTransport())
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: rt}
	path := strings.TrimSuffix(cfg.Host, "/") + "/api/v1/namespaces/" + ns + "/configmaps"
	get := func(ctx context.Context, query string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, path+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	list := get(t.Context(), "")
	_ = list.Body.Close()
	if list.StatusCode != http.StatusOK {
		t.Fatalf("list: %s", list.Status)
	}
	watchCtx, endWatch := context.WithCancel(t.Context())
	watch := get(watchCtx, "?watch=true&resourceVersion=0")
	if watch.StatusCode != http.StatusOK {
		t.Fatalf("watch after a list: %s, want 200", watch.Status)
	}
	if got := a.OpenWatches(); got != 1 {
		t.Fatalf("open watches after one watch: %d, want 1", got)
	}
	endWatch()
	testenv.Eventually(t, time.Minute, "a watch whose request ended is no longer open", func(context.Context) (bool, error) {
		return a.OpenWatches() == 0, nil
	})

	// The ranges change while a watch is open: it is closed, and the next watch without
	// a list is answered 410 Expired.
	watch = get(t.Context(), "?watch=true&resourceVersion=0")
	if watch.StatusCode != http.StatusOK {
		t.Fatalf("watch after a list: %s, want 200", watch.Status)
	}
	ended := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, watch.Body); close(ended) }()
	if err := b.leave(); err != nil {
		t.Fatal(err)
	}
	expectSplit(t, time.Minute, a)
	select {
	case <-ended:
	case <-time.After(time.Minute):
		t.Fatal("the watch open when the ranges changed was not closed")
	}
	_ = watch.Body.Close()
	if got := a.OpenWatches(); got != 0 {
		t.Errorf("open watches once the ranges changed: %d, want 0", got)
	}
	again := get(t.Context(), "?watch=true&resourceVersion=0")
	_ = again.Body.Close()
	if again.StatusCode != http.StatusGone {
		t.Errorf("watch without a list after the ranges changed: %s, want 410 Gone", again.Status)
	}
}
