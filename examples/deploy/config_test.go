package deploy_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/internal/deploy"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

// example is one example operator's shipped configuration.
type example struct {
	// name is its kustomize namePrefix without the dash, and its namespace's first part.
	name string
	// config is its config directory.
	config string
	// role is the name of its ClusterRole in config/rbac/role.yaml (before namePrefix).
	role string
	// webhooks: it serves admission webhooks (config/webhook, config/certmanager).
	webhooks bool
}

var examples = []example{
	{name: "quickstart", config: "../quickstart/config", role: "memo-operator"},
	{name: "horizon", config: "../horizon/config", role: "horizon-operator", webhooks: true},
	{name: "keystone", config: "../keystone/config", role: "keystone-operator", webhooks: true},
	{name: "katalog", config: "../katalog/config", role: "manager-role"},
}

func (e example) namespace() string { return e.name + "-system" }

// prefixed is name as the example's namePrefix makes it.
func (e example) prefixed(name string) string { return e.name + "-" + name }

// image is the image the tests deploy the example with.
func (e example) image() string {
	return "registry.example/reconciler-sdk/" + e.name + "-operator:test"
}

// get reads ns/name into obj, failing the test when it is missing.
func get(t *testing.T, ns, name string, obj client.Object) {
	t.Helper()
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		t.Fatalf("%T %s/%s: %v", obj, ns, name, err)
	}
}

// ourFields are the managedFields entries of deploy.FieldManager of every object.
func ourFields(t *testing.T, objs []*unstructured.Unstructured) map[string][]metav1.ManagedFieldsEntry {
	t.Helper()
	out := map[string][]metav1.ManagedFieldsEntry{}
	for _, obj := range objs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), live); err != nil {
			t.Fatalf("%s: %v", deploy.Describe(obj), err)
		}
		for _, f := range live.GetManagedFields() {
			if f.Manager == deploy.FieldManager {
				out[deploy.Describe(obj)] = append(out[deploy.Describe(obj)], f)
			}
		}
		if len(out[deploy.Describe(obj)]) == 0 {
			t.Errorf("%s: no managedFields of %s: %v", deploy.Describe(obj), deploy.FieldManager, testenv.FieldManagers(live))
		}
	}
	return out
}

// Each example's config/default, built with an image and applied server-side: the
// hardened Deployment runs that image as the shipped ServiceAccount, which the shipped
// RBAC lets do what the operator does; the metrics Service serves https on 8443; the
// webhook configurations ask cert-manager for their CA from the Certificate of the
// webhook Service. Applying again changes nothing. A failed call of each verb names its
// object. Undeploy removes exactly what was applied and leaves an object of the same
// name someone else made.
func TestConfigDefault(t *testing.T) {
	for _, e := range examples {
		t.Run(e.name, func(t *testing.T) { testConfigDefault(t, e) })
	}
}

