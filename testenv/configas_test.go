package testenv_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A config from ConfigAs carries exactly the rules of its roles: a client on it lists
// ConfigMaps but is forbidden to create one or to read a Secret, and the role and its
// binding are gone once the test that made them has ended.
func TestConfigAs(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	role := &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list"},
	}}}
	var roleName string
	t.Run("restricted", func(t *testing.T) {
		cfg := env.ConfigAs(t, "configas", role)
		if cfg.Host != env.Config.Host || cfg.QPS != env.Config.QPS || cfg.Burst != env.Config.Burst {
			t.Errorf("config: host %s QPS %v burst %d, want %s %v %d", cfg.Host, cfg.QPS, cfg.Burst,
				env.Config.Host, env.Config.QPS, env.Config.Burst)
		}
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)); err != nil {
			t.Errorf("list ConfigMaps with the granted rule: %v", err)
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: ns}}
		if err := c.Create(ctx, cm); !apierrors.IsForbidden(err) {
			t.Errorf("create ConfigMap without the create verb: %v, want Forbidden", err)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x"}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
			t.Errorf("get Secret without a rule for Secrets: %v, want Forbidden", err)
		}
		roles := &rbacv1.ClusterRoleList{}
		if err := env.Client.List(ctx, roles); err != nil {
			t.Fatal(err)
		}
		for _, r := range roles.Items {
			if len(r.Rules) == 1 && len(r.Rules[0].Resources) == 1 && r.Rules[0].Resources[0] == "configmaps" &&
				len(r.Name) > len("configas-") && r.Name[:len("configas-")] == "configas-" {
				roleName = r.Name
			}
		}
		if roleName == "" {
			t.Fatal("no ClusterRole configas-<n>-0 created for the user")
		}
	})
	for _, obj := range []client.Object{&rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{}} {
		if err := env.Client.Get(ctx, client.ObjectKey{Name: roleName}, obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s after the test: %v, want NotFound", obj, roleName, err)
		}
	}
}
