package config_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
)

// base is the base name the prune tests use; label is its config-base label.
const base = "test-config"

// liveName is the currentName of prunes that do not seed a current object: a name of
// the base that no seeded object has.
const liveName = base + "-cccccccc"

var label = map[string]string{config.ConfigBaseLabel: base}

// The filtering table of the spec, one row per case; "stale" is an ordinary
// candidate that proves pruning ran.
func TestPruneFiltering(t *testing.T) {
	cases := map[string]struct {
		seed     func(t *testing.T, k kindUnderTest, ns string, owner, stranger client.Object) string
		included bool
	}{
		"name matches baseName-* prefix, owned by owner": {
			seed: func(t *testing.T, k kindUnderTest, ns string, owner, _ client.Object) string {
				return k.seed(t, ns, base+"-00000002", label, controllerRef(owner)).GetName()
			},
			included: true,
		},
		"name equals currentName": {
			seed: func(t *testing.T, k kindUnderTest, ns string, owner, _ client.Object) string {
				return k.seed(t, ns, base+"-cccccccc", label, controllerRef(owner)).GetName()
			},
		},
		"name does not match baseName-* prefix": {
			seed: func(t *testing.T, k kindUnderTest, ns string, owner, _ client.Object) string {
				return k.seed(t, ns, base+"x-00000002", label, controllerRef(owner)).GetName()
			},
		},
		"no owner reference": {
			seed: func(t *testing.T, k kindUnderTest, ns string, _, _ client.Object) string {
				return k.seed(t, ns, base+"-00000002", label).GetName()
			},
		},
		"owner reference UID does not match owner": {
			seed: func(t *testing.T, k kindUnderTest, ns string, _, stranger client.Object) string {
				return k.seed(t, ns, base+"-00000002", label, controllerRef(stranger)).GetName()
			},
		},
		"owner's reference is not the controller reference": {
			seed: func(t *testing.T, k kindUnderTest, ns string, owner, stranger client.Object) string {
				ref := controllerRef(owner)
				ref.Controller = nil
				return k.seed(t, ns, base+"-00000002", label, ref, controllerRef(stranger)).GetName()
			},
		},
	}
	for kname, k := range kinds {
		for name, tc := range cases {
			t.Run(kname+"/"+name, func(t *testing.T) {
				ctx := context.Background()
				ns := env.Namespace(t)
				owner, stranger := newOwner(t, ns, "owner"), newOwner(t, ns, "stranger")
				current := base + "-cccccccc"
				if name != "name equals currentName" {
					k.seed(t, ns, current, label, controllerRef(owner))
				}
				stale := k.seed(t, ns, base+"-00000001", label, controllerRef(owner)).GetName()
				subject := tc.seed(t, k, ns, owner, stranger)

				if err := k.prune(ctx, env.Client, owner, base, ns, current, 0); err != nil {
					t.Fatal(err)
				}
				if k.get(t, ns, stale) != nil {
					t.Errorf("ordinary candidate %s survived retain=0", stale)
				}
				if k.get(t, ns, current) == nil {
					t.Errorf("current %s was deleted", current)
				}
				if deleted := k.get(t, ns, subject) == nil; deleted != tc.included {
					t.Errorf("%s deleted = %v, want %v", subject, deleted, tc.included)
				}
			})
		}
	}
}

// The edge-case table of the spec, and the example: 5 historical, retain 3.
func TestPruneEdgeCases(t *testing.T) {
	cases := map[string]struct {
		historical  int
		retain      int
		wantDeletes int
	}{
		"no historical objects exist":            {historical: 0, retain: 3, wantDeletes: 0},
		"fewer historical objects than retain":   {historical: 2, retain: 3, wantDeletes: 0},
		"exactly retain historical objects":      {historical: 3, retain: 3, wantDeletes: 0},
		"retain=0 deletes all but currentName":   {historical: 4, retain: 0, wantDeletes: 4},
		"5 historical, retain 3: 2 oldest go":    {historical: 5, retain: 3, wantDeletes: 2},
		"retain=0 and nothing historical either": {historical: 0, retain: 0, wantDeletes: 0},
	}
	for kname, k := range kinds {
		for name, tc := range cases {
			t.Run(kname+"/"+name, func(t *testing.T) {
				ctx := context.Background()
				ns := env.Namespace(t)
				owner := newOwner(t, ns, "owner")
				current := k.seed(t, ns, base+"-cccccccc", label, controllerRef(owner)).GetName()
				var historical []string
				for i := range tc.historical {
					historical = append(historical, k.seed(t, ns, base+"-0000000"+string(rune('a'+i)), label, controllerRef(owner)).GetName())
				}
				c, counter := warmClient(t, ns)
				if err := k.prune(ctx, c, owner, base, ns, current, tc.retain); err != nil {
					t.Fatal(err)
				}
				if got := counter.Method("DELETE"); got != tc.wantDeletes {
					t.Errorf("DELETE requests = %d, want %d", got, tc.wantDeletes)
				}
				if got := counter.Method("GET"); got != 1 {
					t.Errorf("GET (list) requests = %d, want 1", got)
				}
				if k.get(t, ns, current) == nil {
					t.Error("current object deleted")
				}
				if got := len(k.existing(t, ns, historical...)); got != tc.historical-tc.wantDeletes {
					t.Errorf("%d historical objects left, want %d", got, tc.historical-tc.wantDeletes)
				}

				// Idempotent: a second pass finds nothing more to do.
				counter.Reset()
				if err := k.prune(ctx, c, owner, base, ns, current, tc.retain); err != nil {
					t.Fatal(err)
				}
				if got := counter.Writes(); got != 0 {
					t.Errorf("second pass wrote %d times", got)
				}
			})
		}
	}
}

