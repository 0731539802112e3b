package shard

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/types"
)

// UIDField is the field the API server's shard selector hashes: a custom resource's
// metadata.uid, in the selector's CEL-style path.
const UIDField = "object.metadata.uid"

// Hash is the 64-bit FNV-1a hash of uid, the value the API server's
// shardRange(object.metadata.uid, ...) compares.
func Hash(uid types.UID) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return h.Sum64()
}

// Range is the hashes from First to Last, both included.
type Range struct {
	First, Last uint64
}

// Contains reports whether h lies in r.
func (r Range) Contains(h uint64) bool { return r.First <= h && h <= r.Last }

// String is r as the API server's shardRange bounds: '0x<First>', '0x<Last+1>' (the
// upper bound exclusive, 0x10000000000000000 for the end of the space).
func (r Range) String() string {
	start, end := bounds(r)
	return start + "-" + end
}

// bounds are r's selector bounds: the inclusive start and the exclusive end, as
// 0x-prefixed 16-digit hex (17 digits for 2^64).
func bounds(r Range) (start, end string) {
	start = fmt.Sprintf("0x%016x", r.First)
	if r.Last == math.MaxUint64 {
		return start, "0x10000000000000000"
	}
	return start, fmt.Sprintf("0x%016x", r.Last+1)
}

// Ranges is a set of disjoint ranges in ascending order; its zero value is empty.
type Ranges []Range

// Full is the whole hash space: what one replica alone owns.
func Full() Ranges { return Ranges{{First: 0, Last: math.MaxUint64}} }

// Contains reports whether h lies in one of rs.
func (rs Ranges) Contains(h uint64) bool {
	i, found := slices.BinarySearchFunc(rs, h, func(r Range, h uint64) int {
		switch {
		case r.Last < h:
			return -1
		case r.First > h:
			return 1
		}
		return 0
	})
	return found && i < len(rs)
}

// Owns reports whether the object of uid lies in rs.
func (rs Ranges) Owns(uid types.UID) bool { return rs.Contains(Hash(uid)) }

// Size is how many hashes rs covers, as a fraction of the whole space.
func (rs Ranges) Size() float64 {
	var n float64
	for _, r := range rs {
		n += float64(r.Last-r.First) + 1
	}
	return n / (float64(math.MaxUint64) + 1)
}

// Selector is rs as ListOptions.shardSelector, one shardRange of [UIDField] per range
// joined by ||; "" for empty rs, which no selector expresses (a replica that owns
// nothing filters everything on the client).
func (rs Ranges) Selector() string {
	reqs := make([]sharding.ShardRangeRequirement, 0, len(rs))
	for _, r := range rs {
		start, end := bounds(r)
		reqs = append(reqs, sharding.ShardRangeRequirement{Key: UIDField, Start: start, End: end})
	}
	if len(reqs) == 0 {
		return ""
	}
	return sharding.NewSelector(reqs...).String()
}

// String is rs as its ranges' bounds separated by commas, the form [ParseRanges] reads
// (and a member's Lease records).
func (rs Ranges) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// ParseRanges reads the form of [Ranges.String]; "" is the empty set.
func ParseRanges(s string) (Ranges, error) {
	if s == "" {
		return nil, nil
	}
	var rs Ranges
	for part := range strings.SplitSeq(s, ",") {
		start, end, ok := strings.Cut(part, "-")
		first, err1 := strconv.ParseUint(strings.TrimPrefix(start, "0x"), 16, 64)
		var last uint64
		var err2 error
		if end == "0x10000000000000000" {
			last = math.MaxUint64
		} else {
			var e uint64
			e, err2 = strconv.ParseUint(strings.TrimPrefix(end, "0x"), 16, 64)
			if err2 == nil && e == 0 {
				err2 = fmt.Errorf("empty range")
			}
			last = e - 1
		}
		if !ok || err1 != nil || err2 != nil || last < first {
			return nil, fmt.Errorf("%w: %q", ErrBadRanges, part)
		}
		rs = append(rs, Range{First: first, Last: last})
	}
	return normalize(rs), nil
}

