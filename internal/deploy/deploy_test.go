package deploy_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/apply"
	"github.com/c5c3/reconciler-sdk/internal/deploy"
	"github.com/c5c3/reconciler-sdk/testenv"
	"github.com/c5c3/reconciler-sdk/testenv/faults"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDSources: []testenv.CRDSource{}}, &env))
}

const appDir = "testdata/app"

// containers returns the Deployment's containers by name: image and, for the manager,
// its MANAGER_IMAGE.
func containers(t *testing.T, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			continue
		}
		d := &appsv1.Deployment{}
		if err := env.Scheme.Convert(obj, d, nil); err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			out[c.Name] = c.Image
			for _, e := range c.Env {
				out[c.Name+" "+e.Name] = e.Value
			}
		}
	}
	return out
}

// Build sets the placeholder image wherever kustomize's images transformer does, in
// memory: the kustomization's replacement copies the image given (not the placeholder)
// into MANAGER_IMAGE, its own images entries still apply, and the file on disk is not
// changed. Without an image the placeholder stays.
func TestBuild(t *testing.T) {
	before, err := os.ReadFile(appDir + "/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string]map[string]string{
		"registry.example/app/manager:v1.2.3": {"manager": "registry.example/app/manager:v1.2.3",
			"manager MANAGER_IMAGE": "registry.example/app/manager:v1.2.3", "sidecar": "registry.example/sidecar:v2"},
		"localhost:5000/manager": {"manager": "localhost:5000/manager:latest",
			"manager MANAGER_IMAGE": "localhost:5000/manager:latest", "sidecar": "registry.example/sidecar:v2"},
		"registry.example/manager@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": {
			"manager":               "registry.example/manager@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			"manager MANAGER_IMAGE": "registry.example/manager@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			"sidecar":               "registry.example/sidecar:v2"},
		"": {"manager": deploy.PlaceholderImage, "manager MANAGER_IMAGE": deploy.PlaceholderImage, "sidecar": "registry.example/sidecar:v2"},
	} {
		objs, err := deploy.Build(appDir, deploy.BuildOptions{Image: image})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, containers(t, objs)); diff != "" {
			t.Errorf("Build with image %q: -want, +got:\n%s", image, diff)
		}
	}
	after, err := os.ReadFile(appDir + "/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("Build changed the kustomization on disk")
	}
}

// Build refuses an image it cannot split, a directory that does not exist and one
// without a kustomization, each error naming what is wrong.
func TestBuildErrors(t *testing.T) {
	for _, image := range []string{"registry.example/manager:", "registry.example/manager@", ":v1", "a b"} {
		if _, err := deploy.Build(appDir, deploy.BuildOptions{Image: image}); !errors.Is(err, deploy.ErrInvalidImage) ||
			!strings.Contains(err.Error(), fmt.Sprintf("%q", image)) {
			t.Errorf("Build with image %q: %v, want ErrInvalidImage naming it", image, err)
		}
	}
	for _, opts := range []deploy.BuildOptions{{}, {Image: "registry.example/manager:v1"}} {
		for _, dir := range []string{"testdata/missing", "testdata/nokustomization"} {
			if _, err := deploy.Build(dir, opts); err == nil || !strings.Contains(err.Error(), dir) {
				t.Errorf("Build(%s, %+v) = %v, want an error naming the directory", dir, opts, err)
			}
		}
	}
}

var isolation atomic.Int32

// build returns the testdata objects with a namespace and an API group of the test's
// own (the control plane is shared and a deleted Namespace stays Terminating).
func build(t *testing.T) ([]*unstructured.Unstructured, string) {
	t.Helper()
	objs, err := deploy.Build(appDir, deploy.BuildOptions{Image: "registry.example/app/manager:v1"})
	if err != nil {
		t.Fatal(err)
	}
	n := isolation.Add(1)
	ns, group := fmt.Sprintf("app-%d", n), fmt.Sprintf("t%d.deploy.test.c5c3.io", n)
	for _, obj := range objs {
		switch {
		case obj.GetKind() == "Namespace":
			obj.SetName(ns)
		case obj.GetKind() == "CustomResourceDefinition":
			obj.SetName("widgets." + group)
			if err := unstructured.SetNestedField(obj.Object, group, "spec", "group"); err != nil {
				t.Fatal(err)
			}
		case obj.GetKind() == "Widget":
			obj.SetAPIVersion(group + "/v1")
		}
		if obj.GetNamespace() != "" {
			obj.SetNamespace(ns)
		}
	}
	return objs, ns
}

