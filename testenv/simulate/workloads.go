package simulate

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// SimulatedJobManager is the spec.managedBy value [SimulatedJob] sets. The real Job
// controller skips Jobs managed by someone else, so with [Options.Controllers] such a
// Job is left to [MarkJobFailed] and [MarkJobComplete].
const SimulatedJobManager = "reconciler-sdk.c5c3.io/testenv-job-simulator"

// SimulatedGatewayController is the controllerName [SetHTTPRouteAccepted] writes into
// an HTTPRoute's status.parents.
const SimulatedGatewayController gatewayv1.GatewayController = "reconciler-sdk.c5c3.io/testenv-gateway-simulator"

// SimulatedJob marks j (before it is created) as managed by the kit's status simulator,
// so that a real Job controller leaves it alone: use it for the outcomes kwok cannot
// produce on demand, such as a Job that fails permanently. It returns j.
func SimulatedJob(j *batchv1.Job) *batchv1.Job {
	j.Spec.ManagedBy = new(SimulatedJobManager)
	return j
}

// MarkJobFailed writes the status the Job controller leaves on a Job that exceeded its
// backoffLimit: FailureTarget, then Failed, with a startTime and no active, ready or
// terminating pods (the API server requires all of it). On a cluster with real
// controllers the Job must be a [SimulatedJob].
func MarkJobFailed(ctx context.Context, c client.Client, key client.ObjectKey) (*batchv1.Job, error) {
	return setJobStatus(ctx, c, key, "failure", func(j *batchv1.Job, start, now metav1.Time) {
		backoff := int32(6)
		if j.Spec.BackoffLimit != nil {
			backoff = *j.Spec.BackoffLimit
		}
		msg := "Job has reached the specified backoff limit"
		j.Status = batchv1.JobStatus{
			StartTime: &start, Failed: backoff + 1,
			Terminating: new(int32(0)), Ready: new(int32(0)),
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded,
					Message: msg, LastProbeTime: now, LastTransitionTime: now},
				{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonBackoffLimitExceeded,
					Message: msg, LastProbeTime: now, LastTransitionTime: now},
			},
		}
	})
}

// MarkJobComplete writes the status of a Job whose pods all succeeded: SuccessCriteriaMet,
// then Complete, with startTime, completionTime and succeeded = completions (default 1).
// On a cluster with real controllers the Job must be a [SimulatedJob]; without them it
// stands in for the Job controller.
func MarkJobComplete(ctx context.Context, c client.Client, key client.ObjectKey) (*batchv1.Job, error) {
	return setJobStatus(ctx, c, key, "completion", func(j *batchv1.Job, start, now metav1.Time) {
		completions := int32(1)
		if j.Spec.Completions != nil {
			completions = *j.Spec.Completions
		}
		j.Status = batchv1.JobStatus{
			StartTime: &start, CompletionTime: &now, Succeeded: completions,
			Terminating: new(int32(0)), Ready: new(int32(0)),
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached,
					Message: "Reached expected number of succeeded pods", LastProbeTime: now, LastTransitionTime: now},
				{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonCompletionsReached,
					Message: "Reached expected number of succeeded pods", LastProbeTime: now, LastTransitionTime: now},
			},
		}
	})
}

func setJobStatus(ctx context.Context, c client.Client, key client.ObjectKey, what string, set func(j *batchv1.Job, start, now metav1.Time)) (*batchv1.Job, error) {
	j := &batchv1.Job{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, j); err != nil {
			return err
		}
		start := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
		now := metav1.NewTime(time.Now().Truncate(time.Second))
		set(j, start, now)
		return c.Status().Update(ctx, j)
	})
	if err != nil {
		return nil, fmt.Errorf("simulate: simulate %s of Job %s: %w", what, key, err)
	}
	return j, nil
}

// SetHTTPRouteAccepted stands in for a Gateway API implementation, which envtest does
// not run: for every parentRef of the HTTPRoute it writes a status.parents entry from
// [SimulatedGatewayController] with an Accepted condition (status, reason, message)
// observed at observedGeneration (0 means the route's current generation), through the
// status subresource.
func SetHTTPRouteAccepted(ctx context.Context, c client.Client, key client.ObjectKey, status metav1.ConditionStatus, reason, message string, observedGeneration int64) (*gatewayv1.HTTPRoute, error) {
	route := &gatewayv1.HTTPRoute{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, route); err != nil {
			return err
		}
		gen := observedGeneration
		if gen == 0 {
			gen = route.Generation
		}
		route.Status.Parents = nil
		for _, ref := range route.Spec.ParentRefs {
			route.Status.Parents = append(route.Status.Parents, gatewayv1.RouteParentStatus{
				ParentRef:      ref,
				ControllerName: SimulatedGatewayController,
				Conditions: []metav1.Condition{{
					Type: string(gatewayv1.RouteConditionAccepted), Status: status, Reason: reason, Message: message,
					ObservedGeneration: gen, LastTransitionTime: metav1.Now(),
				}},
			})
		}
		return c.Status().Update(ctx, route)
	})
	if err != nil {
		return nil, fmt.Errorf("simulate: simulate Gateway verdict on HTTPRoute %s: %w", key, err)
	}
	return route, nil
}
