package testenv_test

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A config from ConfigAs reaches the API server as a user who may do what the role
// grants and nothing else, and its role and binding are gone once the test ends.
func TestConfigAsGrantsExactlyTheRole(t *testing.T) {
	ns := env.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "readable", Namespace: ns}}
	if err := env.Client.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
	}}}

	var user string
	t.Run("as the user", func(t *testing.T) {
		cfg := env.ConfigAs(t, "reader", role)
		if cfg.Host != env.Config.Host || cfg.QPS != env.Config.QPS || cfg.Burst != env.Config.Burst {
			t.Fatalf("config host/QPS/burst = %s/%v/%d, want the Env's %s/%v/%d",
				cfg.Host, cfg.QPS, cfg.Burst, env.Config.Host, env.Config.QPS, env.Config.Burst)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(),
			&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		user = review.Status.UserInfo.Username
		if user == "" || user == "admin" {
			t.Fatalf("the config authenticates as %q, want a user of its own", user)
		}
		c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
			t.Fatalf("get ConfigMap the role grants: %v", err)
		}
		err = c.List(context.Background(), &corev1.SecretList{}, client.InNamespace(ns))
		if !apierrors.IsForbidden(err) {
			t.Fatalf("list Secrets, which the role does not grant: err = %v, want Forbidden", err)
		}
		err = c.Delete(context.Background(), cm.DeepCopy())
		if !apierrors.IsForbidden(err) {
			t.Fatalf("delete ConfigMap, which the role does not grant: err = %v, want Forbidden", err)
		}
	})

	var bindings rbacv1.ClusterRoleBindingList
	if err := env.Client.List(context.Background(), &bindings); err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings.Items {
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.UserKind && s.Name == user {
				t.Errorf("ClusterRoleBinding %s for user %s still exists after the test", b.Name, user)
			}
		}
	}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: user + "-0"}, &rbacv1.ClusterRole{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterRole %s-0 after the test: err = %v, want NotFound", user, err)
	}
}
