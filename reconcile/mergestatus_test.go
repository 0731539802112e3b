package reconcile_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

// ucond is a condition of generation 1 in unstructured form, as it is stored, with the
// lastTransitionTime at.
func ucond(typ, status, reason, message, at string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message,
		"observedGeneration": int64(1), "lastTransitionTime": at}
}

// ustatus is an unstructured status with the fields of kv (name, value, ...) and conds.
func ustatus(conds []any, kv ...any) map[string]any {
	st := map[string]any{}
	if conds != nil {
		st["conditions"] = conds
	}
	for i := 0; i < len(kv); i += 2 {
		st[kv[i].(string)] = kv[i+1]
	}
	return st
}

const (
	t0 = "2026-01-01T00:00:00Z" // when the pass read
	t1 = "2026-01-01T00:01:00Z" // when the pass or another writer changed something
)

// TestMergeStatus: MergeStatus applies each change of the pass where the stored status
// still holds what the pass read, keeps and names each one another writer changed
// since, leaves what the pass did not change (and unknown keys of stored conditions) as
// stored, skips the aggregate condition and modifies none of its inputs.
func TestMergeStatus(t *testing.T) {
	pending := ucond("ConfigReady", "False", "ConfigPending", "waiting", t0)
	rendered := ucond("ConfigReady", "True", "ConfigRendered", "rendered", t1)
	errored := ucond("ConfigReady", "False", "ConfigError", "decided from a lagging copy", t1)
	errored0 := ucond("ConfigReady", "False", "ConfigError", "decided from a lagging copy", t0)
	external := ucond("External", "True", "SetByOthers", "kept", t1)
	ready := ucond("Ready", "False", "ConfigPending", "waiting", t0)
	readyTrue := ucond("Ready", "True", "AllReady", "all ready", t1)

	for name, tc := range map[string]struct {
		before, after, stored map[string]any
		skip                  string
		want                  map[string]any
		wantKept              []string
	}{
		"a condition still as read takes the pass's change": {
			before: ustatus([]any{pending}),
			after:  ustatus([]any{rendered}),
			stored: ustatus([]any{pending, external}),
			want:   ustatus([]any{rendered, external}),
		},
		"a condition another writer changed since keeps the stored value": {
			before:   ustatus([]any{pending}),
			after:    ustatus([]any{errored}),
			stored:   ustatus([]any{rendered}),
			want:     ustatus([]any{rendered}),
			wantKept: []string{"condition ConfigReady"},
		},
		"a condition whose status the merge does not flip keeps the stored lastTransitionTime": {
			before: ustatus([]any{pending}),
			after:  ustatus([]any{errored}),
			stored: ustatus([]any{pending}),
			want:   ustatus([]any{errored0}),
		},
		"a condition the pass removed, unchanged since, is removed": {
			before: ustatus([]any{pending, external}),
			after:  ustatus([]any{pending}),
			stored: ustatus([]any{pending, external}, "phase", "Running"),
			want:   ustatus([]any{pending}, "phase", "Running"),
		},
		"the last condition removed drops the list": {
			before: ustatus([]any{external}),
			after:  ustatus(nil),
			stored: ustatus([]any{external}),
			want:   ustatus(nil),
		},
		"a condition the pass added is appended": {
			before: ustatus(nil),
			after:  ustatus([]any{external}),
			stored: ustatus([]any{pending}),
			want:   ustatus([]any{pending, external}),
		},
		"the skipped aggregate is left as stored": {
			before: ustatus([]any{pending, ready}),
			after:  ustatus([]any{rendered, readyTrue}),
			stored: ustatus([]any{pending, ready}),
			skip:   "Ready",
			want:   ustatus([]any{rendered, ready}),
		},
		"a stored condition's unknown keys stay when the pass did not change it": {
			before: ustatus([]any{pending}),
			after:  ustatus([]any{rendered}),
			stored: ustatus([]any{pending, withKey(external, "extra", "kept")}),
			want:   ustatus([]any{rendered, withKey(external, "extra", "kept")}),
		},
		"fields: changed since kept, as read changed, removed, others left": {
			before:   ustatus(nil, "endpoint", "a", "phase", "Pending", "old", "x"),
			after:    ustatus(nil, "endpoint", "c", "phase", "Running", "size", int64(3)),
			stored:   ustatus(nil, "endpoint", "b", "phase", "Pending", "old", "x", "other", "y"),
			want:     ustatus(nil, "endpoint", "b", "phase", "Running", "size", int64(3), "other", "y"),
			wantKept: []string{"field status.endpoint"},
		},
		"a field removed that another writer changed since stays": {
			before:   ustatus(nil, "old", "x"),
			after:    ustatus(nil),
			stored:   ustatus(nil, "old", "z"),
			want:     ustatus(nil, "old", "z"),
			wantKept: []string{"field status.old"},
		},
		"a change equal to the stored value is no conflict": {
			before: ustatus([]any{pending}, "phase", "Pending"),
			after:  ustatus([]any{rendered}, "phase", "Running"),
			stored: ustatus([]any{rendered}, "phase", "Running"),
			want:   ustatus([]any{rendered}, "phase", "Running"),
		},
		"no stored status": {
			before: nil,
			after:  ustatus([]any{rendered}, "phase", "Running"),
			stored: nil,
			want:   ustatus([]any{rendered}, "phase", "Running"),
		},
		"conditions first, then fields by name": {
			before:   ustatus([]any{pending}, "b", "1", "a", "1"),
			after:    ustatus([]any{errored, external}, "b", "2", "a", "2"),
			stored:   ustatus([]any{rendered, ucond("External", "False", "Other", "other", t0)}, "b", "3", "a", "3"),
			want:     ustatus([]any{rendered, ucond("External", "False", "Other", "other", t0)}, "b", "3", "a", "3"),
			wantKept: []string{"condition ConfigReady", "condition External", "field status.a", "field status.b"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			before, after, stored := deepCopy(tc.before), deepCopy(tc.after), deepCopy(tc.stored)
			got, kept, err := reconcile.MergeStatus(tc.before, tc.after, tc.stored, tc.skip)
			if err != nil {
				t.Fatalf("MergeStatus: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("merged = %v\nwant     %v", got, tc.want)
			}
			if !reflect.DeepEqual(kept, tc.wantKept) {
				t.Errorf("kept = %q, want %q", kept, tc.wantKept)
			}
			if !reflect.DeepEqual(tc.before, before) || !reflect.DeepEqual(tc.after, after) || !reflect.DeepEqual(tc.stored, stored) {
				t.Error("MergeStatus modified its inputs")
			}
		})
	}
}

// TestMergeStatusNewConditionGetsATime: a condition the pass set without a
// lastTransitionTime gets one when the merge adds it.
func TestMergeStatusNewConditionGetsATime(t *testing.T) {
	c := ucond("External", "True", "SetByOthers", "kept", t0)
	delete(c, "lastTransitionTime")
	got, _, err := reconcile.MergeStatus(nil, ustatus([]any{c}), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	list, _ := got["conditions"].([]any)
	if len(list) != 1 {
		t.Fatalf("merged conditions %v, want one", got["conditions"])
	}
	if at, _ := list[0].(map[string]any)["lastTransitionTime"].(string); at == "" {
		t.Errorf("the added condition has no lastTransitionTime: %v", list[0])
	}
}

// TestMergeStatusCopiesThePassValues: a value the merge takes from the pass's status is
// a copy: changing the merged status leaves the pass's alone.
func TestMergeStatusCopiesThePassValues(t *testing.T) {
	after := ustatus(nil, "detail", map[string]any{"size": "3"})
	got, _, err := reconcile.MergeStatus(nil, after, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	got["detail"].(map[string]any)["size"] = "9"
	if size := after["detail"].(map[string]any)["size"]; size != "3" {
		t.Errorf("the pass's status.detail.size is %v after a change of the merged status, want 3", size)
	}
}

// TestMergeStatusRefusesMalformedConditions: a conditions entry that is not a list of
// conditions is an error naming the entry and which status holds it.
func TestMergeStatusRefusesMalformedConditions(t *testing.T) {
	good := ustatus([]any{ucond("External", "True", "SetByOthers", "kept", t0)})
	for name, tc := range map[string]struct {
		before, after, stored map[string]any
		want                  string
	}{
		"stored not a list":       {before: ustatus(nil), after: good, stored: map[string]any{"conditions": "x"}, want: "status.conditions of the stored status"},
		"stored entry not a map":  {before: ustatus(nil), after: good, stored: ustatus([]any{"x"}), want: "status.conditions[0] of the stored status"},
		"read entry of bad shape": {before: ustatus([]any{map[string]any{"status": int64(1)}}), after: good, want: "status.conditions[0] of the status read"},
		"written entry not a map": {before: ustatus(nil), after: ustatus([]any{"x"}), want: "status.conditions[0] of the status written"},
	} {
		t.Run(name, func(t *testing.T) {
			got, _, err := reconcile.MergeStatus(tc.before, tc.after, tc.stored, "")
			if err == nil || !strings.Contains(err.Error(), tc.want) || got != nil {
				t.Fatalf("MergeStatus = %v, %v; want no status and an error naming %q", got, err, tc.want)
			}
		})
	}
}

func withKey(m map[string]any, k string, v any) map[string]any {
	out := runtime.DeepCopyJSON(m)
	out[k] = v
	return out
}

func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return runtime.DeepCopyJSON(m)
}

// TestLogKept: each change the merge kept out is logged at V(1), and only then is the
// pass's status reported superseded.
func TestLogKept(t *testing.T) {
	cases := map[string]struct {
		kept      []string
		verbosity int
		want      []string
		stale     bool
	}{
		"nothing kept: no line, not stale":         {verbosity: 1},
		"each change a line at V(1)":               {kept: []string{"condition Ready", "field status.url"}, verbosity: 1, want: []string{"condition Ready", "field status.url"}, stale: true},
		"below V(1) no line, still reported stale": {kept: []string{"condition Ready"}, verbosity: 0, stale: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			logger := funcr.New(func(_, args string) {
				if !strings.Contains(args, "another writer changed it") {
					t.Errorf("line %s does not say why the change was not written", args)
				}
				for _, k := range tc.kept {
					if strings.Contains(args, `"change"="`+k+`"`) {
						got = append(got, k)
					}
				}
			}, funcr.Options{Verbosity: tc.verbosity})
			stale := reconcile.LogKept(log.IntoContext(context.Background(), logger), tc.kept)
			if stale != tc.stale {
				t.Errorf("LogKept = %v, want %v", stale, tc.stale)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("logged changes %q, want %q", got, tc.want)
			}
		})
	}
}
