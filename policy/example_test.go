package policy_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/c5c3/reconciler-sdk/policy"
)

// ExampleLoadPolicyFromConfigMap reads a user's overrides from a ConfigMap, lays them
// over the service's defaults, validates the result and renders the policy.yaml the
// service will read. In a reconciler the client comes from the manager.
func ExampleLoadPolicyFromConfigMap() {
	// env is the package's test control plane (a *testenv.Env), started in main_test.go by testenv.Main.
	ctx := context.Background()
	c := env.Client

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "example-"}}
	if err := c.Create(ctx, ns); err != nil {
		panic(err)
	}
	if err := c.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "identity-policy", Namespace: ns.Name},
		Data: map[string]string{policy.PolicyKey: `"identity:get_user": "rule:admin_required or user_id:%(target.user.id)s"
"identity:list_users": "role:reader and (system_scope:all or rule:domain_reader"
`},
	}); err != nil {
		panic(err)
	}

	overrides, err := policy.LoadPolicyFromConfigMap(ctx, c,
		types.NamespacedName{Namespace: ns.Name, Name: "identity-policy"})
	if err != nil {
		panic(err)
	}
	defaults := map[string]string{
		"admin_required":    "role:admin",
		"identity:get_user": "rule:admin_required",
	}
	merged := policy.Merge(defaults, overrides)
	for _, e := range policy.Validate(merged, nil) {
		fmt.Println(e)
	}

	delete(merged, "identity:list_users")
	doc, err := policy.Render(merged)
	if err != nil {
		panic(err)
	}
	fmt.Print(doc)
	// Output:
	// rules[identity:list_users]: Invalid value: "role:reader and (system_scope:all or rule:domain_reader": at byte 16: unbalanced parenthesis: '(' is never closed
	// "admin_required": "role:admin"
	// "identity:get_user": "rule:admin_required or user_id:%(target.user.id)s"
}

// ExampleParse shows the syntax tree of a Identity rule and its canonical text.
func ExampleParse() {
	e, err := policy.Parse("role:admin OR (role:reader AND system_scope:all) or project_id:%(target.project.id)s")
	if err != nil {
		panic(err)
	}
	for _, c := range e.(*policy.OrCheck).Checks {
		fmt.Printf("%T %s\n", c, c)
	}
	fmt.Println(e)

	_, err = policy.Parse("role:admin or (role:reader")
	fmt.Println(err)
	// Output:
	// *policy.RoleCheck role:admin
	// *policy.AndCheck role:reader and system_scope:all
	// *policy.GenericCheck project_id:%(target.project.id)s
	// role:admin or role:reader and system_scope:all or project_id:%(target.project.id)s
	// at byte 14: unbalanced parenthesis: '(' is never closed
}

// ExampleValidate reports each problem with the rule and the byte offset.
func ExampleValidate() {
	errs := policy.Validate(map[string]string{
		"admin_required":       "role:admin",
		"identity:get_user":    "rule:admin_requirex or role:reader and",
		"identity:delete_user": "rule:admin_required and not rule:protected",
	}, nil)
	for _, e := range errs {
		fmt.Printf("%s: %s\n", e.Field, e.Detail)
	}
	// Output:
	// rules[identity:delete_user]: at byte 28: unknown rule reference: rule "protected" is not defined
	// rules[identity:get_user]: at byte 35: dangling operator: "and" has no right operand
}
