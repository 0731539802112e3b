package reconcile

import (
	"fmt"
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

// maxMessageLength is the API limit on metav1.Condition.Message.
const maxMessageLength = 32768

// SetCondition sets the condition condType on obj with observedGeneration stamped from
// obj's metadata.generation. lastTransitionTime moves only when the status flips (or
// the condition is new); reason, message and observedGeneration are always updated. It
// reports whether anything changed.
func SetCondition(obj Object, condType string, status metav1.ConditionStatus, reason, message string) bool {
	message = truncate(message, maxMessageLength)
	return meta.SetStatusCondition(obj.Conditions(), metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: obj.GetGeneration(),
	})
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

// AggregateReady sets readyType on obj from subConditions and reports whether it changed.
//
// readyType is True with reason [ReasonAllReady] exactly when every listed sub-condition
// is True for the object's current generation. Otherwise it is False, and its reason and
// message name the first blocking sub-condition in list order: a sub-condition that is
// False or Unknown lends its own reason (or [ReasonNotReady]) and the message
// "<Type> is <Status>: <message>"; an absent sub-condition, or one whose
// observedGeneration is older than metadata.generation, gives [ReasonPending] and a
// message saying it has not been reported (for this generation). The sub-condition's
// message is copied as is, so steps keep secrets out of their messages.
func AggregateReady(obj Object, readyType string, subConditions []string) bool {
	status, reason, message := readiness(obj, subConditions)
	return SetCondition(obj, readyType, status, reason, message)
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
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