func TestPruneIgnoresObjectDeletedBetweenListAndDelete(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			gone := k.seed(t, ns, base+"-00000001", label, controllerRef(owner))
			other := k.seed(t, ns, base+"-00000002", label, controllerRef(owner)).GetName()
			c := listHook(t, func() {
				// Someone else deletes the candidate right after the list.
				if err := env.Client.Delete(ctx, gone); err != nil {
					t.Fatal(err)
				}
			})
			if err := k.prune(ctx, c, owner, base, ns, liveName, 0); err != nil {
				t.Fatalf("NotFound not ignored: %v", err)
			}
			if k.get(t, ns, other) != nil {
				t.Errorf("%s survived", other)
			}
		})
	}
}

func TestPruneSparesObjectReplacedBetweenListAndDelete(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner, stranger := newOwner(t, ns, "owner"), newOwner(t, ns, "stranger")
			replaced := k.seed(t, ns, base+"-00000001", label, controllerRef(owner))
			c := listHook(t, func() {
				// The candidate is deleted and its name taken by someone else's object.
				if err := env.Client.Delete(ctx, replaced); err != nil {
					t.Fatal(err)
				}
				k.seed(t, ns, replaced.GetName(), label, controllerRef(stranger))
			})
			if err := k.prune(ctx, c, owner, base, ns, liveName, 0); err != nil {
				t.Fatal(err)
			}
			now := k.get(t, ns, replaced.GetName())
			if now == nil {
				t.Fatal("the stranger's namesake was deleted")
			}
			if ref := metav1.GetControllerOf(now); ref == nil || ref.UID != stranger.UID {
				t.Errorf("object now controlled by %+v, want the stranger", ref)
			}
		})
	}
}

// listHook returns a client on env that runs after once after the first List.
func listHook(t *testing.T, after func()) client.Client {
	t.Helper()
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	return interceptor.NewClient(base, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			err := c.List(ctx, list, opts...)
			once.Do(after)
			return err
		},
	})
}

