package policy_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/c5c3/reconciler-sdk/policy"
)

// identityBase are the shared rules Identity's defaults build on.
var identityBase = map[string]string{
	"admin_required":                 "role:admin or is_admin:1",
	"service_role":                   "role:service",
	"service_or_admin":               "rule:admin_required or rule:service_role",
	"owner":                          "user_id:%(user_id)s",
	"admin_or_owner":                 "rule:admin_required or rule:owner",
	"token_subject":                  "user_id:%(target.token.user_id)s",
	"admin_or_token_subject":         "rule:admin_required or rule:token_subject",
	"service_admin_or_token_subject": "rule:service_or_admin or rule:token_subject",
	"system_reader":                  "role:reader and system_scope:all",
	"domain_reader":                  "role:reader and domain_id:%(target.domain_id)s",
	"project_reader":                 "role:reader and project_id:%(target.project.id)s",
	"system_admin":                   "role:admin and system_scope:all",
	"domain_admin":                   "role:admin and domain_id:%(target.domain_id)s",
}

// identityTemplates are rule expressions shaped like Identity's and Dashboard's.
var identityTemplates = []string{
	"rule:admin_required",
	"rule:admin_or_owner",
	"role:admin and system_scope:all",
	"rule:system_reader or rule:domain_reader or user_id:%(target.user.id)s",
	"(role:admin and system_scope:all) or (role:admin and token.domain.id:%(target.domain.id)s)",
	"(rule:system_reader) or (role:reader and domain_id:%(target.user.domain_id)s) or project_id:%(target.user.default_project_id)s",
	"not role:guest and (rule:project_reader or rule:system_reader)",
	"True:%(enabled)s and rule:admin_or_token_subject",
	"rule:service_admin_or_token_subject",
	"rule:system_admin or rule:domain_admin or (role:member and project_id:%(target.project.id)s and 'member':%(target.role.name)s)",
	"",
}

// benchRules returns a realistic rule set of n rules (n >= len(identityBase)) that
// validates clean.
func benchRules(n int) map[string]string {
	resources := []string{"user", "project", "domain", "group", "role", "credential", "region", "endpoint", "service", "policy"}
	verbs := []string{"get", "list", "create", "update", "delete"}
	rules := make(map[string]string, n)
	for k, v := range identityBase {
		rules[k] = v
	}
	for i := 0; len(rules) < n; i++ {
		name := fmt.Sprintf("identity:%s_%s_%d", verbs[i%len(verbs)], resources[i/len(verbs)%len(resources)], i)
		rules[name] = identityTemplates[i%len(identityTemplates)]
	}
	return rules
}

func BenchmarkParse200(b *testing.B) {
	rules := benchRules(200)
	exprs := make([]string, 0, len(rules))
	for _, e := range rules {
		exprs = append(exprs, e)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range exprs {
			if _, err := policy.Parse(e); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkValidate200(b *testing.B) {
	rules := benchRules(200)
	b.ReportAllocs()
	for b.Loop() {
		if errs := policy.Validate(rules, nil); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkValidateHostile validates the 1 MiB hostile policy of
// TestValidateBoundsHostilePolicy: a cycle web, parenthesis bombs, huge tokens and
// tens of thousands of undefined references. Run with -benchmem; B/op is what one
// Validate allocates.
func BenchmarkValidateHostile(b *testing.B) {
	rules := hostilePolicy(b)
	b.SetBytes(hostileSize)
	b.ReportAllocs()
	for b.Loop() {
		if errs := policy.Validate(rules, nil); len(errs) != policy.MaxErrors+1 {
			b.Fatalf("%d errors, want %d", len(errs), policy.MaxErrors+1)
		}
	}
}

func BenchmarkRender200(b *testing.B) {
	rules := benchRules(200)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := policy.Render(rules); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMerge200(b *testing.B) {
	base := benchRules(200)
	override := map[string]string{"identity:get_user_0": "role:reader", "admin_required": "role:admin"}
	b.ReportAllocs()
	for b.Loop() {
		policy.Merge(base, override)
	}
}

// BenchmarkLoadPolicyFromConfigMap200 loads a 200-rule policy.yaml from the API server:
// allocations and API requests per load.
func BenchmarkLoadPolicyFromConfigMap200(b *testing.B) {
	ctx := context.Background()
	ns := env.Namespace(b)
	doc, err := policy.Render(benchRules(200))
	if err != nil {
		b.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "identity-policy", Namespace: ns},
		Data:       map[string]string{policy.PolicyKey: doc},
	}
	if err := env.Client.Create(ctx, cm); err != nil {
		b.Fatal(err)
	}
	c, counter, err := env.CountingClient()
	if err != nil {
		b.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: cm.Name}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rules, err := policy.LoadPolicyFromConfigMap(ctx, c, key)
		if err != nil || len(rules) != 200 {
			b.Fatal(len(rules), err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
}
