package keystone_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keys"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/rotation"
	"github.com/c5c3/reconciler-sdk/reconcile"
)

// clientAsServiceAccount is a client of env that acts as the ServiceAccount name of
// namespace ns, as a pod running under it does.
func clientAsServiceAccount(t *testing.T, ns, name string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The RotationAccess row makes the ServiceAccount <name>-rotation, a Role holding
// exactly get and update on the Keystone's key and password Secrets, and the
// RoleBinding, all controlled by the Keystone; a rotate-keys and a rotate-password run
// as that ServiceAccount succeed, and the same ServiceAccount is refused any other
// Secret.
func TestRotationAccess(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(env.Client)
	if res, err := keystone.RunStep(ctx, rec, "RotationAccess", target, k, ""); err != nil || !res.IsZero() {
		t.Fatalf("RotationAccess: %+v %v", res, err)
	}
	name := rotation.ServiceAccountName(k)
	if name != "keystone-rotation" {
		t.Errorf("rotation.ServiceAccountName = %q", name)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, obj := range []client.Object{sa, role, binding} {
		get(t, obj)
		if !metav1.IsControlledBy(obj, k) {
			t.Errorf("%T %s is not controlled by the Keystone", obj, obj.GetName())
		}
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"},
		ResourceNames: []string{"keystone-fernet-keys", "keystone-credential-keys", "keystone-db-password"},
		Verbs:         []string{"get", "update"}}}
	if !reflect.DeepEqual(role.Rules, want) || !reflect.DeepEqual(rotation.PolicyRules(k), want) {
		t.Errorf("Role rules %+v, rotation.PolicyRules %+v; want %+v", role.Rules, rotation.PolicyRules(k), want)
	}
	if binding.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}) ||
		!reflect.DeepEqual(binding.Subjects, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}) {
		t.Errorf("RoleBinding roleRef %+v subjects %+v", binding.RoleRef, binding.Subjects)
	}
	// A second pass writes nothing.
	version := role.ResourceVersion
	if _, err := keystone.RunStep(ctx, rec, "RotationAccess", target, k, ""); err != nil {
		t.Fatal(err)
	}
	get(t, role)
	if role.ResourceVersion != version {
		t.Error("a converged pass rewrote the Role")
	}

	fernet, other := staleKeys(t, ns, names.FernetKeysSecretName(k)), staleKeys(t, ns, "someone-elses-keys")
	password := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: names.DatabasePasswordSecretName(k)},
		Data: map[string][]byte{names.DatabasePasswordDataKey: []byte("in-use-password")}}
	for _, s := range []*corev1.Secret{fernet, other, password} {
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	pod := clientAsServiceAccount(t, ns, name)
	args := rotation.RotateKeysArgs(client.ObjectKeyFromObject(fernet), 3, 168*time.Hour)[1:]
	if err := rotation.RunRotateKeys(ctx, pod, args, nil); err != nil {
		t.Errorf("rotate-keys as %s: %v", name, err)
	}
	if _, err := rotation.RotatePassword(ctx, pod, client.ObjectKeyFromObject(password), time.Now()); err != nil {
		t.Errorf("rotate-password as %s: %v", name, err)
	}
	args = rotation.RotateKeysArgs(client.ObjectKeyFromObject(other), 3, 168*time.Hour)[1:]
	if err := rotation.RunRotateKeys(ctx, pod, args, nil); !apierrors.IsForbidden(err) {
		t.Errorf("rotate-keys of another Secret as %s: %v; want Forbidden", name, err)
	}
	if err := pod.Delete(ctx, fernet); !apierrors.IsForbidden(err) {
		t.Errorf("delete as %s: %v; want Forbidden", name, err)
	}
}

