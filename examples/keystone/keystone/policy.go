package keystone

import (
	"context"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/policy"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// BaseRules are the base rules of Keystone's default policy (keystone/common/policies/
// base.py) that overrides commonly reference as rule:NAME. The Go check validates the
// overrides merged over them, so such references resolve; the rules themselves are not
// rendered, Keystone has them in its code.
var BaseRules = map[string]string{
	"admin_required":                 "role:admin or is_admin:1",
	"service_role":                   "role:service",
	"service_or_admin":               "rule:admin_required or rule:service_role",
	"owner":                          "user_id:%(user_id)s",
	"admin_or_owner":                 "rule:admin_required or rule:owner",
	"token_subject":                  "user_id:%(target.token.user_id)s",
	"admin_or_token_subject":         "rule:admin_required or rule:token_subject",
	"service_admin_or_token_subject": "rule:service_or_admin or rule:token_subject",
}

// PolicyJobName is the Job that validates the rendered policy overrides with
// oslopolicy-validator.
func PolicyJobName(k *v1alpha1.Keystone) string { return k.Name + "-policy-check" }

// reconcilePolicyValidation is the PolicyValidation row. Without policy overrides there
// is nothing to check (a validation Job of earlier overrides is deleted). With them,
// the rendered policy.yaml of status.configMap is checked in Go first (a bad rule is
// named at once, and ends the pass until the overrides change), then by
// oslopolicy-validator against Keystone's registered policies in a Job that runs again
// whenever the ConfigMap (and so its pod template) changes.
func (r *Reconciler) reconcilePolicyValidation(ctx context.Context, k *v1alpha1.Keystone) (reconcile.Outcome, error) {
	target := r.TargetOf(ctx)
	c, scheme := target.Client, target.Client.Scheme()
	jobKey := client.ObjectKey{Namespace: k.Namespace, Name: PolicyJobName(k)}
	if k.Spec.Policy == nil {
		if _, err := apply.DeleteControlled(ctx, c, k, &batchv1.Job{}, jobKey); err != nil {
			return reconcile.Outcome{}, err
		}
		return reconcile.Done(reconcile.TrueCondition(ConditionPolicyValid, ReasonPolicyNotRequired, "no policy overrides configured")), nil
	}
	cmKey := client.ObjectKey{Namespace: k.Namespace, Name: k.Status.ConfigMap}
	rules, err := policy.LoadPolicyFromConfigMap(ctx, c, cmKey)
	if err != nil {
		return reconcile.Outcome{}, fmt.Errorf("reading the rendered policy of Keystone %s/%s: %w", k.Namespace, k.Name, err)
	}
	if errs := policy.Validate(withBaseRules(rules), field.NewPath("policy")); len(errs) > 0 {
		err := fmt.Errorf("policy overrides of ConfigMap %s/%s: %w", k.Namespace, k.Spec.Policy.ConfigMapRef.Name, errs.ToAggregate())
		return reconcile.Done(reconcile.FalseCondition(ConditionPolicyValid, ReasonPolicyInvalid, err.Error())),
			crreconcile.TerminalError(err)
	}
	done, err := job.RunJob(ctx, c, scheme, k, desiredPolicyJob(k))
	return jobVerdict{condition: ConditionPolicyValid,
		failed: ReasonPolicyInvalid, failedMsg: fmt.Sprintf("oslopolicy-validator rejected the policy overrides: Job %s failed; see its logs", jobKey),
		running: ReasonPolicyValidationInProgress, runningMsg: fmt.Sprintf("Job %s validates the policy overrides", jobKey),
		complete: ReasonPolicyValidated, completeMsg: fmt.Sprintf("%d policy override(s) validated by Job %s", len(rules), jobKey),
	}.outcome(done, err)
}

// withBaseRules is rules merged over BaseRules: the set the Go check validates, so a
// rule:NAME of a base rule resolves and an override that closes a cycle through one is
// caught.
func withBaseRules(rules map[string]string) map[string]string {
	return policy.Merge(BaseRules, rules)
}

// desiredPolicyJob runs oslopolicy-validator on keystone.conf, whose [oslo_policy]
// policy_file names the rendered overrides; it fails on a rule that does not parse or
// names an unknown check. The pod template names the ConfigMap, so new overrides run
// the Job again.
func desiredPolicyJob(k *v1alpha1.Keystone) *batchv1.Job {
	j := manageJob(k, PolicyJobName(k), "policy-check", []string{
		"oslopolicy-validator", "--namespace", "keystone",
		"--config-file", strings.Join([]string{ConfigDir, ConfigFile}, "/"),
	}, nil)
	// The validator reads no database: the connection is not needed.
	ctr := &j.Spec.Template.Spec.Containers[0]
	ctr.Env = nil
	return j
}
