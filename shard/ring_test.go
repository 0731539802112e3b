package shard

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// The ring's hash and ranges are the API server's: for random UIDs, Ranges.Owns agrees
// with apimachinery's shard selector parsed from the same bounds.
func TestHashMatchesTheServersSelector(t *testing.T) {
	split := Assign([]string{"a", "b", "c"}, 0)
	for m, rs := range split {
		var reqs []sharding.ShardRangeRequirement
		for _, r := range rs {
			start, end := bounds(r)
			reqs = append(reqs, sharding.ShardRangeRequirement{Key: UIDField, Start: start, End: end})
		}
		sel := sharding.NewSelector(reqs...)
		for range 2000 {
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{UID: uuid.NewUUID()}}
			want, err := sel.Matches(obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := rs.Owns(obj.UID); got != want {
				t.Fatalf("member %s, UID %s (hash %#x): Owns %v, the server's selector %v", m, obj.UID, Hash(obj.UID), got, want)
			}
		}
	}
	if got, want := Full().Selector(), "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"; got != want {
		t.Errorf("Full().Selector() = %s, want %s", got, want)
	}
	if got := (Ranges{}).Selector(); got != "" {
		t.Errorf("empty Selector() = %q, want none", got)
	}
}

// Assign covers the whole space with disjoint ranges, the same way for every order of
// the members; with 64 points each, three members' shares stay near a third; a member
// joining takes only from the others (nobody else's ranges move), and leaving gives only
// its own.
func TestAssign(t *testing.T) {
	for n := 1; n <= 5; n++ {
		var members []string
		for i := range n {
			members = append(members, fmt.Sprintf("operator-%d", i))
		}
		split := Assign(members, 0)
		var all Ranges
		for m, rs := range split {
			for _, r := range rs {
				if r.First%bucketSize != 0 || (r.Last+1)%bucketSize != 0 {
					t.Errorf("%d members: %s's range %s is not whole buckets", n, m, r)
				}
			}
			if len(Intersect(all, rs)) > 0 {
				t.Fatalf("%d members: ranges overlap: %v", n, split)
			}
			all = Union(all, rs)
		}
		if diff := cmp.Diff(Full(), all); diff != "" {
			t.Errorf("%d members: union -full, +got:\n%s", n, diff)
		}
		rev := slices.Clone(members)
		slices.Reverse(rev)
		reversed := Assign(rev, 0)
		if diff := cmp.Diff(split, reversed); diff != "" {
			t.Errorf("%d members: the order of members changed the split:\n%s", n, diff)
		}
	}
	for _, names := range [][]string{{"a", "b", "c"}, {"operator-0", "operator-1", "operator-2"},
		{"shardapp-operator-0", "shardapp-operator-1", "shardapp-operator-2"}} {
		for m, rs := range Assign(names, 0) {
			if s := rs.Size(); s < 0.25 || s > 0.42 {
				t.Errorf("member %s of %v owns %.3f of the space, want about a third", m, names, s)
			}
		}
	}
	three := Assign([]string{"operator-0", "operator-1", "operator-2"}, 0)
	four := Assign([]string{"operator-0", "operator-1", "operator-2", "operator-3"}, 0)
	for m, rs := range three {
		if moved := Subtract(four[m], rs); len(moved) > 0 {
			t.Errorf("a fourth member joining gave %s ranges it did not own: %v", m, moved)
		}
	}
	if got := Assign(nil, 0); len(got) != 0 {
		t.Errorf("Assign(nil) = %v, want no ranges", got)
	}
}

// An object's bucket is the leading BucketBits bits of its hash; the bucket selector of
// ranges names the buckets they touch, is the label's presence for the whole space, and
// matches nothing for no range.
func TestBuckets(t *testing.T) {
	uid := types.UID("6b9f3c2e-0d6a-4c1e-9a57-3f1f1d2b7c10")
	if got, want := BucketOf(uid), fmt.Sprintf("%03x", Hash(uid)>>54); got != want {
		t.Errorf("BucketOf = %s, want %s", got, want)
	}
	if diff := cmp.Diff(map[string]string{LabelBucket: BucketOf(uid)}, OwnerLabels(uid)); diff != "" {
		t.Errorf("OwnerLabels -want, +got:\n%s", diff)
	}
	tests := map[string]struct {
		rs      Ranges
		buckets int
		matches []string
		misses  []string
		want    string
	}{
		"the whole space": {rs: Full(), buckets: 1 << BucketBits, matches: []string{"000", "3ff"}, want: LabelBucket},
		"nothing":         {rs: nil, misses: []string{"000", "3ff"}, want: LabelBucket + " in (none)"},
		"within one bucket": {rs: Ranges{{First: 5 * bucketSize, Last: 5*bucketSize + 9}}, buckets: 1,
			matches: []string{"005"}, misses: []string{"004", "006"}},
		"two ranges, one bucket shared": {rs: Ranges{{First: 0, Last: 1}, {First: 5, Last: 2*bucketSize - 1}, {First: 0x3ff * bucketSize, Last: math.MaxUint64}},
			buckets: 3, matches: []string{"000", "001", "3ff"}, misses: []string{"002", "3fe"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := len(tc.rs.Buckets()); got != tc.buckets {
				t.Errorf("%d buckets, want %d: %v", got, tc.buckets, tc.rs.Buckets())
			}
			text := tc.rs.BucketSelector()
			if tc.want != "" && text != tc.want {
				t.Errorf("BucketSelector = %q, want %q", text, tc.want)
			}
			sel, err := labels.Parse(text)
			if err != nil {
				t.Fatalf("BucketSelector %q: %v", text, err)
			}
			for _, b := range tc.matches {
				if !sel.Matches(labels.Set{LabelBucket: b}) {
					t.Errorf("%q does not match bucket %s", text, b)
				}
			}
			for _, b := range tc.misses {
				if sel.Matches(labels.Set{LabelBucket: b}) {
					t.Errorf("%q matches bucket %s", text, b)
				}
			}
			if sel.Matches(labels.Set{}) {
				t.Errorf("%q matches an object without the label", text)
			}
		})
	}
}