// With Options.RotationServiceAccount set nothing is made, and the rotation CronJobs
// run as that ServiceAccount.
func TestRotationAccessOverride(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	opts := defaultOptions()
	opts.RotationServiceAccount = "my-rotator"
	rec := newStepReconciler(t, opts)
	storeReady(t)
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(env.Client)
	if _, err := keystone.RunStep(ctx, rec, "RotationAccess", target, k, ""); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{&corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: rotation.ServiceAccountName(k)}, obj)
		if !apierrors.IsNotFound(err) {
			t.Errorf("%T: %v; want none made", obj, err)
		}
	}
	_, _ = keystone.RunStep(ctx, rec, "PasswordRotation", target, k, "") // the password Secret is missing: the CronJob comes first
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: keystone.PasswordRotationCronJobName(k)}}
	get(t, cj)
	if got := cj.Spec.JobTemplate.Spec.Template.Spec.ServiceAccountName; got != "my-rotator" {
		t.Errorf("password rotation CronJob runs as %q, want my-rotator", got)
	}
}

// The row never takes over a ServiceAccount, Role or RoleBinding of that name that
// the Keystone does not control, nor one being deleted: it is left as it is, the Keys
// rows say KeysNotControlled and the error names the object.
func TestRotationAccessRefusals(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		obj     func(k *v1alpha1.Keystone, owner *corev1.ConfigMap) client.Object
		deleted bool
		want    error
	}{
		"unowned ServiceAccount": {obj: func(k *v1alpha1.Keystone, _ *corev1.ConfigMap) client.Object {
			return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: rotation.ServiceAccountName(k), Namespace: k.Namespace}}
		}, want: apply.ErrNotControlled},
		"someone else's Role": {obj: func(k *v1alpha1.Keystone, owner *corev1.ConfigMap) client.Object {
			r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: rotation.ServiceAccountName(k), Namespace: k.Namespace},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}}}
			r.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}
			return r
		}, want: apply.ErrNotControlled},
		"RoleBinding being deleted": {obj: func(k *v1alpha1.Keystone, _ *corev1.ConfigMap) client.Object {
			b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: rotation.ServiceAccountName(k), Namespace: k.Namespace,
				Finalizers: []string{"example.com/hold"}},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "other"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "other", Namespace: k.Namespace}}}
			b.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(k, v1alpha1.GroupVersion.WithKind("Keystone"))}
			return b
		}, deleted: true, want: apply.ErrBeingDeleted},
	} {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			rec := newStepReconciler(t, defaultOptions())
			k := createKeystone(t, newKeystone(ns, "keystone"))
			get(t, k)
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
			if err := env.Client.Create(ctx, owner); err != nil {
				t.Fatal(err)
			}
			obj := tc.obj(k, owner)
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			if tc.deleted {
				if err := env.Client.Delete(ctx, obj); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					get(t, obj)
					obj.SetFinalizers(nil)
					_ = env.Client.Update(context.Background(), obj)
				})
			}
			get(t, obj)
			version := obj.GetResourceVersion()
			res, err := keystone.RunStep(ctx, rec, "RotationAccess", stepTarget(env.Client), k, "")
			if !errors.Is(err, tc.want) || !res.IsZero() {
				t.Fatalf("RotationAccess: %+v %v; want %v", res, err, tc.want)
			}
			var stepErr *reconcile.StepError // the step's own error, which the runner names the step in
			if !errors.As(err, &stepErr) {
				t.Fatalf("RotationAccess: %v is not a reconcile.StepError", err)
			}
			for _, cond := range []string{keystone.ConditionFernetKeysReady, keystone.ConditionCredentialKeysReady} {
				c := meta.FindStatusCondition(k.Status.Conditions, cond)
				if c == nil || c.Reason != keystone.ReasonKeysNotControlled || c.Message != stepErr.Err.Error() {
					t.Errorf("%s = %+v; want KeysNotControlled with the error", cond, c)
				}
			}
			get(t, obj)
			if obj.GetResourceVersion() != version {
				t.Error("the object was written")
			}
		})
	}
}

// staleKeys is the Secret ns/name holding a new key repository whose last rotation is
// longer ago than any interval the tests rotate with.
func staleKeys(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	repo, err := keys.Setup(nil)
	if err != nil {
		t.Fatal(err)
	}
	rotatedAt := time.Now().Add(-200 * time.Hour).UTC().Format(time.RFC3339)
	return &corev1.Secret{Data: repo.SecretData(), ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
		Annotations: map[string]string{rotation.RotatedAtAnnotation: rotatedAt}}}
}
