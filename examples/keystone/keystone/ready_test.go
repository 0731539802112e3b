package keystone_test

import (
	"context"
	"strings"
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/examples/keystone/keystone"
	"github.com/c5c3/reconciler-sdk/examples/keystone/names"
	"github.com/c5c3/reconciler-sdk/examples/keystone/settings"
	"github.com/c5c3/reconciler-sdk/reconcile"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// childLists are the kinds a Keystone controls on the management cluster.
func childLists() []client.ObjectList {
	return []client.ObjectList{
		&appsv1.DeploymentList{}, &corev1.ServiceList{}, &policyv1.PodDisruptionBudgetList{},
		&corev1.ConfigMapList{}, &corev1.SecretList{}, &esov1.ExternalSecretList{},
		&autoscalingv2.HorizontalPodAutoscalerList{}, &certmanagerv1.CertificateList{},
		&mariadbv1alpha1.DatabaseList{}, &mariadbv1alpha1.UserList{}, &mariadbv1alpha1.GrantList{},
		&batchv1.JobList{}, &batchv1.CronJobList{},
	}
}

// jobUID returns the UID of the Job name in ns, "" while there is none.
func jobUID(ctx context.Context, ns, name string) (types.UID, error) {
	j := &batchv1.Job{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, j); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	return j.UID, nil
}

func mustJobUID(t *testing.T, ns, name string) types.UID {
	t.Helper()
	uid, err := jobUID(context.Background(), ns, name)
	if err != nil || uid == "" {
		t.Fatalf("Job %s/%s: uid %q, err %v", ns, name, uid, err)
	}
	return uid
}

// expectNoSecretIn fails when a condition of k, or a Job's or CronJob's annotations,
// command, arguments or literal environment values in k's namespace, quote one of
// values.
func expectNoSecretIn(t *testing.T, k *v1alpha1.Keystone, values ...string) {
	t.Helper()
	ctx := context.Background()
	get(t, k)
	var texts []string
	for _, c := range k.Status.Conditions {
		texts = append(texts, c.Message)
	}
	pod := func(what string, annotations map[string]string, tpl corev1.PodTemplateSpec) {
		for _, v := range annotations {
			texts = append(texts, what+" annotation "+v)
		}
		for _, v := range tpl.Annotations {
			texts = append(texts, what+" pod annotation "+v)
		}
		for _, c := range tpl.Spec.Containers {
			texts = append(texts, what+" command "+strings.Join(append(c.Command, c.Args...), " "))
			for _, e := range c.Env {
				texts = append(texts, what+" env "+e.Name+"="+e.Value)
			}
		}
	}
	jobs := &batchv1.JobList{}
	if err := env.Client.List(ctx, jobs, client.InNamespace(k.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Items {
		pod("Job "+j.Name, j.Annotations, j.Spec.Template)
	}
	cjs := &batchv1.CronJobList{}
	if err := env.Client.List(ctx, cjs, client.InNamespace(k.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, cj := range cjs.Items {
		pod("CronJob "+cj.Name, cj.Annotations, cj.Spec.JobTemplate.Spec.Template)
	}
	for _, text := range texts {
		for _, v := range values {
			if v != "" && strings.Contains(text, v) {
				t.Errorf("a secret is quoted: %q", text)
			}
		}
	}
}

// A minimal Keystone reaches Ready with every sub-condition True; a converged pass
// writes nothing; db-sync runs once per image and the bootstrap once per admin
// password, and no password shows in a condition, a Job or a CronJob; deleting the
// Keystone collects its children.
func TestKeystoneLifecycle(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	op := startOperator(t, ns, operatorOptions{})
	k := createKeystone(t, newKeystone(ns, "keystone"))
	converge(t, k, "first-password")
	get(t, k)
	want := map[string]string{
		keystone.ConditionSecretsReady: keystone.ReasonSecretsAvailable, keystone.ConditionDatabaseTLSReady: keystone.ReasonTLSNotRequired,
		keystone.ConditionConfigReady: keystone.ReasonConfigRendered, keystone.ConditionDatabaseReady: "DatabaseSynced",
		keystone.ConditionPolicyValid: keystone.ReasonPolicyNotRequired, keystone.ConditionDeploymentReady: keystone.ReasonDeploymentReady,
		keystone.ConditionHTTPRouteReady: "HTTPRouteNotRequired", keystone.ConditionKeystoneAPIReady: "APIHealthy",
		keystone.ConditionHPAReady: "HPANotRequired", keystone.ConditionBootstrapReady: keystone.ReasonBootstrapComplete,
		keystone.ConditionTrustFlushReady: keystone.ReasonTrustFlushScheduled, reconcile.ConditionReady: reconcile.ReasonAllReady,
	}
	for typ, reason := range want {
		c := meta.FindStatusCondition(k.Status.Conditions, typ)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
			t.Errorf("%s = %+v, want True/%s", typ, c, reason)
		}
	}
	if k.Status.Endpoint != names.Endpoint(k) || k.Status.SyncedImage != k.Spec.Image ||
		!strings.HasPrefix(k.Status.ConfigMap, names.ConfigBaseName(k)+"-") {
		t.Fatalf("status = %+v", k.Status)
	}
	dbPassword := &corev1.Secret{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.DatabasePasswordSecretName(k)}, dbPassword); err != nil {
		t.Fatal(err)
	}
	expectNoSecretIn(t, k, "first-password", string(dbPassword.Data[names.DatabasePasswordDataKey]))

	// A converged pass writes nothing: no child, and not the Keystone.
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(k)}
	before := k.ResourceVersion
	testenv.ExpectUnchanged(t, env.Client, k, func(ctx context.Context) error {
		_, err := op.rec.Reconcile(ctx, req)
		return err
	}, childLists()...)
	if get(t, k); k.ResourceVersion != before {
		t.Errorf("a converged pass wrote the Keystone: resourceVersion %s -> %s", before, k.ResourceVersion)
	}

	dbSync := mustJobUID(t, ns, keystone.DBSyncJobName(k))
	bootstrap := mustJobUID(t, ns, keystone.BootstrapJobName(k))

	// A new keystone.conf rolls the pods but runs neither db-sync nor the bootstrap.
	oldConfig := k.Status.ConfigMap
	k = update(t, k, func(k *v1alpha1.Keystone) { k.Spec.Debug = true })
	waitReady(t, k)
	if get(t, k); k.Status.ConfigMap == oldConfig {
		t.Fatalf("status.configMap %s did not change with the settings", oldConfig)
	}
	if got := mustJobUID(t, ns, keystone.DBSyncJobName(k)); got != dbSync {
		t.Errorf("db-sync ran again for a configuration change")
	}
	if got := mustJobUID(t, ns, keystone.BootstrapJobName(k)); got != bootstrap {
		t.Errorf("bootstrap ran again for a configuration change")
	}

	// A new admin password runs the bootstrap again, and only the bootstrap.
	syncAdminPassword(t, k, "second-password")
	testenv.Eventually(t, 60*time.Second, "bootstrap re-run for the new password", func(ctx context.Context) (bool, error) {
		uid, err := jobUID(ctx, ns, keystone.BootstrapJobName(k))
		return uid != "" && uid != bootstrap, err
	})
	waitReady(t, k)
	bootstrap = mustJobUID(t, ns, keystone.BootstrapJobName(k))
	if got := mustJobUID(t, ns, keystone.DBSyncJobName(k)); got != dbSync {
		t.Errorf("db-sync ran again for a password change")
	}
	expectNoSecretIn(t, k, "first-password", "second-password", string(dbPassword.Data[names.DatabasePasswordDataKey]))

	// A new image runs db-sync again, not the bootstrap.
	k = update(t, k, func(k *v1alpha1.Keystone) { k.Spec.Image = "registry.example/keystone:2025.2" })
	waitReady(t, k)
	if get(t, k); k.Status.SyncedImage != "registry.example/keystone:2025.2" {
		t.Errorf("status.syncedImage = %q after the upgrade", k.Status.SyncedImage)
	}
	if got := mustJobUID(t, ns, keystone.DBSyncJobName(k)); got == dbSync {
		t.Errorf("db-sync did not run for the new image")
	}
	if got := mustJobUID(t, ns, keystone.BootstrapJobName(k)); got != bootstrap {
		t.Errorf("bootstrap ran again for an image change")
	}

	// Deleting the Keystone collects its children.
	if err := env.Client.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "children collected", func(ctx context.Context) (bool, error) {
		for _, obj := range []client.Object{
			&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: k.Name}},
			&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: keystone.DBSyncJobName(k)}},
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: names.ConnectionSecretName(k)}},
			&mariadbv1alpha1.User{ObjectMeta: metav1.ObjectMeta{Name: k.Name}},
			&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: keystone.TrustFlushCronJobName(k)}},
		} {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: obj.GetName()}, obj)
			if !apierrors.IsNotFound(err) {
				return false, err
			}
		}
		return true, nil
	})
}

