package testenv

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ConfigAs returns a rest.Config that authenticates as a new user (named after name,
// made unique) who holds exactly the rules of roles, bound cluster-wide, and nothing
// else. It is what [Env.ClientAs] builds its client from; use it where a whole manager
// (its cache, its discovery, its clients) must run as that user, for example to start
// an operator as its generated ClusterRole allows and no more. The config has the
// Env's QPS and Burst. The roles and bindings are removed when the test ends.
func (e *Env) ConfigAs(t testing.TB, name string, roles ...*rbacv1.ClusterRole) *rest.Config {
	t.Helper()
	ctx := context.Background()
	user := fmt.Sprintf("%s-%d", name, userSeq.Add(1))
	for i, role := range roles {
		r := role.DeepCopy()
		r.ObjectMeta = metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", user, i)}
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: r.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		for _, obj := range []client.Object{r, b} {
			if err := e.Client.Create(ctx, obj); err != nil {
				t.Fatalf("testenv: create %T %s for user %s: %v", obj, obj.GetName(), user, err)
			}
			t.Cleanup(func() {
				if err := e.Client.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("testenv: delete %T %s: %v", obj, obj.GetName(), err)
				}
			})
		}
	}
	au, err := e.env.AddUser(envtest.User{Name: user}, e.Config)
	if err != nil {
		t.Fatalf("testenv: add user %s: %v", user, err)
	}
	cfg := au.Config()
	cfg.QPS, cfg.Burst = e.Config.QPS, e.Config.Burst
	return cfg
}
