package config_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/config"
)

// BenchmarkRenderINI renders a 200-option file: 10 sections of 20 options, some of
// them multi-valued or multi-line.
func BenchmarkRenderINI(b *testing.B) {
	s := config.Sections{}
	for i := range 10 {
		section := fmt.Sprintf("section_%02d", i)
		if i == 0 {
			section = config.DefaultSection
		}
		s[section] = map[string][]string{}
		for j := range 20 {
			value := []string{fmt.Sprintf("value-%d-%d", i, j)}
			switch j % 10 {
			case 3:
				value = append(value, "second", "third")
			case 7:
				value = []string{"line one\nline two\nline three"}
			}
			s[section][fmt.Sprintf("option_%02d", j)] = value
		}
	}
	b.ReportAllocs()
	var out string
	for b.Loop() {
		var err error
		if out, err = config.RenderINI(s); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(out)))
}

// BenchmarkContentHash hashes 64 KiB: four files of 16 KiB.
func BenchmarkContentHash(b *testing.B) {
	data := map[string]string{}
	for i := range 4 {
		data[fmt.Sprintf("file-%d.conf", i)] = strings.Repeat("option = value\n", 16<<10/15+1)[:16<<10]
	}
	b.SetBytes(64 << 10)
	b.ReportAllocs()
	for b.Loop() {
		_ = config.ContentHash(data)
	}
}

// BenchmarkPrune prunes among 100 candidates: "converged" keeps them all (retain 100),
// "delete97" keeps 3 and deletes 97 (re-created untimed before each run), and
// "delete97SpareInUse" does the same with SpareInUse, which lists the namespace's
// workloads (8 kinds) as well. requests/op counts API requests per prune.
func BenchmarkPrune(b *testing.B) {
	cases := map[string]struct {
		opts config.PruneOptions
	}{
		"converged":          {opts: config.PruneOptions{Retain: 100}},
		"delete97":           {opts: config.PruneOptions{Retain: 3}},
		"delete97SpareInUse": {opts: config.PruneOptions{Retain: 3, SpareInUse: true}},
	}
	for name, tc := range cases {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			ns := env.Namespace(b)
			owner := newOwner(b, ns, "owner")
			c, counter, err := env.CountingClient()
			if err != nil {
				b.Fatal(err)
			}
			next := 0
			topUp := func() {
				list := &corev1.ConfigMapList{}
				if err := env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels(label)); err != nil {
					b.Fatal(err)
				}
				for n := len(list.Items); n < 100; n++ {
					next++
					kinds["ConfigMap"].seed(b, ns, fmt.Sprintf("%s-%08x", base, next), label, controllerRef(owner))
				}
			}
			topUp()
			// Warm the client's REST mapper.
			if err := config.PruneImmutableConfigMapsWithOptions(ctx, c, owner, base, ns, liveName, config.PruneOptions{Retain: 100}); err != nil {
				b.Fatal(err)
			}
			requests, deletes := 0, 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				topUp()
				counter.Reset()
				b.StartTimer()
				if err := config.PruneImmutableConfigMapsWithOptions(ctx, c, owner, base, ns, liveName, tc.opts); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				requests += counter.Total()
				deletes += counter.Method("DELETE")
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
			b.ReportMetric(float64(deletes)/float64(b.N), "deletes/op")
		})
	}
}
