package reconcilersdk_test

import (
	"context"
	"path/filepath"
	"testing"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	mariadbv1alpha1 "github.com/mariadb-operator/mariadb-operator/v25/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	vpav1 "k8s.io/autoscaler/vertical-pod-autoscaler/pkg/apis/autoscaling.k8s.io/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	commonv1 "github.com/c5c3/reconciler-sdk/api/v1"
	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/config"
	"github.com/c5c3/reconciler-sdk/database"
	"github.com/c5c3/reconciler-sdk/deployment"
	"github.com/c5c3/reconciler-sdk/httproute"
	"github.com/c5c3/reconciler-sdk/job"
	"github.com/c5c3/reconciler-sdk/multicluster"
	"github.com/c5c3/reconciler-sdk/netpol"
	"github.com/c5c3/reconciler-sdk/policy"
	"github.com/c5c3/reconciler-sdk/secrets"
	esov1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1"
	esov1alpha1 "github.com/c5c3/reconciler-sdk/secrets/eso/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/simulate"
	"github.com/c5c3/reconciler-sdk/tls"
)

// asPackage returns a client for a user bound only to the ClusterRole generated from
// pkg's +kubebuilder:rbac markers (rbac/<pkg>/role.yaml), and a fresh namespace
// with an owner ConfigMap made by the admin.
func asPackage(t *testing.T, pkg string) (client.Client, string, *corev1.ConfigMap) {
	t.Helper()
	roles, err := testenv.LoadClusterRoles(filepath.Join("rbac", pkg, "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatal(err)
	}
	return env.ClientAs(t, pkg, roles...), ns, owner
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s with the package's ClusterRole only: %v", what, err)
	}
}