func TestPruneOverlappingPrefix(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			// A sibling base name that extends ours, created the ordinary way.
			extra, err := k.create(ctx, env.Client, owner, base+"-extra", ns, map[string]string{"a": "1"})
			if err != nil {
				t.Fatal(err)
			}
			// An object wearing our label whose name only shares the bare prefix.
			lookalike := k.seed(t, ns, base+"extra-00000001", label, controllerRef(owner)).GetName()
			ours, err := k.create(ctx, env.Client, owner, base, ns, map[string]string{"a": "1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := k.prune(ctx, env.Client, owner, base, ns, liveName, 0); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{extra, lookalike}, k.existing(t, ns, extra, lookalike, ours)); diff != "" {
				t.Errorf("survivors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPruneLeavesUnlabelledObjects(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			legacy := k.seed(t, ns, base+"-00000001", nil, controllerRef(owner)).GetName()
			labelled := k.seed(t, ns, base+"-00000002", label, controllerRef(owner)).GetName()
			if err := k.prune(ctx, env.Client, owner, base, ns, liveName, 0); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{legacy}, k.existing(t, ns, legacy, labelled)); diff != "" {
				t.Errorf("survivors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPruneOrder creates three generations one second apart (CreationTimestamp has a
// one-second resolution), two objects sharing each of the older timestamps, and checks
// which survive and the order of deletion: newest timestamp first, ties by name
// descending; deletion oldest first.
func TestPruneOrder(t *testing.T) {
	ctx := context.Background()
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			t.Parallel() // the kinds wait for second boundaries side by side
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			generations := [][]string{
				{base + "-0a000000", base + "-0b000000"}, // oldest
				{base + "-1b000000", base + "-1a000000"}, // same second, created in reverse name order
				{base + "-2a000000"},                     // newest
			}
			seedGenerations(t, k, ns, owner, generations)

			var deleted []string
			var mu sync.Mutex
			cl, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			c := interceptor.NewClient(cl, interceptor.Funcs{
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					mu.Lock()
					deleted = append(deleted, obj.GetName())
					mu.Unlock()
					return c.Delete(ctx, obj, opts...)
				},
			})
			// Newest first: 2a | 1b 1a | 0b 0a. Retain 2 keeps 2a and 1b.
			if err := k.prune(ctx, c, owner, base, ns, liveName, 2); err != nil {
				t.Fatal(err)
			}
			want := []string{base + "-0a000000", base + "-0b000000", base + "-1a000000"}
			if diff := cmp.Diff(want, deleted); diff != "" {
				t.Errorf("deletions, oldest first (-want +got):\n%s", diff)
			}
			all := slices.Concat(generations...)
			if diff := cmp.Diff([]string{base + "-1b000000", base + "-2a000000"}, k.existing(t, ns, all...)); diff != "" {
				t.Errorf("survivors (-want +got):\n%s", diff)
			}
		})
	}
}

// seedGenerations creates each generation's objects within one second of the clock,
// the generations in distinct seconds, as the API server's timestamps confirm. A
// generation that straddles a second boundary (a slow machine) is deleted and created
// again, at most three times.
func seedGenerations(t *testing.T, k kindUnderTest, ns string, owner client.Object, generations [][]string) {
	t.Helper()
	var last time.Time
	for i, names := range generations {
		var stamp time.Time
		for attempt := 1; ; attempt++ {
			var ok bool
			if stamp, ok = seedGeneration(t, k, ns, owner, names); ok {
				break
			}
			if attempt == 3 {
				t.Fatalf("generation %d straddled a second boundary %d times", i, attempt)
			}
		}
		if !stamp.After(last) {
			t.Fatalf("generation %d stamped %v, not after %v", i, stamp, last)
		}
		last = stamp
	}
}

// seedGeneration creates names just after a second boundary and reports their common
// CreationTimestamp; if they got different ones it deletes them and reports false.
func seedGeneration(t *testing.T, k kindUnderTest, ns string, owner client.Object, names []string) (time.Time, bool) {
	t.Helper()
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 20*time.Millisecond).Sub(now))
	var objs []client.Object
	for _, name := range names {
		objs = append(objs, k.seed(t, ns, name, label, controllerRef(owner)))
	}
	stamp := objs[0].GetCreationTimestamp().Time
	for _, obj := range objs {
		if !obj.GetCreationTimestamp().Time.Equal(stamp) {
			for _, o := range objs {
				if err := env.Client.Delete(context.Background(), o); err != nil {
					t.Fatal(err)
				}
			}
			return time.Time{}, false
		}
	}
	return stamp, true
}

func TestPruneReportsDeleteFailuresAndContinues(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			stuck := k.seed(t, ns, base+"-00000001", label, controllerRef(owner)).GetName()
			other := k.seed(t, ns, base+"-00000002", label, controllerRef(owner)).GetName()
			cl, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			c := interceptor.NewClient(cl, interceptor.Funcs{
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					if obj.GetName() == stuck {
						return apierrors.NewForbidden(schema.GroupResource{Resource: "x"}, stuck, errors.New("no"))
					}
					return c.Delete(ctx, obj, opts...)
				},
			})
			err = k.prune(ctx, c, owner, base, ns, liveName, 0)
			if !apierrors.IsForbidden(err) {
				t.Fatalf("error %v does not unwrap to Forbidden", err)
			}
			if want := "delete " + k.name + " " + ns + "/" + stuck; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
			if diff := cmp.Diff([]string{stuck}, k.existing(t, ns, stuck, other)); diff != "" {
				t.Errorf("survivors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPruneReportsListFailure(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	cl, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	c := interceptor.NewClient(cl, interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "", errors.New("no"))
		},
	})
	err = config.PruneImmutableConfigMaps(ctx, c, owner, base, ns, liveName, 0)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "list ConfigMaps in "+ns) {
		t.Errorf("error = %v, want a wrapped Forbidden naming the list", err)
	}
}

