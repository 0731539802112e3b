package job

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

func TestIsJobCompleteAndFailed(t *testing.T) {
	cond := func(typ batchv1.JobConditionType, status corev1.ConditionStatus) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: status}
	}
	cases := map[string]struct {
		conds            []batchv1.JobCondition
		complete, failed bool
	}{
		"no conditions (running)":  {},
		"Complete True":            {conds: []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue), cond(batchv1.JobComplete, corev1.ConditionTrue)}, complete: true},
		"SuccessCriteriaMet alone": {conds: []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, corev1.ConditionTrue)}},
		"Complete False":           {conds: []batchv1.JobCondition{cond(batchv1.JobComplete, corev1.ConditionFalse)}},
		"Failed True":              {conds: []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue), cond(batchv1.JobFailed, corev1.ConditionTrue)}, failed: true},
		"FailureTarget alone":      {conds: []batchv1.JobCondition{cond(batchv1.JobFailureTarget, corev1.ConditionTrue)}},
		"Failed Unknown":           {conds: []batchv1.JobCondition{cond(batchv1.JobFailed, corev1.ConditionUnknown)}},
		"Suspended":                {conds: []batchv1.JobCondition{cond(batchv1.JobSuspended, corev1.ConditionTrue)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			j := &batchv1.Job{Status: batchv1.JobStatus{Conditions: tc.conds}}
			if got := isJobComplete(j); got != tc.complete {
				t.Errorf("isJobComplete = %v, want %v", got, tc.complete)
			}
			if got := isJobFailed(j); got != tc.failed {
				t.Errorf("isJobFailed = %v, want %v", got, tc.failed)
			}
		})
	}
}

func TestKeyDigestHidesKey(t *testing.T) {
	d := keyDigest("s3cr3t-password")
	if len(d) != 64 || d == keyDigest("s3cr3t-password2") || d != keyDigest("s3cr3t-password") {
		t.Errorf("keyDigest is not a stable SHA-256 of the key: %q", d)
	}
}
