package apply_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	cmv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/c5c3/reconciler-sdk/apply"
)

// newOwner creates a persisted ConfigMap in ns to act as the controlling owner.
func newOwner(t *testing.T, ns string) *corev1.ConfigMap {
	t.Helper()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(context.Background(), owner); err != nil {
		t.Fatalf("create owner: %v", err)
	}
	return owner
}

func desiredConfigMap(ns string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, Labels: map[string]string{"app": "demo"}},
		Data:       map[string]string{"key": "value"},
	}
}

func desiredDeployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app": "demo"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name: "app", Image: "registry.example/app:1",
						VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/tmp"}},
					}},
					// A non-nil pointer to an empty struct carries meaning and must survive.
					Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		},
	}
}

func desiredService(ns string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "demo"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
}

// managedFieldsOf returns the fieldsV1 JSON our field manager owns through Apply.
func managedFieldsOf(t *testing.T, obj client.Object, manager string) map[string]any {
	t.Helper()
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager && mf.Operation == metav1.ManagedFieldsOperationApply {
			var fields map[string]any
			if err := json.Unmarshal(mf.FieldsV1.GetRawBytes(), &fields); err != nil {
				t.Fatalf("parse managedFields: %v", err)
			}
			return fields
		}
	}
	t.Fatalf("no Apply managedFields entry for %q in %+v", manager, obj.GetManagedFields())
	return nil
}

// owns reports whether the fieldsV1 set contains the path, e.g. "f:spec", "f:clusterIP".
func owns(fields map[string]any, path ...string) bool {
	cur := fields
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return false
		}
		cur = next
	}
	return true
}

func TestEnsureObjectConvergedApplyDoesNotWrite(t *testing.T) {
	cases := map[string]func(ns string) client.Object{
		"ConfigMap": func(ns string) client.Object { return desiredConfigMap(ns) },
		"Secret": func(ns string) client.Object {
			return &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
				Type:       corev1.SecretTypeOpaque,
				StringData: nil,
				Data:       map[string][]byte{"password": []byte("s3cr3t")},
			}
		},
		"Service":    func(ns string) client.Object { return desiredService(ns) },
		"Deployment": func(ns string) client.Object { return desiredDeployment(ns) },
		"CronJob": func(ns string) client.Object {
			return &batchv1.CronJob{
				ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
				Spec: batchv1.CronJobSpec{
					Schedule: "*/5 * * * *",
					JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
						Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
							RestartPolicy: corev1.RestartPolicyOnFailure,
							Containers:    []corev1.Container{{Name: "cron", Image: "registry.example/cron:1"}},
						}},
					}},
				},
			}
		},
		"Certificate": func(ns string) client.Object {
			return &cmv1.Certificate{
				ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns},
				Spec: cmv1.CertificateSpec{
					SecretName: "child-tls",
					DNSNames:   []string{"child.example.org"},
					IssuerRef:  cmmeta.IssuerReference{Name: "ca", Kind: "ClusterIssuer"},
				},
			}
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			ns := env.Namespace(t)
			owner := newOwner(t, ns)

			first := build(ns)
			if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, first, apply.FieldManager); err != nil {
				t.Fatalf("first apply: %v", err)
			}
			if first.GetResourceVersion() == "" || first.GetUID() == "" {
				t.Fatalf("response not decoded into object: rv=%q uid=%q", first.GetResourceVersion(), first.GetUID())
			}

			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			// Warm the client's REST mapper so that only the apply itself is counted.
			if err := apply.EnsureObject(ctx, c, env.Scheme, owner, build(ns), apply.FieldManager); err != nil {
				t.Fatalf("warm-up apply: %v", err)
			}
			counter.Reset()
			second := build(ns)
			if err := apply.EnsureObject(ctx, c, env.Scheme, owner, second, apply.FieldManager); err != nil {
				t.Fatalf("second apply: %v", err)
			}
			// An uncached client sends the ownership read and the apply.
			if got, writes := counter.Total(), counter.Writes(); got != 2 || writes != 1 {
				t.Errorf("converged apply sent %d requests (%d writes), want 2: the GET of the existing object and the PATCH", got, writes)
			}
			if second.GetResourceVersion() != first.GetResourceVersion() {
				t.Errorf("converged apply bumped resourceVersion %s -> %s", first.GetResourceVersion(), second.GetResourceVersion())
			}
			stored := build(ns)
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(stored), stored); err != nil {
				t.Fatal(err)
			}
			if stored.GetResourceVersion() != first.GetResourceVersion() {
				t.Errorf("stored resourceVersion %s, want %s", stored.GetResourceVersion(), first.GetResourceVersion())
			}
			fields := managedFieldsOf(t, stored, apply.FieldManager)
			for _, zero := range [][]string{{"f:status"}, {"f:metadata", "f:creationTimestamp"}} {
				if owns(fields, zero...) {
					t.Errorf("field manager owns zero value %v", zero)
				}
			}
		})
	}
}