// TestLeastPrivilege runs each package's helpers as a user who holds only the
// ClusterRole generated from that package's markers: a missing rule fails with
// Forbidden, so the published roles are proven sufficient.
func TestLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	scheme := env.Scheme

	t.Run("config", func(t *testing.T) {
		c, ns, owner := asPackage(t, "config")
		var names []string
		for _, v := range []string{"a", "b", "c"} {
			name, err := config.CreateImmutableConfigMap(ctx, c, scheme, owner, "cfg", ns, map[string]string{"k": v})
			must(t, "CreateImmutableConfigMap", err)
			names = append(names, name)
		}
		// A Deployment that mounts the oldest makes the in-use guard list every workload kind.
		inUse := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "uses-oldest", Namespace: ns},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "old"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "old"}},
					Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}},
						Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{
							ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: names[0]}}}}},
					},
				},
			},
		}
		must(t, "create Deployment", env.Client.Create(ctx, inUse))
		must(t, "PruneImmutableConfigMapsWithOptions", config.PruneImmutableConfigMapsWithOptions(ctx, c, owner, "cfg", ns, names[2],
			config.PruneOptions{Retain: 0, SpareInUse: true}))
		// Adoption of an annotated, unowned object with the same content patches it.
		adoptable := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "adopt-" + config.ContentHash(map[string]string{"k": "x"}),
			Namespace: ns, Annotations: map[string]string{apply.AdoptAnnotation: "true"}},
			Data: map[string]string{"k": "x"}, Immutable: new(true)}
		must(t, "create adoptable", env.Client.Create(ctx, adoptable))
		_, err := config.CreateImmutableConfigMap(ctx, c, scheme, owner, "adopt", ns, map[string]string{"k": "x"})
		must(t, "CreateImmutableConfigMap (adopt)", err)
		sec, err := config.CreateImmutableSecret(ctx, c, scheme, owner, "sec", ns, map[string][]byte{"k": []byte("v")})
		must(t, "CreateImmutableSecret", err)
		must(t, "PruneImmutableSecrets", config.PruneImmutableSecrets(ctx, c, owner, "sec", ns, sec, 0))
		list := &corev1.ConfigMapList{}
		must(t, "list", env.Client.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{config.ConfigBaseLabel: "cfg"}))
		if len(list.Items) != 2 {
			t.Errorf("after the prune %d ConfigMaps remain, want 2 (current + the one in use)", len(list.Items))
		}
	})

	t.Run("policy", func(t *testing.T) {
		c, ns, _ := asPackage(t, "policy")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "policy", Namespace: ns},
			Data: map[string]string{"policy.yaml": `"identity:get_user": "role:admin"` + "\n"}}
		must(t, "create", env.Client.Create(ctx, cm))
		rules, err := policy.LoadPolicyFromConfigMap(ctx, c, client.ObjectKeyFromObject(cm))
		must(t, "LoadPolicyFromConfigMap", err)
		if rules["identity:get_user"] != "role:admin" {
			t.Errorf("rules = %v", rules)
		}
	})

	t.Run("deployment", func(t *testing.T) {
		c, ns, owner := asPackage(t, "deployment")
		labels := map[string]string{"app": "lp"}
		deploy := func() *appsv1.Deployment {
			return &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}},
				},
			}
		}
		_, err := deployment.EnsureDeployment(ctx, c, scheme, owner, deploy())
		must(t, "EnsureDeployment", err)
		_, err = simulate.MarkDeploymentAvailable(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "app"})
		must(t, "MarkDeploymentAvailable", err)
		ready, err := deployment.EnsureDeployment(ctx, c, scheme, owner, deploy())
		must(t, "EnsureDeployment (converged)", err)
		if !ready {
			t.Error("the available Deployment is not ready")
		}
		must(t, "EnsureService", deployment.EnsureService(ctx, c, scheme, owner, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
			Spec: corev1.ServiceSpec{Selector: labels,
				Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}))
		must(t, "EnsurePodDisruptionBudget", deployment.EnsurePodDisruptionBudget(ctx, c, scheme, owner, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, MaxUnavailable: new(intstr.FromInt32(1))},
		}))
		hpaKey := client.ObjectKey{Namespace: ns, Name: "app"}
		_, err = deployment.ReconcileHPA(ctx, c, scheme, owner, hpaKey, &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "app"},
				MinReplicas:    new(int32(1)), MaxReplicas: 3,
			},
		})
		must(t, "ReconcileHPA (create)", err)
		_, err = deployment.ReconcileHPA(ctx, c, scheme, owner, hpaKey, nil)
		must(t, "ReconcileHPA (delete)", err)
		mode := vpav1.UpdateModeOff
		_, err = deployment.VPAFlow(ctx, c, scheme, owner, []*vpav1.VerticalPodAutoscaler{{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
			Spec: vpav1.VerticalPodAutoscalerSpec{
				TargetRef:    &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "app"},
				UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: &mode},
			},
		}})
		must(t, "VPAFlow (create)", err)
		_, err = deployment.VPAFlow(ctx, c, scheme, owner, nil)
		must(t, "VPAFlow (delete)", err)
	})

	t.Run("job", func(t *testing.T) {
		c, ns, owner := asPackage(t, "job")
		j := func() *batchv1.Job {
			return &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "run", Image: "registry.example/tool:1"}},
				}}},
			}
		}
		_, err := job.RunJobWithKey(ctx, c, scheme, owner, j(), "v1")
		must(t, "RunJobWithKey", err)
		_, err = simulate.MarkJobComplete(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "once"})
		must(t, "MarkJobComplete", err)
		done, err := job.RunJobWithKey(ctx, c, scheme, owner, j(), "v1")
		must(t, "RunJobWithKey (complete)", err)
		if !done {
			t.Error("the complete Job is not reported done")
		}
		// A new key re-runs the Job: delete and create.
		_, err = job.RunJobWithKey(ctx, c, scheme, owner, j(), "v2")
		must(t, "RunJobWithKey (re-run)", err)
		must(t, "EnsureCronJob", job.EnsureCronJob(ctx, c, scheme, owner, &batchv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Name: "tick", Namespace: ns},
			Spec:       batchv1.CronJobSpec{Schedule: "0 * * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: j().Spec}},
		}))
	})

	t.Run("secrets", func(t *testing.T) {
		c, ns, owner := asPackage(t, "secrets")
		store := &esov1.SecretStore{ObjectMeta: metav1.ObjectMeta{Name: "vault", Namespace: ns},
			Spec: esov1.SecretStoreSpec{Provider: simulate.OpenBaoProvider()}}
		must(t, "create store", env.Client.Create(ctx, store))
		_, err := simulate.MarkSecretStoreReady(ctx, env.Client, client.ObjectKeyFromObject(store))
		must(t, "MarkSecretStoreReady", err)
		ref := commonv1.SecretStoreRefSpec{Kind: "SecretStore", Name: "vault"}
		var conds []metav1.Condition
		ready, err := secrets.GateStoreReady(ctx, c, ref, ns, true, &conds, 1, "SecretsReady")
		must(t, "GateStoreReady", err)
		if !ready {
			t.Errorf("the ready store is not reported ready: %v", conds)
		}
		gs := secrets.DefaultGeneratedSecret(client.ObjectKey{Namespace: ns, Name: "admin"}, "password")
		_, err = secrets.EnsureGeneratedSecret(ctx, c, scheme, owner, gs)
		must(t, "EnsureGeneratedSecret", err)
		_, err = secrets.EnsureGeneratedSecret(ctx, c, scheme, owner, gs)
		must(t, "EnsureGeneratedSecret (converged)", err)
		must(t, "EnsurePushSecret", secrets.EnsurePushSecret(ctx, c, scheme, owner, &esov1alpha1.PushSecret{
			ObjectMeta: metav1.ObjectMeta{Name: "admin", Namespace: ns},
			Spec: esov1alpha1.PushSecretSpec{
				SecretStoreRefs: secrets.PushSecretStoreRefs(ref),
				Selector:        esov1alpha1.PushSecretSelector{Secret: &esov1alpha1.PushSecretSecret{Name: "admin"}},
			},
		}))
		_, _, err = secrets.WaitForExternalSecret(ctx, c, client.ObjectKey{Namespace: ns, Name: "missing"})
		must(t, "WaitForExternalSecret", err)
		// The Secrets flow applies an ExternalSecret and reads the Secret it writes.
		synced, err := secrets.Sync(ctx, c, scheme, owner, secrets.SyncParams{
			ConditionType: "SecretsReady", StoreRef: &ref, Name: "svc-password",
			Data: []esov1.ExternalSecretData{{SecretKey: "password", RemoteRef: esov1.ExternalSecretDataRemoteRef{Key: "svc/password"}}},
		})
		must(t, "Sync", err)
		if synced.Condition.Status != metav1.ConditionFalse {
			t.Errorf("Sync before ESO synced: %+v, want the condition False", synced.Condition)
		}
	})

	t.Run("database", func(t *testing.T) {
		c, ns, owner := asPackage(t, "database")
		ref := mariadbv1alpha1.MariaDBRef{ObjectReference: mariadbv1alpha1.ObjectReference{Name: "mariadb"}, WaitForIt: true}
		params := func() database.ProvisionParams {
			return database.ProvisionParams{
				Database: &mariadbv1alpha1.Database{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
					Spec: mariadbv1alpha1.DatabaseSpec{MariaDBRef: ref}},
				User: &mariadbv1alpha1.User{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
					Spec: mariadbv1alpha1.UserSpec{MariaDBRef: ref, Host: "%",
						PasswordSecretKeyRef: &mariadbv1alpha1.SecretKeySelector{
							LocalObjectReference: mariadbv1alpha1.LocalObjectReference{Name: "svc-db-password"}, Key: "password"}}},
				Grant: &mariadbv1alpha1.Grant{ObjectMeta: metav1.ObjectMeta{Name: "svc"},
					Spec: mariadbv1alpha1.GrantSpec{MariaDBRef: ref, Privileges: []string{"ALL PRIVILEGES"}, Host: new("%")}},
				GeneratePassword: true,
			}
		}
		must(t, "create MariaDB", env.Client.Create(ctx, &mariadbv1alpha1.MariaDB{ObjectMeta: metav1.ObjectMeta{Name: "mariadb", Namespace: ns}}))
		_, err := simulate.MarkMariaDBReady(ctx, env.Client, client.ObjectKey{Namespace: ns, Name: "mariadb"})
		must(t, "MarkMariaDBReady", err)
		key := client.ObjectKey{Namespace: ns, Name: "svc"}
		for _, mark := range []func() error{
			func() error { _, err := simulate.MarkDatabaseReady(ctx, env.Client, key); return err },
			func() error { _, err := simulate.MarkUserReady(ctx, env.Client, key); return err },
			func() error { _, err := simulate.MarkGrantReady(ctx, env.Client, key); return err },
		} {
			_, _, err := database.ReconcileProvision(ctx, c, scheme, owner, params())
			must(t, "ReconcileProvision", err)
			must(t, "simulate", mark())
		}
		cond, _, err := database.ReconcileProvision(ctx, c, scheme, owner, params())
		must(t, "ReconcileProvision (ready)", err)
		if cond.Status != metav1.ConditionTrue {
			t.Errorf("provisioned database condition = %+v", cond)
		}
		_, _, err = database.ReconcileSyncJobs(ctx, c, scheme, owner, database.SyncJob{Job: &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "db-sync", Namespace: ns},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "sync", Image: "registry.example/svc:1"}},
			}}},
		}, RerunKey: "registry.example/svc:1"})
		must(t, "ReconcileSyncJobs", err)
		_, err = database.EnsureConnectionSecret(ctx, c, scheme, owner, database.ConnectionSecretParams{
			Name: "svc-db-connection", Connection: database.Connection{Host: "mariadb." + ns + ".svc", Name: "svc", User: "svc"},
		}, "pw")
		must(t, "EnsureConnectionSecret", err)
		_, err = database.EnsureConnectionSecret(ctx, c, scheme, owner, database.ConnectionSecretParams{
			Name: "svc-db-connection", Connection: database.Connection{Host: "mariadb." + ns + ".svc", Name: "svc", User: "svc"},
		}, "pw2")
		must(t, "EnsureConnectionSecret (changed)", err)
	})

	t.Run("tls", func(t *testing.T) {
		c, ns, owner := asPackage(t, "tls")
		_, err := tls.EnsureCertificate(ctx, c, scheme, owner, &certmanagerv1.Certificate{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns},
			Spec: certmanagerv1.CertificateSpec{SecretName: "db-tls", DNSNames: []string{"db." + ns + ".svc"},
				IssuerRef: cmmeta.IssuerReference{Kind: "Issuer", Name: "ca"}},
		})
		must(t, "EnsureCertificate", err)
	})

	t.Run("httproute", func(t *testing.T) {
		c, ns, owner := asPackage(t, "httproute")
		key := client.ObjectKey{Namespace: ns, Name: "web"}
		_, err := httproute.Flow(ctx, c, scheme, owner, key, &gatewayv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{
				ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}}},
		})
		must(t, "httproute.Flow (create)", err)
		_, err = httproute.Flow(ctx, c, scheme, owner, key, nil)
		must(t, "httproute.Flow (delete)", err)
	})

	t.Run("multicluster", func(t *testing.T) {
		c, ns, owner := asPackage(t, "multicluster")
		_, err := multicluster.ManagementClusterID(ctx, c)
		must(t, "ManagementClusterID", err)
		// The kubeconfig provider lists and watches the registration Secrets.
		must(t, "list Secrets", c.List(ctx, &corev1.SecretList{}, client.InNamespace(ns),
			client.MatchingLabels{multicluster.KubeconfigSecretLabel: "true"}))
		// Cleanup records its events through the events.k8s.io API.
		must(t, "create Event", c.Create(ctx, &eventsv1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: "owner.swept", Namespace: ns},
			EventTime:  metav1.NowMicro(), ReportingController: "reconciler-sdk/test", ReportingInstance: "test",
			Action: "Delete", Reason: multicluster.ReasonTargetClusterSwept, Type: corev1.EventTypeNormal,
			Regarding: corev1.ObjectReference{Kind: "ConfigMap", Namespace: ns, Name: owner.Name, UID: owner.UID},
		}))
	})

	t.Run("netpol", func(t *testing.T) {
		c, ns, owner := asPackage(t, "netpol")
		key := client.ObjectKey{Namespace: ns, Name: "web"}
		_, err := netpol.Flow(ctx, c, scheme, owner, key, &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Ingress:     []networkingv1.NetworkPolicyIngressRule{{Ports: []networkingv1.NetworkPolicyPort{{Port: new(intstr.FromInt32(8080))}}}},
			},
		})
		must(t, "netpol.Flow (create)", err)
		_, err = netpol.Flow(ctx, c, scheme, owner, key, nil)
		must(t, "netpol.Flow (delete)", err)
	})
}