// The operator reaches Ready with nothing but the ClusterRole generated from its
// markers (../config/rbac/role.yaml).
func TestLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	roles, err := testenv.LoadClusterRoles("../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	user := "keystone-operator-" + ns
	for i, role := range roles {
		r := role.DeepCopy()
		r.ObjectMeta = metav1.ObjectMeta{Name: user + "-" + string(rune('a'+i))}
		b := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: r.Name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.Name},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		for _, obj := range []client.Object{r, b} {
			if err := env.Client.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
		}
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	startOperator(t, ns, operatorOptions{cfg: cfg})
	k := newKeystone(ns, "keystone")
	k.Spec.Autoscaling = &commonv1.AutoscalingSpec{MaxReplicas: 3}
	converge(t, createKeystone(t, k), "least-privilege")
}

// The Deployment mounts keystone.conf, the key repositories as whole Secrets and, when
// the IdentityBackends step projected domains, each domain file with subPath; the
// connection reaches the container from its Secret; it keeps as many old ReplicaSets as
// the prune keeps ConfigMaps.
func TestDeploymentMounts(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	rec := newStepReconciler(t, defaultOptions())
	k := createKeystone(t, newKeystone(ns, "keystone"))
	target := stepTarget(env.Client)
	if _, err := runConfig(t, rec, target, k, "keystone-domains-abc", "keystone.ldap.conf"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(confOf(t, k), "domain_specific_drivers_enabled = true") {
		t.Errorf("keystone.conf does not enable domain-specific drivers:\n%s", confOf(t, k))
	}
	res, err := keystone.RunStep(ctx, rec, "Deployment", target, k, "keystone-domains-abc", "keystone.ldap.conf")
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(k.Status.Conditions, keystone.ConditionDeploymentReady); c == nil ||
		c.Reason != keystone.ReasonWaitingForDeployment || res.RequeueAfter != deployment.PollInterval {
		t.Fatalf("DeploymentReady = %+v, result %+v", c, res)
	}
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: k.Name}, d); err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]corev1.VolumeMount{}
	for _, m := range spec.Containers[0].VolumeMounts {
		mounts[m.MountPath] = m
	}
	for path, want := range map[string]struct{ secret, subPath string }{
		settings.DefaultFernetKeyRepository:              {names.FernetKeysSecretName(k), ""},
		settings.DefaultCredentialKeyRepository:          {names.CredentialKeysSecretName(k), ""},
		settings.DomainConfigDir + "/keystone.ldap.conf": {"keystone-domains-abc", "keystone.ldap.conf"},
		"/etc/keystone/keystone.conf":                    {"", keystone.ConfigFile},
	} {
		m, ok := mounts[path]
		if !ok {
			t.Errorf("nothing mounted at %s", path)
			continue
		}
		if m.SubPath != want.subPath {
			t.Errorf("%s: subPath %q, want %q", path, m.SubPath, want.subPath)
		}
		if v := volumes[m.Name]; want.secret != "" && (v.Secret == nil || v.Secret.SecretName != want.secret) {
			t.Errorf("%s: volume %+v, want Secret %s", path, v.VolumeSource, want.secret)
		}
	}
	env0 := spec.Containers[0].Env[0]
	if env0.Name != database.ConnectionEnv || env0.Value != "" || env0.ValueFrom.SecretKeyRef.Name != names.ConnectionSecretName(k) {
		t.Errorf("connection env = %+v", env0)
	}
	if d.Spec.Template.Annotations[keystone.ConnectionVersionAnnotation] == "" {
		t.Errorf("pod template lacks %s", keystone.ConnectionVersionAnnotation)
	}
	if l := d.Spec.RevisionHistoryLimit; l == nil || *l != keystone.RetainConfigMaps {
		t.Errorf("revisionHistoryLimit = %d, want %d (RetainConfigMaps)", ptr.Deref(l, -1), keystone.RetainConfigMaps)
	}
}

// confOf returns keystone.conf of status.configMap.
func confOf(t *testing.T, k *v1alpha1.Keystone) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: k.Namespace, Name: k.Status.ConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data[keystone.ConfigFile]
}
