package testenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConditionTimeout bounds how long [WaitForCondition] and [ExpectCondition] wait when
// the context has no earlier deadline.
const ConditionTimeout = 30 * time.Second

// readTimeout bounds one read of WaitForCondition.
const readTimeout = 10 * time.Second

// conditionTimeout is ConditionTimeout; tests shorten it.
var conditionTimeout = ConditionTimeout

// WaitForCondition polls the object at obj's key through c, reading it into obj, until
// its status.conditions hold a condition of conditionType with the wanted status that
// is current: its observedGeneration equals the object's metadata.generation, so the
// wait does not end on a status written before the test's last change.
//
// The conditions are read generically (status.conditions as []metav1.Condition), so obj
// may be any typed object whose status carries metav1.Conditions, or an
// *unstructured.Unstructured with its GroupVersionKind set. The wait ends with ctx or
// after [ConditionTimeout]; the error then names the object, its generation and every
// condition it has, or the last error reading it.
func WaitForCondition(ctx context.Context, c client.Client, obj client.Object, conditionType string, status metav1.ConditionStatus) error {
	return WaitForConditionWhile(ctx, c, obj, conditionType, status, nil)
}

// WaitForConditionWhile is [WaitForCondition] running hook before every read, so that
// the test plays the object's dependencies while it waits (world.World.Hook). A hook
// error does not end the wait: the last one is part of the timeout error. A nil hook
// makes it WaitForCondition.
func WaitForConditionWhile(ctx context.Context, c client.Client, obj client.Object, conditionType string,
	status metav1.ConditionStatus, hook func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, conditionTimeout)
	defer cancel()
	key := client.ObjectKeyFromObject(obj)
	var lastErr, hookErr error
	var conds []metav1.Condition
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		// Each call has its own bound, so that the wait's deadline never cuts a read
		// short and hides the last real answer behind a context error.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
		defer cancel()
		if hook != nil {
			hookErr = hook(rctx)
		}
		if err := c.Get(rctx, key, obj); err != nil {
			lastErr = err
			return false, nil
		}
		var err error
		if conds, err = conditionsOf(obj); err != nil {
			return false, err
		}
		lastErr = nil
		cond := meta.FindStatusCondition(conds, conditionType)
		return cond != nil && cond.Status == status && cond.ObservedGeneration == obj.GetGeneration(), nil
	})
	if err == nil {
		return nil
	}
	what := fmt.Sprintf("%s %s", kindIn(obj, c.Scheme()), key)
	hookNote := ""
	if hookErr != nil {
		hookNote = fmt.Sprintf(" (last hook error: %v)", hookErr)
	}
	if lastErr != nil {
		return fmt.Errorf("testenv: %s: condition %s=%s not reached: %w (last read: %w)%s", what, conditionType, status, err, lastErr, hookNote)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("testenv: %s: %w", what, err)
	}
	return fmt.Errorf("testenv: %s: no current condition %s=%s (observedGeneration %d): %w%s\n%s",
		what, conditionType, status, obj.GetGeneration(), err, hookNote, DescribeConditions(obj.GetGeneration(), conds))
}

// ExpectCondition is [WaitForCondition] for a test: it fails the test (t.Fatal) with
// WaitForCondition's error.
func ExpectCondition(t testing.TB, c client.Client, obj client.Object, conditionType string, status metav1.ConditionStatus) {
	t.Helper()
	ExpectConditionWhile(t, c, obj, conditionType, status, nil)
}

// ExpectConditionWhile is [WaitForConditionWhile] for a test: it fails the test
// (t.Fatal) with its error.
func ExpectConditionWhile(t testing.TB, c client.Client, obj client.Object, conditionType string,
	status metav1.ConditionStatus, hook func(context.Context) error) {
	t.Helper()
	if err := WaitForConditionWhile(context.Background(), c, obj, conditionType, status, hook); err != nil {
		t.Fatal(err)
	}
}

// DescribeConditions renders conds one a line, as WaitForCondition's error does:
// "type=status reason=... observedGeneration=N: message", with "(stale)" where the
// observedGeneration is not generation.
func DescribeConditions(generation int64, conds []metav1.Condition) string {
	if len(conds) == 0 {
		return fmt.Sprintf("  generation %d, no conditions", generation)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  generation %d, conditions:", generation)
	for _, c := range conds {
		stale := ""
		if c.ObservedGeneration != generation {
			stale = " (stale)"
		}
		fmt.Fprintf(&b, "\n    %s=%s reason=%s observedGeneration=%d%s: %s",
			c.Type, c.Status, c.Reason, c.ObservedGeneration, stale, c.Message)
	}
	return b.String()
}

// conditionsOf reads obj's status.conditions as metav1.Conditions.
func conditionsOf(obj client.Object) ([]metav1.Condition, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("testenv: convert %T: %w", obj, err)
	}
	status, _ := u["status"].(map[string]any)
	raw, _ := status["conditions"].([]any)
	conds := make([]metav1.Condition, 0, len(raw))
	for i, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("testenv: %T status.conditions[%d] is not an object", obj, i)
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil {
			return nil, fmt.Errorf("testenv: %T status.conditions[%d]: %w", obj, i, err)
		}
		conds = append(conds, c)
	}
	return conds, nil
}

// kindOf names obj's kind: its GroupVersionKind's when set, else its Go type.
func kindOf(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*")
}