// TestLeastPrivilegeRolesAreGenerated checks that each package with markers has its
// ClusterRole and that the aggregate role holds every package's rules.
func TestLeastPrivilegeRolesAreGenerated(t *testing.T) {
	all, err := testenv.LoadClusterRoles(filepath.Join("rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Name != "reconciler-sdk" {
		t.Fatalf("rbac/role.yaml = %d roles (%v), want the one ClusterRole reconciler-sdk", len(all), all)
	}
	covered := func(r rbacv1.PolicyRule) bool {
		for _, a := range all[0].Rules {
			if subset(r.APIGroups, a.APIGroups) && subset(r.Resources, a.Resources) && subset(r.Verbs, a.Verbs) {
				return true
			}
		}
		return false
	}
	for _, pkg := range []string{"config", "database", "deployment", "job", "multicluster", "netpol", "satellite", "httproute", "policy", "secrets", "tls"} {
		roles, err := testenv.LoadClusterRoles(filepath.Join("rbac", pkg, "role.yaml"))
		if err != nil {
			t.Errorf("%s: %v", pkg, err)
			continue
		}
		for _, r := range roles[0].Rules {
			for _, res := range r.Resources {
				one := rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: []string{res}, Verbs: r.Verbs}
				if !covered(one) {
					t.Errorf("%s: rule %v is missing from the aggregate role", pkg, one)
				}
			}
		}
	}
}

func subset(a, b []string) bool {
	set := map[string]bool{}
	for _, s := range b {
		set[s] = true
	}
	for _, s := range a {
		if !set[s] {
			return false
		}
	}
	return true
}