func TestEnsureObjectDoesNotClaimServerDefaults(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)

	svc := desiredService(ns)
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, svc, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if svc.Spec.ClusterIP == "" {
		t.Fatal("server-assigned clusterIP not decoded into the object")
	}
	fields := managedFieldsOf(t, svc, apply.FieldManager)
	for _, f := range []string{"f:clusterIP", "f:clusterIPs", "f:type", "f:sessionAffinity", "f:ipFamilies"} {
		if owns(fields, "f:spec", f) {
			t.Errorf("field manager claims server-defaulted Service spec.%s", strings.TrimPrefix(f, "f:"))
		}
	}
	if !owns(fields, "f:spec", "f:selector") {
		t.Errorf("field manager does not own spec.selector it set: %v", fields)
	}

	dep := desiredDeployment(ns)
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, dep, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if dep.Spec.RevisionHistoryLimit == nil {
		t.Fatal("server-defaulted revisionHistoryLimit not decoded into the object")
	}
	if dep.Spec.Template.Spec.Volumes[0].EmptyDir == nil {
		t.Fatal("emptyDir volume source was dropped")
	}
	fields = managedFieldsOf(t, dep, apply.FieldManager)
	for _, f := range []string{"f:revisionHistoryLimit", "f:progressDeadlineSeconds", "f:strategy", "f:replicas"} {
		if owns(fields, "f:spec", f) {
			t.Errorf("field manager claims server-defaulted Deployment spec.%s", strings.TrimPrefix(f, "f:"))
		}
	}
	if owns(fields, "f:spec", "f:template", "f:metadata", "f:creationTimestamp") {
		t.Error("field manager claims spec.template.metadata.creationTimestamp")
	}
	if owns(fields, "f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"app"}`, "f:resources") {
		t.Error("field manager claims an empty resources block")
	}
}

func TestEnsureObjectRestoresFieldChangedByAnotherManager(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	drifted := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "child"}, drifted); err != nil {
		t.Fatal(err)
	}
	drifted.Data["key"] = "changed-by-hand"
	if err := env.Client.Update(ctx, drifted, client.FieldOwner("kubectl-edit")); err != nil {
		t.Fatal(err)
	}

	got := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, got, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if got.Data["key"] != "value" {
		t.Errorf("data.key = %q, want the desired %q restored", got.Data["key"], "value")
	}
}

// stripOwnerReferences removes the owner references of the ConfigMap "child" in ns, as
// another client's Update.
func stripOwnerReferences(t *testing.T, ns string) {
	t.Helper()
	stripped := &corev1.ConfigMap{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: "child"}, stripped); err != nil {
		t.Fatal(err)
	}
	stripped.OwnerReferences = nil
	if err := env.Client.Update(context.Background(), stripped, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureObjectReassertsOwnerReference(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	stripOwnerReferences(t, ns)

	got := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, got, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	ref := metav1.GetControllerOf(got)
	if ref == nil || ref.UID != owner.UID || ref.Kind != "ConfigMap" || ref.Name != "owner" {
		t.Fatalf("controller reference = %+v, want the owner ConfigMap %s", ref, owner.UID)
	}
	if ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Error("controller reference does not block owner deletion")
	}
}

func TestEnsureObjectReleasesFieldNoLongerSet(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	withExtra := desiredConfigMap(ns)
	withExtra.Labels["tier"] = "web"
	withExtra.Labels["shared"] = "ours"
	withExtra.Data["extra"] = "x"
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, withExtra, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	// Another applier also sets label "shared": it co-owns it from now on.
	other := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "child", Namespace: ns, Labels: map[string]string{"shared": "ours"}},
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(other)
	if err != nil {
		t.Fatal(err)
	}
	delete(u["metadata"].(map[string]any), "creationTimestamp")
	if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u}),
		client.FieldOwner("other-applier")); err != nil {
		t.Fatal(err)
	}

	got := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, env.Client, env.Scheme, owner, got, apply.FieldManager); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Labels["tier"]; ok {
		t.Errorf("label tier that only we owned is still set: %v", got.Labels)
	}
	if _, ok := got.Data["extra"]; ok {
		t.Errorf("data.extra that only we owned is still set: %v", got.Data)
	}
	if got.Labels["shared"] != "ours" {
		t.Errorf("label shared that another manager co-owns was removed: %v", got.Labels)
	}
	fields := managedFieldsOf(t, got, apply.FieldManager)
	for _, path := range [][]string{{"f:metadata", "f:labels", "f:tier"}, {"f:metadata", "f:labels", "f:shared"}, {"f:data", "f:extra"}} {
		if owns(fields, path...) {
			t.Errorf("field manager still owns %v", path)
		}
	}
}