// live reads obj from the API server (nil when it does not exist).
func live(t *testing.T, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(obj.GroupVersionKind())
	err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %s: %v", deploy.Describe(obj), err)
	}
	return got
}

// Apply makes every object (the custom resource once its CRD is Established), under
// deploy.FieldManager; applying again changes nothing: every resourceVersion and
// managedFields entry stays.
func TestApply(t *testing.T) {
	objs, _ := build(t)
	if err := deploy.Apply(t.Context(), env.Client, objs, deploy.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	first := map[string]string{}
	for _, obj := range objs {
		got := live(t, obj)
		if got == nil {
			t.Fatalf("%s missing after Apply", deploy.Describe(obj))
		}
		if !apply.AppliedBy(got, deploy.FieldManager) {
			t.Errorf("%s: field managers %v, want an Apply of %s", deploy.Describe(obj), testenv.FieldManagers(got), deploy.FieldManager)
		}
		first[deploy.Describe(obj)] = got.GetResourceVersion() + fmt.Sprint(testenv.FieldManagers(got))
	}
	if err := deploy.Apply(t.Context(), env.Client, objs, deploy.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		got := live(t, obj)
		if now := got.GetResourceVersion() + fmt.Sprint(testenv.FieldManagers(got)); now != first[deploy.Describe(obj)] {
			t.Errorf("%s changed by the second Apply: %s, then %s", deploy.Describe(obj), first[deploy.Describe(obj)], now)
		}
	}
}

// A field another manager took over is a conflict naming the object and the other
// manager; ForceConflicts takes it back.
func TestApplyConflict(t *testing.T) {
	objs, ns := build(t)
	if err := deploy.Apply(t.Context(), env.Client, objs, deploy.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	theirs := &unstructured.Unstructured{}
	theirs.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	theirs.SetNamespace(ns)
	theirs.SetName("app-settings")
	theirs.Object["data"] = map[string]any{"level": "debug"}
	if err := env.Client.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(theirs), client.FieldOwner("someone-else"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	err := deploy.Apply(t.Context(), env.Client, objs, deploy.ApplyOptions{})
	if !errors.Is(err, deploy.ErrConflict) || !strings.Contains(err.Error(), "ConfigMap "+ns+"/app-settings") ||
		!strings.Contains(err.Error(), "someone-else") || !strings.Contains(err.Error(), deploy.FieldManager) {
		t.Fatalf("Apply over someone else's field = %v, want ErrConflict naming the ConfigMap and both field managers", err)
	}
	if err := deploy.Apply(t.Context(), env.Client, objs, deploy.ApplyOptions{ForceConflicts: true}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "app-settings"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["level"] != "info" {
		t.Errorf("level = %q after ForceConflicts, want the config's info", cm.Data["level"])
	}
}

// Delete deletes what Apply applied, in reverse order, and leaves (and reports) an
// object of the same name someone else made; a second Delete finds nothing of its own.
// With Wait it returns once the deleted objects are gone.
func TestDelete(t *testing.T) {
	objs, ns := build(t)
	if err := deploy.Apply(t.Context(), env.Client, objs, deploy.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name = ns, "app-settings"
	if err := env.Client.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	cm = &corev1.ConfigMap{Data: map[string]string{"theirs": "yes"}}
	cm.Namespace, cm.Name = ns, "app-settings"
	if err := env.Client.Create(t.Context(), cm, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	var withoutNS []*unstructured.Unstructured // a Namespace stays Terminating without a namespace controller
	for _, obj := range objs {
		if obj.GetKind() != "Namespace" {
			withoutNS = append(withoutNS, obj)
		}
	}
	report, err := deploy.Delete(t.Context(), env.Client, withoutNS, deploy.DeleteOptions{Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	want := deploy.DeleteReport{
		Deleted: []string{"Deployment.apps " + ns + "/app-manager", findDescribe(withoutNS, "Widget"), findDescribe(withoutNS, "CustomResourceDefinition")},
		Skipped: []deploy.Skipped{{Object: "ConfigMap " + ns + "/app-settings", Managers: []string{"someone-else/Update"}}},
	}
	if diff := cmp.Diff(want, report); diff != "" {
		t.Errorf("Delete: -want, +got:\n%s", diff)
	}
	for _, obj := range withoutNS {
		if got := live(t, obj); (got != nil) != (obj.GetKind() == "ConfigMap") {
			t.Errorf("%s after Delete: exists %v", deploy.Describe(obj), got != nil)
		}
	}
	if live(t, objs[0]) == nil {
		t.Error("the Namespace was not given to Delete but is gone")
	}
	report, err = deploy.Delete(t.Context(), env.Client, objs, deploy.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Deleted) != 1 || report.Deleted[0] != "Namespace "+ns || len(report.Skipped) != 1 || len(report.Absent) != 3 {
		t.Errorf("second Delete: %+v, want only the Namespace deleted, the ConfigMap skipped, the rest absent", report)
	}
}

// A Wait that ends before an object is gone names the object and what holds it: its
// finalizers (a Namespace's spec.finalizers, which only a namespace controller clears,
// and this control plane has none).
func TestDeleteWaitNamesWhatHoldsIt(t *testing.T) {
	objs, ns := build(t)
	if err := deploy.Apply(t.Context(), env.Client, objs, deploy.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "app-settings"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Finalizers = append(cm.Finalizers, "example.com/hold")
	if err := env.Client.Update(t.Context(), cm, client.FieldOwner("holder")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(cm), cm); err == nil {
			cm.Finalizers = nil
			_ = env.Client.Update(context.Background(), cm)
		}
	})
	for i, want := range []string{
		"deploy: waiting for ConfigMap " + ns + "/app-settings to be gone (finalizers example.com/hold): context deadline exceeded",
		"deploy: waiting for Namespace " + ns + " to be gone (finalizers kubernetes): context deadline exceeded",
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second) // ends the wait; the object stays regardless
		_, err := deploy.Delete(ctx, env.Client, objs, deploy.DeleteOptions{Wait: true, PollInterval: 100 * time.Millisecond})
		cancel()
		if err == nil || err.Error() != want {
			t.Errorf("Delete with Wait: %v, want %s", err, want)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Delete with Wait: %v, want it to wrap context.DeadlineExceeded", err)
		}
		if i == 0 { // the ConfigMap goes; the Namespace holds the second Delete
			get := env.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), cm)
			cm.Finalizers = nil
			if err := errors.Join(get, env.Client.Update(t.Context(), cm)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// findDescribe names the object of kind in objs.
func findDescribe(objs []*unstructured.Unstructured, kind string) string {
	i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == kind })
	return deploy.Describe(objs[i])
}

// A failed call of each verb Apply and Delete make stops them with an error naming the
// object it was for.
func TestFaults(t *testing.T) {
	objs, ns := build(t)
	inj := faults.NewInjector()
	c := inj.Client(env.Client)
	crd := findDescribe(objs, "CustomResourceDefinition")
	type fault struct {
		verb faults.Verb
		run  func() error
		want string
	}
	apply := func() error { return deploy.Apply(t.Context(), c, objs, deploy.ApplyOptions{}) }
	del := func() error {
		_, err := deploy.Delete(t.Context(), c, objs, deploy.DeleteOptions{})
		return err
	}
	check := func(cases []fault) {
		for _, tc := range cases {
			inj.Arm(tc.verb, 1, faults.Internal)
			err := tc.run()
			if !errors.Is(err, faults.ErrInjected) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s failing: %v, want the injected fault, %q", tc.verb, err, tc.want)
			}
		}
		inj.Disarm()
	}
	check([]fault{{faults.VerbApply, apply, "applying Namespace " + ns}, {faults.VerbGet, apply, "waiting for " + crd}})
	if err := apply(); err != nil {
		t.Fatal(err)
	}
	check([]fault{{faults.VerbGet, del, "reading Deployment.apps " + ns + "/app-manager"},
		{faults.VerbDelete, del, "deleting Deployment.apps " + ns + "/app-manager"}})
}
