package reconcile_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/reconciler-sdk/reconcile"
)

func TestSetCondition(t *testing.T) {
	w := newWidget(4)
	if !reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "bad template") {
		t.Fatal("adding a condition reported no change")
	}
	c := meta.FindStatusCondition(w.Status.Conditions, "ConfigReady")
	if c.ObservedGeneration != 4 || c.LastTransitionTime.IsZero() {
		t.Fatalf("new condition = %+v, want observedGeneration 4 and a lastTransitionTime", c)
	}
	// Pin an old transition time to see whether it moves.
	old := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	c.LastTransitionTime = old

	if reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "bad template") {
		t.Error("setting the same condition again reported a change")
	}
	w.Generation = 5
	if !reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "another message") {
		t.Error("a new message and generation reported no change")
	}
	c = meta.FindStatusCondition(w.Status.Conditions, "ConfigReady")
	if !c.LastTransitionTime.Equal(&old) || c.ObservedGeneration != 5 || c.Message != "another message" {
		t.Errorf("same status: condition = %+v, want lastTransitionTime kept, generation 5, new message", c)
	}
	if !reconcile.MarkTrue(w, "ConfigReady", "ConfigRendered", "") {
		t.Error("a status flip reported no change")
	}
	c = meta.FindStatusCondition(w.Status.Conditions, "ConfigReady")
	if c.LastTransitionTime.Equal(&old) || c.Status != metav1.ConditionTrue || c.Reason != "ConfigRendered" {
		t.Errorf("flip: condition = %+v, want a new lastTransitionTime", c)
	}
	if !reconcile.IsTrue(w, "ConfigReady") {
		t.Error("IsTrue = false after MarkTrue")
	}
	reconcile.MarkUnknown(w, "ConfigReady", "Probing", "")
	if reconcile.IsTrue(w, "ConfigReady") || meta.FindStatusCondition(w.Status.Conditions, "ConfigReady").Status != metav1.ConditionUnknown {
		t.Error("MarkUnknown did not set Unknown")
	}
}

func TestSetConditionTruncatesLongMessages(t *testing.T) {
	w := newWidget(1)
	reconcile.MarkFalse(w, "ConfigReady", "ConfigError", strings.Repeat("é", 20000)) // 40000 bytes
	msg := w.Status.Conditions[0].Message
	cut, ok := strings.CutSuffix(msg, "…")
	if len(msg) > 32768 || !ok || !strings.HasPrefix(strings.Repeat("é", 20000), cut) || len(msg) < 32764 {
		t.Errorf("message of %d bytes, want cut to at most 32768 bytes on a rune boundary, ending in an ellipsis", len(msg))
	}
	// Invalid UTF-8 is replaced, so the message stays valid after the cut.
	reconcile.MarkFalse(w, "ConfigReady", "ConfigError", "bad \xff\xfe bytes")
	if msg := w.Status.Conditions[0].Message; !utf8.ValidString(msg) || !strings.HasPrefix(msg, "bad ") {
		t.Errorf("message %q is not valid UTF-8", msg)
	}
	// A message within the limit is kept as is.
	short := strings.Repeat("a", 32768)
	reconcile.MarkFalse(w, "ConfigReady", "ConfigError", short)
	if w.Status.Conditions[0].Message != short {
		t.Error("a message of exactly 32768 bytes was changed")
	}
}

func TestAggregateReady(t *testing.T) {
	subs := []string{"SecretsReady", "ConfigReady", "DeploymentReady"}
	set := func(w *Widget, typ string, status metav1.ConditionStatus, reason, msg string, gen int64) {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen})
	}
	allTrue := func(w *Widget) {
		for _, s := range subs {
			set(w, s, metav1.ConditionTrue, "Fine", "", 2)
		}
	}
	tests := map[string]struct {
		given func(w *Widget)
		want  metav1.Condition
	}{
		"all true": {
			given: allTrue,
			want:  metav1.Condition{Status: metav1.ConditionTrue, Reason: reconcile.ReasonAllReady, Message: "all 3 sub-conditions are True"},
		},
		"one false lends its reason and message": {
			given: func(w *Widget) {
				allTrue(w)
				set(w, "DeploymentReady", metav1.ConditionFalse, "WaitingForDeployment", "1/2 replicas ready", 2)
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: "WaitingForDeployment", Message: "DeploymentReady is False: 1/2 replicas ready"},
		},
		"the first blocking sub-condition in list order is named": {
			given: func(w *Widget) {
				allTrue(w)
				set(w, "DeploymentReady", metav1.ConditionFalse, "WaitingForDeployment", "", 2)
				set(w, "ConfigReady", metav1.ConditionUnknown, "", "", 2)
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: reconcile.ReasonNotReady, Message: "ConfigReady is Unknown"},
		},
		"a missing sub-condition is pending": {
			given: func(w *Widget) {
				set(w, "SecretsReady", metav1.ConditionTrue, "SecretsAvailable", "", 2)
				set(w, "DeploymentReady", metav1.ConditionTrue, "DeploymentReady", "", 2)
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: reconcile.ReasonPending, Message: "ConfigReady has not been reported"},
		},
		"a True sub-condition of an older generation is pending": {
			given: func(w *Widget) {
				allTrue(w)
				set(w, "ConfigReady", metav1.ConditionTrue, "ConfigRendered", "", 1)
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: reconcile.ReasonPending,
				Message: "ConfigReady has not been reported for generation 2 (observed generation 1)"},
		},
		"conditions that are not listed do not count": {
			given: func(w *Widget) {
				allTrue(w)
				set(w, "Unlisted", metav1.ConditionFalse, "Broken", "", 2)
			},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: reconcile.ReasonAllReady, Message: "all 3 sub-conditions are True"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			w := newWidget(2)
			tc.given(w)
			if !reconcile.AggregateReady(w, reconcile.ConditionReady, subs) {
				t.Error("first aggregation reported no change")
			}
			got := meta.FindStatusCondition(w.Status.Conditions, reconcile.ConditionReady)
			tc.want.Type, tc.want.ObservedGeneration = reconcile.ConditionReady, 2
			if diff := cmp.Diff(tc.want, *got, ignoreLTT); diff != "" {
				t.Errorf("Ready (-want +got):\n%s", diff)
			}
			if reconcile.AggregateReady(w, reconcile.ConditionReady, subs) {
				t.Error("aggregating again reported a change")
			}
		})
	}
}