func testConfigDefault(t *testing.T, e example) {
	ctx := t.Context()
	objs, err := deploy.Build(e.config+"/default", deploy.BuildOptions{Image: e.image()})
	if err != nil {
		t.Fatal(err)
	}
	faultyApply(t, e, objs)
	if err := deploy.Apply(ctx, env.Client, objs, deploy.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	ns := e.namespace()

	d := &appsv1.Deployment{}
	get(t, ns, e.prefixed("controller-manager"), d)
	expectHardenedManager(t, e, d)
	expectRBAC(t, e, d.Spec.Template.Spec.ServiceAccountName)

	svc := &corev1.Service{}
	get(t, ns, e.prefixed("controller-manager-metrics-service"), svc)
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "https" || svc.Spec.Ports[0].Port != 8443 ||
		svc.Spec.Ports[0].TargetPort.IntValue() != 8443 {
		t.Errorf("metrics Service ports %+v, want https 8443 -> 8443", svc.Spec.Ports)
	}
	expectSelects(t, "metrics Service", svc.Spec.Selector, d)
	if e.webhooks {
		expectWebhooks(t, e, d)
	}

	before := ourFields(t, objs)
	if err := deploy.Apply(ctx, env.Client, objs, deploy.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, ourFields(t, objs)); diff != "" {
		t.Errorf("the second Apply changed %s's managedFields: -before, +after:\n%s", deploy.FieldManager, diff)
	}

	faultyDelete(t, objs)
	undeploy(t, e, objs)
}

// expectHardenedManager: the manager runs the image given, as non-root with the
// runtime's seccomp profile, a read-only root, no privilege escalation and no
// capability, with the probes, resources and the flags of its command.
func expectHardenedManager(t *testing.T, e example, d *appsv1.Deployment) {
	t.Helper()
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("containers %d, want the manager only", len(pod.Containers))
	}
	c := pod.Containers[0]
	got := []any{c.Name, c.Image, *pod.SecurityContext.RunAsNonRoot, pod.SecurityContext.SeccompProfile.Type,
		*c.SecurityContext.ReadOnlyRootFilesystem, *c.SecurityContext.AllowPrivilegeEscalation, c.SecurityContext.Capabilities.Drop,
		c.LivenessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Port.IntValue(), c.ReadinessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Port.IntValue(),
		*pod.AutomountServiceAccountToken, pod.ServiceAccountName, *pod.TerminationGracePeriodSeconds > 0}
	want := []any{"manager", e.image(), true, corev1.SeccompProfileTypeRuntimeDefault,
		true, false, []corev1.Capability{"ALL"}, "/healthz", 8081, "/readyz", 8081, true, e.prefixed("controller-manager"), true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manager Deployment: -want, +got:\n%s", diff)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if c.Resources.Requests.Name(r, "").IsZero() || c.Resources.Limits.Name(r, "").IsZero() {
			t.Errorf("manager resources %+v: want requests and limits of %s", c.Resources, r)
		}
	}
	for _, arg := range []string{"--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("manager args %q: want %s", c.Args, arg)
		}
	}
	switch e.name {
	case "keystone":
		i := slices.IndexFunc(c.Env, func(v corev1.EnvVar) bool { return v.Name == "OPERATOR_IMAGE" })
		if i < 0 || c.Env[i].Value != e.image() {
			t.Errorf("manager env %+v: want OPERATOR_IMAGE=%s, the manager's own image", c.Env, e.image())
		}
	case "katalog":
		expectKatalogs(t, e, d)
	}
}

// expectKatalogs: the engine runs the three Katalogs from the ConfigMap mounted at
// /etc/katalog.
func expectKatalogs(t *testing.T, e example, d *appsv1.Deployment) {
	t.Helper()
	c := d.Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "--katalog=/etc/katalog/platform.yaml,/etc/katalog/database.yaml,/etc/katalog/foreach.yaml") {
		t.Errorf("engine args %q: want the three Katalogs under /etc/katalog", c.Args)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/katalog" || len(d.Spec.Template.Spec.Volumes) != 1 ||
		d.Spec.Template.Spec.Volumes[0].ConfigMap == nil {
		t.Fatalf("engine volumes %+v, mounts %+v: want one ConfigMap at /etc/katalog", d.Spec.Template.Spec.Volumes, c.VolumeMounts)
	}
	cm := &corev1.ConfigMap{}
	get(t, e.namespace(), d.Spec.Template.Spec.Volumes[0].ConfigMap.Name, cm)
	var keys []string
	for k := range cm.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"database.yaml", "foreach.yaml", "platform.yaml"}, keys); diff != "" {
		t.Errorf("Katalogs ConfigMap keys: -want, +got:\n%s", diff)
	}
}

// expectSelects: selector selects d's pods.
func expectSelects(t *testing.T, what string, selector map[string]string, d *appsv1.Deployment) {
	t.Helper()
	if len(selector) == 0 {
		t.Errorf("%s selects everything", what)
	}
	for k, v := range selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("%s selector %v does not select the manager's pods %v", what, selector, d.Spec.Template.Labels)
		}
	}
}

