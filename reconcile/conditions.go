package reconcile

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Condition types and reasons of the aggregate Ready condition.
const (
	// ConditionReady is the aggregate condition type.
	ConditionReady = "Ready"
	// ReasonAllReady is Ready's reason when every sub-condition is True.
	ReasonAllReady = "AllReady"
	// ReasonPending is Ready's reason when the blocking sub-condition has not been
	// reported for the object's current generation: it is absent (the pass ended before
	// its step ran) or its observedGeneration is older than metadata.generation.
	ReasonPending = "Pending"
	// ReasonNotReady is Ready's reason when the blocking sub-condition is False or
	// Unknown but carries no reason of its own (otherwise its reason is used).
	ReasonNotReady = "NotReady"
)

// Limits the API server enforces on a metav1.Condition.
const (
	// MaxReasonLength is the longest reason the API server accepts, in bytes.
	MaxReasonLength = 1024
	// MaxMessageLength is the longest message the API server accepts, in bytes.
	MaxMessageLength = 32768
)

// ReasonInvalidReason replaces a reason the API server would refuse (see
// [SetCondition]). The message then names the refused reason.
const ReasonInvalidReason = "InvalidReason"

// ellipsis marks a cut string.
const ellipsis = "…"

// ValidateReason returns nil for a reason the API server accepts on a metav1.Condition,
// and otherwise an error wrapping [ErrInvalidReason]: the reason must be 1 to
// [MaxReasonLength] bytes of CamelCase — ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, so no
// spaces, dashes or dots, and a letter first.
func ValidateReason(reason string) error {
	switch {
	case reason == "":
		return fmt.Errorf("%w: empty", ErrInvalidReason)
	case len(reason) > MaxReasonLength:
		return fmt.Errorf("%w: %d bytes, at most %d allowed", ErrInvalidReason, len(reason), MaxReasonLength)
	case !validReason(reason):
		return fmt.Errorf("%w: %q is not CamelCase (^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$)",
			ErrInvalidReason, truncate(reason, 64))
	}
	return nil
}

// validReason matches ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$ without a regexp.
func validReason(r string) bool {
	letter := func(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
	word := func(c byte) bool { return letter(c) || c >= '0' && c <= '9' || c == '_' }
	if r == "" || !letter(r[0]) || !word(r[len(r)-1]) {
		return false
	}
	for i := 1; i < len(r)-1; i++ {
		if c := r[i]; !word(c) && c != ',' && c != ':' {
			return false
		}
	}
	return true
}

// SetCondition sets condType on obj with observedGeneration stamped from its
// metadata.generation; lastTransitionTime moves only when the status flips (or the
// condition is new). It reports whether anything changed. The condition is always one
// the API server accepts: a reason [ValidateReason] refuses becomes
// [ReasonInvalidReason] (the message quotes the refused one), invalid UTF-8 in the
// message becomes U+FFFD, and a message longer than [MaxMessageLength] bytes is cut on a
// rune boundary, ending in "…".
func SetCondition(obj Object, condType string, status metav1.ConditionStatus, reason, message string) bool {
	reason, message = sanitize(reason, message)
	return meta.SetStatusCondition(obj.Conditions(), metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: obj.GetGeneration(),
	})
}

// sanitize returns a reason and message the API server accepts (see [SetCondition]).
func sanitize(reason, message string) (string, string) {
	if err := ValidateReason(reason); err != nil {
		message = fmt.Sprintf("invalid reason %q replaced by %s: %s", truncate(reason, 64), ReasonInvalidReason, message)
		reason = ReasonInvalidReason
	}
	return reason, truncate(message, MaxMessageLength)
}

// ApplyCondition sets c, the condition a flow returned as data, on obj as [SetCondition]
// does (c's observedGeneration and lastTransitionTime are ignored), and reports whether
// anything changed. A zero condition (no Type; see [Outcome]) changes nothing.
func ApplyCondition(obj Object, c metav1.Condition) bool {
	if c.Type == "" {
		return false
	}
	return SetCondition(obj, c.Type, c.Status, c.Reason, c.Message)
}

// MarkTrue sets condType to True; see [SetCondition].
func MarkTrue(obj Object, condType, reason, message string) bool {
	return SetCondition(obj, condType, metav1.ConditionTrue, reason, message)
}

// MarkFalse sets condType to False; see [SetCondition].
func MarkFalse(obj Object, condType, reason, message string) bool {
	return SetCondition(obj, condType, metav1.ConditionFalse, reason, message)
}

// MarkUnknown sets condType to Unknown; see [SetCondition].
func MarkUnknown(obj Object, condType, reason, message string) bool {
	return SetCondition(obj, condType, metav1.ConditionUnknown, reason, message)
}

// IsTrue reports whether obj has condType with status True.
func IsTrue(obj Object, condType string) bool {
	return meta.IsStatusConditionTrue(*obj.Conditions(), condType)
}

// AggregateReady sets readyType on obj from subConditions and reports whether it changed:
// True with reason [ReasonAllReady] exactly when every listed sub-condition is True for
// the current generation; otherwise False, naming the first blocking one in list order
// (its own reason, or [ReasonNotReady], and "<Type> is <Status>: <message>"; absent or of
// an older generation: [ReasonPending]). Messages are copied as they are.
func AggregateReady(obj Object, readyType string, subConditions []string) bool {
	status, reason, message := readiness(obj, subConditions)
	return SetCondition(obj, readyType, status, reason, message)
}

// truncate returns s with invalid UTF-8 replaced by U+FFFD and, when that is longer
// than n bytes, cut on a rune boundary and ended with "…" so that it is at most n bytes.
func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	n -= len(ellipsis)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n < 0 {
		n = 0
	}
	return s[:n] + ellipsis
}

func readiness(obj Object, subConditions []string) (metav1.ConditionStatus, string, string) {
	gen := obj.GetGeneration()
	conds := *obj.Conditions()
	for _, t := range subConditions {
		c := meta.FindStatusCondition(conds, t)
		switch {
		case c == nil:
			return metav1.ConditionFalse, ReasonPending, t + " has not been reported"
		case c.ObservedGeneration < gen:
			return metav1.ConditionFalse, ReasonPending,
				fmt.Sprintf("%s has not been reported for generation %d (observed generation %d)", t, gen, c.ObservedGeneration)
		case c.Status != metav1.ConditionTrue:
			reason := c.Reason
			if reason == "" {
				reason = ReasonNotReady
			}
			msg := fmt.Sprintf("%s is %s", t, c.Status)
			if c.Message != "" {
				msg += ": " + c.Message
			}
			return metav1.ConditionFalse, reason, msg
		}
	}
	return metav1.ConditionTrue, ReasonAllReady, fmt.Sprintf("all %d sub-conditions are True", len(subConditions))
}