func TestRequeueIntervals(t *testing.T) {
	// The intervals every operator built on the SDK requeues with.
	for name, tc := range map[string]struct{ got, want time.Duration }{
		"deployment polling":   {reconcile.DeploymentPollInterval, 10 * time.Second},
		"retry":                {reconcile.RetryInterval, 10 * time.Second},
		"secret polling":       {reconcile.SecretPollInterval, 15 * time.Second},
		"target-cluster retry": {reconcile.TargetClusterRetryInterval, 15 * time.Second},
		"probe TTL":            {reconcile.ProbeTTL, 30 * time.Second},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", name, tc.got, tc.want)
		}
	}
}

func TestValidateReason(t *testing.T) {
	valid := []string{"A", "ConfigError", "a_b", "Waiting:Deployment,Pods1", "Under_", strings.Repeat("A", 1024)}
	invalid := []string{"", "has space", "1Leading", "_Leading", "trailing,", "trailing:", "Dash-ed", "Ünicode",
		"line\nbreak", strings.Repeat("A", 1025)}
	for _, r := range valid {
		if err := reconcile.ValidateReason(r); err != nil {
			t.Errorf("ValidateReason(%.40q) = %v, want nil", r, err)
		}
	}
	for _, r := range invalid {
		if err := reconcile.ValidateReason(r); !errors.Is(err, reconcile.ErrInvalidReason) {
			t.Errorf("ValidateReason(%.40q) = %v, want ErrInvalidReason", r, err)
		}
	}
}

// TestSetConditionReplacesAnInvalidReason: an invalid reason would make the API server
// refuse every status write of the object (422); SetCondition keeps the status and
// puts the fixed reason InvalidReason in its place, with the bad reason in the message.
func TestSetConditionReplacesAnInvalidReason(t *testing.T) {
	for _, bad := range []string{"", "Connection refused", strings.Repeat("X", 5000) + "!"} {
		w := newWidget(2)
		if !reconcile.MarkFalse(w, "DashboardAPIReady", bad, "GET http://dashboard:8080/ failed") {
			t.Fatal("no change reported")
		}
		c := meta.FindStatusCondition(w.Status.Conditions, "DashboardAPIReady")
		if c.Reason != reconcile.ReasonInvalidReason || c.Status != metav1.ConditionFalse || c.ObservedGeneration != 2 {
			t.Errorf("condition = %+v, want status False kept and reason %s", c, reconcile.ReasonInvalidReason)
		}
		if !strings.Contains(c.Message, "GET http://dashboard:8080/ failed") || !strings.Contains(c.Message, "invalid reason") {
			t.Errorf("message %q lacks the original message or the note", c.Message)
		}
		if len(c.Message) > 2000 {
			t.Errorf("message of %d bytes quotes the whole bad reason", len(c.Message))
		}
		if err := reconcile.ValidateReason(c.Reason); err != nil {
			t.Errorf("replacement reason invalid: %v", err)
		}
	}
}

func TestApplyCondition(t *testing.T) {
	w := newWidget(7)
	stale := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	flow := metav1.Condition{Type: "HTTPRouteReady", Status: metav1.ConditionFalse, Reason: "HTTPRouteNotAccepted",
		Message: "waiting for the Gateway", ObservedGeneration: 2, LastTransitionTime: stale}
	if !reconcile.ApplyCondition(w, flow) {
		t.Fatal("a new condition reported no change")
	}
	c := meta.FindStatusCondition(w.Status.Conditions, "HTTPRouteReady")
	if c.ObservedGeneration != 7 || c.LastTransitionTime.Equal(&stale) || c.Reason != "HTTPRouteNotAccepted" ||
		c.Message != "waiting for the Gateway" || c.Status != metav1.ConditionFalse {
		t.Fatalf("condition = %+v, want the flow's status, reason and message, generation 7, a fresh transition time", c)
	}
	before := *c
	if reconcile.ApplyCondition(w, metav1.Condition{}) {
		t.Error("the zero condition reported a change")
	}
	if diff := cmp.Diff(before, *meta.FindStatusCondition(w.Status.Conditions, "HTTPRouteReady")); diff != "" || len(w.Status.Conditions) != 1 {
		t.Errorf("the zero condition changed the conditions (-before +after):\n%s", diff)
	}
}