// Ranges.String and ParseRanges round-trip; a malformed annotation is ErrBadRanges
// naming the part.
func TestParseRanges(t *testing.T) {
	for _, rs := range []Ranges{nil, Full(), {{First: 0, Last: 9}, {First: 0x8000000000000000, Last: math.MaxUint64}}, {{First: 5, Last: 5}}} {
		got, err := ParseRanges(rs.String())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rs, got); diff != "" {
			t.Errorf("ParseRanges(%q): -want, +got:\n%s", rs.String(), diff)
		}
	}
	for _, bad := range []string{"x", "0x10-0x5", "0x0-0x0", "0x0000000000000000", "0xzz-0x10"} {
		if _, err := ParseRanges(bad); !errors.Is(err, ErrBadRanges) {
			t.Errorf("ParseRanges(%q): %v, want ErrBadRanges", bad, err)
		}
	}
}

// The set operations on ranges, at the edges of the space.
func TestRangeSets(t *testing.T) {
	r := func(first, last uint64) Range { return Range{First: first, Last: last} }
	tests := map[string]struct {
		got, want Ranges
	}{
		"union merges adjacent": {Union(Ranges{r(0, 9)}, Ranges{r(10, 19)}), Ranges{r(0, 19)}},
		"union keeps gaps":      {Union(Ranges{r(20, 29)}, Ranges{r(0, 9)}), Ranges{r(0, 9), r(20, 29)}},
		"union up to the end":   {Union(Ranges{r(0, 9)}, Ranges{r(5, math.MaxUint64)}), Full()},
		"intersect":             {Intersect(Ranges{r(0, 19)}, Ranges{r(10, 29), r(40, 50)}), Ranges{r(10, 19)}},
		"intersect disjoint":    {Intersect(Ranges{r(0, 9)}, Ranges{r(10, 19)}), nil},
		"subtract middle":       {Subtract(Full(), Ranges{r(10, 19)}), Ranges{r(0, 9), r(20, math.MaxUint64)}},
		"subtract all":          {Subtract(Ranges{r(10, 19)}, Full()), nil},
		"subtract the end":      {Subtract(Full(), Ranges{r(math.MaxUint64, math.MaxUint64)}), Ranges{r(0, math.MaxUint64-1)}},
		"subtract nothing":      {Subtract(Ranges{r(3, 4)}, nil), Ranges{r(3, 4)}},
	}
	for name, tc := range tests {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s: -want, +got:\n%s", name, diff)
		}
	}
	rs := Ranges{r(10, 19), r(30, 39)}
	for h, want := range map[uint64]bool{9: false, 10: true, 19: true, 25: false, 39: true, 40: false} {
		if rs.Contains(h) != want {
			t.Errorf("%v.Contains(%d) = %v, want %v", rs, h, !want, want)
		}
	}
	if !Full().Owns(types.UID("anything")) {
		t.Error("Full does not own a UID")
	}
}

// collection names the group and resource of collection paths only.
func TestCollection(t *testing.T) {
	for path, want := range map[string]schema.GroupResource{
		"/api/v1/configmaps":                           {Resource: "configmaps"},
		"/api/v1/namespaces/ns/configmaps":             {Resource: "configmaps"},
		"/apis/platform.io/v1/databases":               {Group: "platform.io", Resource: "databases"},
		"/apis/platform.io/v1/namespaces/ns/databases": {Group: "platform.io", Resource: "databases"},
		"/api/v1/namespaces/ns/configmaps/one":         {},
		"/api/v1/namespaces/ns":                        {},
		"/apis/platform.io/v1":                         {},
		"/healthz":                                     {},
	} {
		if got := collection(path); got != want {
			t.Errorf("collection(%s) = %v, want %v", path, got, want)
		}
	}
}