// conflictClient wraps the environment's client and fails the first n applies with 409.
func conflictClient(t *testing.T, n int, applies *int, fail error) client.Client {
	t.Helper()
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return interceptor.NewClient(base, interceptor.Funcs{
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			*applies++
			if *applies <= n {
				return fail
			}
			return c.Apply(ctx, obj, opts...)
		},
	})
}

func TestEnsureObjectRetriesConflicts(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	applies := 0
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "child", errors.New("the object has been modified"))
	c := conflictClient(t, 2, &applies, conflict)

	got := desiredConfigMap(ns)
	if err := apply.EnsureObject(ctx, c, env.Scheme, owner, got, apply.FieldManager); err != nil {
		t.Fatalf("conflicts were not absorbed: %v", err)
	}
	if applies != 3 {
		t.Errorf("apply attempts = %d, want 3 (two conflicts, then success)", applies)
	}
	if got.Data["key"] != "value" || got.UID == "" {
		t.Errorf("object not applied after retries: %+v", got)
	}
}

func TestEnsureObjectWrapsAPIErrors(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	applies := 0
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "child", errors.New("rbac says no"))
	c := conflictClient(t, 100, &applies, forbidden)

	err := apply.EnsureObject(ctx, c, env.Scheme, owner, desiredConfigMap(ns), apply.FieldManager)
	if err == nil {
		t.Fatal("want an error")
	}
	if !apierrors.IsForbidden(err) {
		t.Errorf("error %v does not unwrap to Forbidden", err)
	}
	if want := "ConfigMap " + ns + "/child"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
	if applies != 1 {
		t.Errorf("a non-conflict error was retried: %d attempts", applies)
	}
}

func TestEnsureObjectRejectsBadInputWithoutWriting(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	owner := newOwner(t, ns)
	otherNS := env.Namespace(t)
	coreOnly := runtime.NewScheme()
	if err := corev1.AddToScheme(coreOnly); err != nil {
		t.Fatal(err)
	}

	cases := map[string]struct {
		owner    client.Object
		obj      client.Object
		scheme   *runtime.Scheme
		noScheme bool
		manager  string
		want     error
		wantMsg  string
	}{
		"nil owner": {
			owner: nil, obj: desiredConfigMap(ns), want: apply.ErrNilOwner,
			wantMsg: "ConfigMap " + ns + "/child",
		},
		"typed nil owner": {
			owner: (*corev1.ConfigMap)(nil), obj: desiredConfigMap(ns), want: apply.ErrNilOwner,
		},
		"nil object": {
			owner: owner, obj: (*corev1.ConfigMap)(nil), want: apply.ErrNilObject,
		},
		"owner never persisted": {
			owner: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ghost", Namespace: ns}},
			obj:   desiredConfigMap(ns), want: apply.ErrOwnerNotPersisted, wantMsg: ns + "/ghost",
		},
		"namespaced owner of a cluster-scoped object": {
			owner: owner, obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "child-" + ns}},
			want: apply.ErrInvalidOwner, wantMsg: "ClusterRole child-" + ns,
		},
		"owner in another namespace": {
			owner: owner, obj: desiredConfigMap(otherNS), want: apply.ErrInvalidOwner,
			wantMsg: "cross-namespace",
		},
		"kind unknown to the scheme": {
			owner: owner, obj: desiredDeployment(ns), scheme: coreOnly, want: apply.ErrUnknownKind,
			wantMsg: ns + "/child",
		},
		"missing name": {
			owner: owner, obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns}},
			want: apply.ErrMissingName, wantMsg: "metadata.name",
		},
		"nil scheme": {
			owner: owner, obj: desiredConfigMap(ns), noScheme: true, want: apply.ErrNilScheme,
			wantMsg: ns + "/child",
		},
		"empty field manager": {
			owner: owner, obj: desiredConfigMap(ns), manager: "-", want: apply.ErrMissingFieldManager,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, counter, err := env.CountingClient()
			if err != nil {
				t.Fatal(err)
			}
			scheme := tc.scheme
			if scheme == nil && !tc.noScheme {
				scheme = env.Scheme
			}
			manager := apply.FieldManager
			if tc.manager == "-" {
				manager = ""
			}
			err = apply.EnsureObject(ctx, c, scheme, tc.owner, tc.obj, manager)
			if !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want errors.Is %v", err, tc.want)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tc.wantMsg)
			}
			if n := counter.Total(); n != 0 {
				t.Errorf("refused input still sent %d API requests", n)
			}
		})
	}
}