// expectRBAC: the shipped bindings give the ServiceAccount sa what the manager does:
// its own Lease in its namespace, reviews of the metrics scrapers' tokens and access,
// and the rules of config/rbac/role.yaml.
func expectRBAC(t *testing.T, e example, sa string) {
	t.Helper()
	role := &rbacv1.ClusterRole{}
	get(t, "", e.prefixed(e.role), role)
	binding := &rbacv1.ClusterRoleBinding{}
	get(t, "", e.prefixed("manager-rolebinding"), binding)
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: e.namespace()}}
	if binding.RoleRef.Name != role.Name || !cmp.Equal(binding.Subjects, subject) {
		t.Errorf("manager binding %+v -> %s, want %s bound to %+v", binding.Subjects, binding.RoleRef.Name, role.Name, subject)
	}
	user := "system:serviceaccount:" + e.namespace() + ":" + sa
	checks := []authorizationv1.ResourceAttributes{
		{Namespace: e.namespace(), Verb: "update", Group: "coordination.k8s.io", Resource: "leases"},
		{Namespace: e.namespace(), Verb: "create", Group: "coordination.k8s.io", Resource: "leases"},
		{Verb: "create", Group: "authentication.k8s.io", Resource: "tokenreviews"},
		{Verb: "create", Group: "authorization.k8s.io", Resource: "subjectaccessreviews"},
	}
	for _, rule := range role.Rules {
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				for _, v := range rule.Verbs {
					checks = append(checks, authorizationv1.ResourceAttributes{Namespace: "some-namespace", Verb: v, Group: g, Resource: r})
				}
			}
		}
	}
	for _, attrs := range checks {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + e.namespace()}, ResourceAttributes: &attrs}}
		if err := env.Client.Create(context.Background(), sar); err != nil {
			t.Fatal(err)
		}
		if !sar.Status.Allowed {
			t.Errorf("%s may not %s %s.%s in %q: %s", user, attrs.Verb, attrs.Resource, attrs.Group, attrs.Namespace, sar.Status.Reason)
		}
	}
}

// expectWebhooks: the webhook Service selects the manager's pods on its webhook port,
// the Certificate of the self-signed Issuer names that Service and fills the Secret the
// manager mounts for --webhook-cert-path, and every webhook configuration calls the
// Service and carries cert-manager's CA-injection annotation naming the Certificate.
func expectWebhooks(t *testing.T, e example, d *appsv1.Deployment) {
	t.Helper()
	ns := e.namespace()
	svc := &corev1.Service{}
	get(t, ns, e.prefixed("webhook-service"), svc)
	expectSelects(t, "webhook Service", svc.Spec.Selector, d)
	c := d.Spec.Template.Spec.Containers[0]
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.IntValue() != 9443 ||
		!slices.Contains(c.Args, "--webhook-port=9443") {
		t.Errorf("webhook Service ports %+v, manager args %q: want 443 -> --webhook-port=9443", svc.Spec.Ports, c.Args)
	}
	issuer := &certmanagerv1.Issuer{}
	get(t, ns, e.prefixed("selfsigned-issuer"), issuer)
	if issuer.Spec.SelfSigned == nil {
		t.Errorf("Issuer %+v, want self-signed", issuer.Spec)
	}
	cert := &certmanagerv1.Certificate{}
	get(t, ns, e.prefixed("serving-cert"), cert)
	host := svc.Name + "." + ns + ".svc"
	if diff := cmp.Diff([]string{host, host + ".cluster.local"}, cert.Spec.DNSNames); diff != "" {
		t.Errorf("Certificate dnsNames: -want, +got:\n%s", diff)
	}
	if cert.Spec.IssuerRef.Name != issuer.Name || cert.Spec.IssuerRef.Kind != "Issuer" {
		t.Errorf("Certificate issuerRef %+v, want the Issuer %s", cert.Spec.IssuerRef, issuer.Name)
	}
	if !slices.Contains(c.Args, "--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs") {
		t.Errorf("manager args %q: want --webhook-cert-path", c.Args)
	}
	vols := d.Spec.Template.Spec.Volumes
	if len(vols) != 1 || vols[0].Secret == nil || vols[0].Secret.SecretName != cert.Spec.SecretName ||
		len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/tmp/k8s-webhook-server/serving-certs" || c.VolumeMounts[0].Name != vols[0].Name {
		t.Errorf("manager volumes %+v, mounts %+v: want the Secret %s at the webhook cert path", vols, c.VolumeMounts, cert.Spec.SecretName)
	}
	inject := ns + "/" + cert.Name
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	get(t, "", e.prefixed("mutating-webhook-configuration"), mutating)
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	get(t, "", e.prefixed("validating-webhook-configuration"), validating)
	var refs []*admissionregistrationv1.ServiceReference
	for _, w := range mutating.Webhooks {
		refs = append(refs, w.ClientConfig.Service)
	}
	for _, w := range validating.Webhooks {
		refs = append(refs, w.ClientConfig.Service)
	}
	for _, cfg := range []metav1.Object{mutating, validating} {
		if got := cfg.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != inject {
			t.Errorf("%s: cert-manager.io/inject-ca-from %q, want %q", cfg.GetName(), got, inject)
		}
	}
	for _, ref := range refs {
		if ref == nil || ref.Name != svc.Name || ref.Namespace != ns {
			t.Errorf("webhook calls %+v, want the Service %s/%s", ref, ns, svc.Name)
		}
	}
}