// normalize sorts rs and merges overlapping and adjacent ranges.
func normalize(rs Ranges) Ranges {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.First, b.First) })
	var out Ranges
	for _, r := range rs {
		if n := len(out); n > 0 && (out[n-1].Last == math.MaxUint64 || r.First <= out[n-1].Last+1) {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Union is the ranges in a or b.
func Union(a, b Ranges) Ranges { return normalize(append(slices.Clone(a), b...)) }

// Intersect is the ranges in both a and b.
func Intersect(a, b Ranges) Ranges {
	var out Ranges
	for _, x := range a {
		for _, y := range b {
			first, last := max(x.First, y.First), min(x.Last, y.Last)
			if first <= last {
				out = append(out, Range{First: first, Last: last})
			}
		}
	}
	return normalize(out)
}

// Subtract is the ranges of a outside b.
func Subtract(a, b Ranges) Ranges {
	out := normalize(a)
	for _, y := range normalize(b) {
		var next Ranges
		for _, x := range out {
			if y.Last < x.First || y.First > x.Last {
				next = append(next, x)
				continue
			}
			if y.First > x.First {
				next = append(next, Range{First: x.First, Last: y.First - 1})
			}
			if y.Last < x.Last {
				next = append(next, Range{First: y.Last + 1, Last: x.Last})
			}
		}
		out = next
	}
	return out
}

// DefaultVirtualNodes is how many points on the ring each member takes: enough that
// three members' shares stay within a few percent of a third.
const DefaultVirtualNodes = 64

// pointOf is the place of member's i-th point on the ring: the first 8 bytes of the
// SHA-256 of "<member>#<i>". (FNV-1a, right for the UIDs the API server hashes, clusters
// the points of short, similar names such as "a#0", "b#0": three members got 10%, 81%
// and 9% of the space.)
func pointOf(member string, i int) uint64 {
	sum := sha256.Sum256([]byte(member + "#" + strconv.Itoa(i)))
	return binary.BigEndian.Uint64(sum[:8])
}

// Assign splits the hash space among members by consistent hashing: each member takes
// vnodes points ([pointOf], rounded down to the start of their bucket), and owns the
// hashes from each of its points up to the next point of any member: whole buckets
// ([BucketBits]), so that the children of a member's objects can be selected by label
// ([Ranges.BucketSelector]). Of two members' points in one bucket, the member whose
// name sorts last takes it. It is deterministic (every replica
// that sees the same members computes the same split), covers the whole space with
// disjoint ranges, and when a member joins or leaves only the ranges next to its points
// move. No members: an empty map; vnodes below 1 means [DefaultVirtualNodes].
func Assign(members []string, vnodes int) map[string]Ranges {
	if vnodes < 1 {
		vnodes = DefaultVirtualNodes
	}
	type point struct {
		at     uint64
		member string
	}
	var points []point
	for _, m := range slices.Compact(slices.Sorted(slices.Values(members))) {
		for i := range vnodes {
			points = append(points, point{at: pointOf(m, i) &^ (bucketSize - 1), member: m})
		}
	}
	out := map[string]Ranges{}
	if len(points) == 0 {
		return out
	}
	slices.SortFunc(points, func(a, b point) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.member, b.member))
	})
	// Each point owns [its hash, the next point's hash); the last point also wraps
	// around from the end of the space to the first point.
	for i, p := range points {
		if i+1 < len(points) {
			if next := points[i+1].at; next > p.at {
				out[p.member] = append(out[p.member], Range{First: p.at, Last: next - 1})
			}
			continue
		}
		out[p.member] = append(out[p.member], Range{First: p.at, Last: math.MaxUint64})
		if points[0].at > 0 {
			out[p.member] = append(out[p.member], Range{First: 0, Last: points[0].at - 1})
		}
	}
	for m, rs := range out {
		out[m] = normalize(rs)
	}
	return out
}

// BucketBits is how many leading bits of [Hash] make an object's bucket: the space is
// cut into 1<<BucketBits buckets, and [Assign] cuts it only between buckets, so each
// member's ranges are whole buckets.
const BucketBits = 10

// bucketSize is how many hashes one bucket holds.
const bucketSize = uint64(1) << (64 - BucketBits)

// LabelBucket is the label a sharded operator's Applier puts on every object it writes
// for a custom resource, set to the resource's bucket ([BucketOf]; [OwnerLabels] is the
// apply.ApplierOptions.OwnerLabels that does it). A replica's informers of those
// children select by it ([Member.SelectOwned]), so they hold only the children of its
// own slice.
const LabelBucket = "shard.reconciler-sdk.c5c3.io/bucket"

// noBucket is the LabelBucket value of the selector of no bucket: one no object has.
const noBucket = "none"

// BucketOf is the bucket of the object of uid, as a value of [LabelBucket]: the leading
// [BucketBits] bits of its [Hash] in three hex digits.
func BucketOf(uid types.UID) string { return bucketName(Hash(uid) >> (64 - BucketBits)) }

func bucketName(b uint64) string { return fmt.Sprintf("%03x", b) }

// OwnerLabels is the [LabelBucket] label of the children of the object of uid: what a
// sharded operator sets as apply.ApplierOptions.OwnerLabels.
func OwnerLabels(uid types.UID) map[string]string {
	return map[string]string{LabelBucket: BucketOf(uid)}
}

// Buckets is the buckets rs covers a hash of, as values of [LabelBucket], ascending.
func (rs Ranges) Buckets() []string {
	var out []string
	last := int64(-1)
	for _, r := range rs {
		for b := max(int64(r.First>>(64-BucketBits)), last+1); b <= int64(r.Last>>(64-BucketBits)); b++ {
			out = append(out, bucketName(uint64(b)))
			last = b
		}
	}
	return out
}

// BucketSelector is the label selector of the children of rs's objects: [LabelBucket]
// in rs's [Ranges.Buckets], "LabelBucket" (the label set) when rs covers every bucket,
// and a value no bucket has when rs is empty.
func (rs Ranges) BucketSelector() string {
	buckets := rs.Buckets()
	switch len(buckets) {
	case 1 << BucketBits:
		return LabelBucket
	case 0:
		buckets = []string{noBucket}
	}
	return LabelBucket + " in (" + strings.Join(buckets, ",") + ")"
}