func TestPruneRejectsBadInputBeforeAnyRequest(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	cases := map[string]struct {
		owner   client.Object
		base    string
		ns      string
		current string
		retain  int
		want    error
	}{
		"negative retain":                {owner: owner, base: base, ns: ns, current: liveName, retain: -1, want: config.ErrInvalidRetain},
		"invalid base name":              {owner: owner, base: "Test_Config", ns: ns, current: liveName, want: config.ErrInvalidBaseName},
		"empty base name":                {owner: owner, base: "", ns: ns, current: liveName, want: config.ErrInvalidBaseName},
		"empty namespace":                {owner: owner, base: base, ns: "", current: liveName, want: config.ErrInvalidNamespace},
		"nil owner":                      {owner: nil, base: base, ns: ns, current: liveName, want: apply.ErrNilOwner},
		"owner never persisted":          {owner: &corev1.ConfigMap{}, base: base, ns: ns, current: liveName, want: apply.ErrOwnerNotPersisted},
		"empty currentName":              {owner: owner, base: base, ns: ns, current: "", want: config.ErrInvalidCurrentName},
		"empty currentName, retain 3":    {owner: owner, base: base, ns: ns, current: "", retain: 3, want: config.ErrInvalidCurrentName},
		"currentName of another base":    {owner: owner, base: base, ns: ns, current: "other-cccccccc", want: config.ErrInvalidCurrentName},
		"currentName sharing the prefix": {owner: owner, base: base, ns: ns, current: base + "x-cccccccc", want: config.ErrInvalidCurrentName},
		"currentName is the bare prefix": {owner: owner, base: base, ns: ns, current: base + "-", want: config.ErrInvalidCurrentName},
	}
	for kname, k := range kinds {
		for name, tc := range cases {
			t.Run(kname+"/"+name, func(t *testing.T) {
				c, counter, err := env.CountingClient()
				if err != nil {
					t.Fatal(err)
				}
				err = k.prune(ctx, c, tc.owner, tc.base, tc.ns, tc.current, tc.retain)
				if !errors.Is(err, tc.want) {
					t.Fatalf("error = %v, want errors.Is %v", err, tc.want)
				}
				if n := counter.Total(); n != 0 {
					t.Errorf("refused input still sent %d API requests", n)
				}
			})
		}
	}
}

// TestPruneRefusesWithoutCurrentName is defect 11 of issue 10: with an empty
// currentName and retain 0 the prune deleted every object of the base, the one the
// workloads mount included. It must refuse, delete nothing and send no request.
func TestPruneRefusesWithoutCurrentName(t *testing.T) {
	for kname, k := range kinds {
		t.Run(kname, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns, "owner")
			live, err := k.create(ctx, env.Client, owner, base, ns, map[string]string{"rev": "1"})
			if err != nil {
				t.Fatal(err)
			}
			stale := k.seed(t, ns, base+"-00000001", label, controllerRef(owner)).GetName()
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			for _, opts := range []config.PruneOptions{{Retain: 0}, config.DefaultPruneOptions()} {
				err := k.pruneWith(ctx, c, owner, base, ns, "", opts)
				if !errors.Is(err, config.ErrInvalidCurrentName) {
					t.Fatalf("prune with currentName \"\" and %+v: error = %v, want errors.Is ErrInvalidCurrentName", opts, err)
				}
				if !strings.Contains(err.Error(), k.name+"s "+ns+"/"+base+"-*") {
					t.Errorf("error %q does not name what was to be pruned", err)
				}
			}
			if n := counter.Total(); n != 0 {
				t.Errorf("refused prune sent %d API requests", n)
			}
			if diff := cmp.Diff([]string{live, stale}, k.existing(t, ns, live, stale)); diff != "" {
				t.Errorf("survivors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPruneLogsEachDeletion(t *testing.T) {
	ns := env.Namespace(t)
	owner := newOwner(t, ns, "owner")
	k := kinds["Secret"]
	k.seed(t, ns, base+"-00000001", label, controllerRef(owner))
	k.seed(t, ns, base+"-00000002", label, controllerRef(owner))
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 0})
	ctx := log.IntoContext(context.Background(), logger)
	if err := k.prune(ctx, env.Client, owner, base, ns, liveName, 0); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Fatalf("logged %d lines, want one per deletion: %q", len(lines), lines)
	}
	for i, name := range []string{base + "-00000001", base + "-00000002"} {
		for _, want := range []string{`"Deleted stale immutable object"`, `"kind"="Secret"`, `"name"="` + name + `"`, `"namespace"="` + ns + `"`} {
			if !strings.Contains(lines[i], want) {
				t.Errorf("log line %q lacks %s", lines[i], want)
			}
		}
	}
}
