package job

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

// TestKeyDigestIsKeyed pins the construction of the stored re-run key: HMAC-SHA256
// keyed with the owner's UID over the Job's namespace/name and the key. It is stable,
// changes with the key, the owner and the Job, and is not an unkeyed SHA-256.
func TestKeyDigestIsKeyed(t *testing.T) {
	job := client.ObjectKey{Namespace: "ns", Name: "bootstrap"}
	d := keyDigest("uid-1", job, "s3cr3t")
	mac := hmac.New(sha256.New, []byte("uid-1"))
	mac.Write([]byte("rerun-key\x00ns/bootstrap\x00s3cr3t"))
	if want := hex.EncodeToString(mac.Sum(nil)); d != want {
		t.Errorf("keyDigest = %s, want HMAC-SHA256 %s", d, want)
	}
	unkeyed := sha256.Sum256([]byte("rerun-key\x00s3cr3t"))
	plain := sha256.Sum256([]byte("s3cr3t"))
	for name, other := range map[string]string{
		"again":           keyDigest("uid-1", job, "s3cr3t"),
		"another key":     keyDigest("uid-1", job, "s3cr3t2"),
		"another owner":   keyDigest("uid-2", job, "s3cr3t"),
		"another Job":     keyDigest("uid-1", client.ObjectKey{Namespace: "ns", Name: "other"}, "s3cr3t"),
		"unkeyed SHA-256": hex.EncodeToString(unkeyed[:]),
		"plain SHA-256":   hex.EncodeToString(plain[:]),
	} {
		if (other == d) != (name == "again") {
			t.Errorf("%s: digest %s vs %s", name, other, d)
		}
	}
}