// faultyApply: a failed apply of the manager's Deployment stops Apply naming it.
func faultyApply(t *testing.T, e example, objs []*unstructured.Unstructured) {
	t.Helper()
	ordered := deploy.Ordered(objs)
	nth := slices.IndexFunc(ordered, func(o *unstructured.Unstructured) bool { return o.GetKind() == "Deployment" }) + 1
	inj := faults.NewInjector()
	inj.Arm(faults.VerbApply, nth, faults.Internal)
	err := deploy.Apply(t.Context(), inj.Client(env.Client), objs, deploy.ApplyOptions{})
	want := "applying Deployment.apps " + e.namespace() + "/" + e.prefixed("controller-manager")
	if !inj.Fired() || err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Apply with its Deployment's apply failing: %v, want an error naming it (%s)", err, want)
	}
}

// faultyDelete: a failed read and a failed delete stop Delete naming the object.
func faultyDelete(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ordered := deploy.Ordered(objs)
	last := deploy.Describe(ordered[len(ordered)-1]) // Delete starts with it
	inj := faults.NewInjector()
	for verb, want := range map[faults.Verb]string{faults.VerbGet: "reading " + last, faults.VerbDelete: "deleting " + last} {
		inj.Arm(verb, 1, faults.Internal)
		_, err := deploy.Delete(t.Context(), inj.Client(env.Client), objs, deploy.DeleteOptions{})
		if !inj.Fired() || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Delete with a failing %s: %v, want an error naming %s", verb, err, want)
		}
	}
}

// undeploy: someone else's ClusterRole of the name of the shipped metrics reader stays;
// everything deploy applied is deleted and gone.
func undeploy(t *testing.T, e example, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := t.Context()
	reader := &rbacv1.ClusterRole{}
	get(t, "", e.prefixed("metrics-reader"), reader)
	if err := env.Client.Delete(ctx, reader); err != nil {
		t.Fatal(err)
	}
	theirs := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: reader.Name, Labels: map[string]string{"team": "monitoring"}},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if err := env.Client.Create(ctx, theirs, client.FieldOwner("monitoring")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), theirs) })

	// Bounds the wait, not an assertion: on a loaded machine the API server's CRD
	// finalizer can take minutes to remove a CRD made seconds before (it retries with
	// backoff while the kind's storage initializes); Delete's error then says so.
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	report, err := deploy.Delete(wctx, env.Client, objs, deploy.DeleteOptions{Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []deploy.Skipped{{Object: "ClusterRole.rbac.authorization.k8s.io " + reader.Name, Managers: []string{"monitoring/Update"}}}
	if diff := cmp.Diff(want, report.Skipped); diff != "" || len(report.Absent) != 0 || len(report.Deleted) != len(objs)-1 {
		t.Errorf("Delete: skipped -want, +got:\n%s\nabsent %q, %d deleted of %d", diff, report.Absent, len(report.Deleted), len(objs))
	}
	for _, obj := range objs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), live)
		if obj.GetName() == reader.Name {
			if err != nil || live.GetUID() != theirs.UID {
				t.Errorf("someone else's %s after Delete: %v, want it kept", reader.Name, err)
			}
			continue
		}
		if !apierrors.IsNotFound(err) && !isNoMatch(err) {
			t.Errorf("%s after Delete: %v, want it gone", deploy.Describe(obj), err)
		}
	}
}
