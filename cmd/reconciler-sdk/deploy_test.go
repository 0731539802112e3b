package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/reconciler-sdk/internal/deploy"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// quickstartConfig is the quick-start operator's config/default, the directory the
// deploy tests deploy.
const quickstartConfig = "../../examples/quickstart/config/default"

// startEnv starts a control plane for one test (no TestMain: the package's other tests
// need none) and writes its admin kubeconfig to a file.
func startEnv(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	})
	kubeconfig, err := env.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return env, path
}

// runCmd runs the command line args through the dispatcher and returns its exit code
// and output.
func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// deploy applies the quick-start operator's config/default with -img, prints each
// object, and is idempotent; undeploy deletes exactly those objects (the Namespace
// last), leaves a ClusterRole of the same name someone else made, and says so.
func TestDeployUndeploy(t *testing.T) {
	env, kubeconfig := startEnv(t)
	ctx := context.Background()
	const img = "registry.example/memo-operator:v1"
	for range 2 {
		code, out, errOut := runCmd(t, "deploy", "-kubeconfig", kubeconfig, "-img", img, quickstartConfig)
		if code != 0 {
			t.Fatalf("deploy: exit %d: %s", code, errOut)
		}
		if !strings.Contains(out, "applied Deployment.apps quickstart-system/quickstart-controller-manager\n") ||
			!strings.HasPrefix(out, "applied Namespace quickstart-system\n") {
			t.Errorf("deploy printed:\n%s\nwant the Namespace first and the Deployment", out)
		}
	}
	d := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "quickstart-system", Name: "quickstart-controller-manager"}, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != img {
		t.Errorf("manager image = %q, want %q", got, img)
	}

	// Someone else's ClusterRole of the name the config's metrics reader has: undeploy
	// must leave it (the test deletes the deployed one and makes its own).
	reader := client.ObjectKey{Name: "quickstart-metrics-reader"}
	if err := env.Client.Delete(ctx, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: reader.Name}}); err != nil {
		t.Fatal(err)
	}
	theirs := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: reader.Name, Labels: map[string]string{"team": "someone-else"}}}
	if err := env.Client.Create(ctx, theirs, client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}

	code, out, errOut := runCmd(t, "undeploy", "-kubeconfig", kubeconfig, quickstartConfig)
	if code != 0 {
		t.Fatalf("undeploy: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "skipped ClusterRole.rbac.authorization.k8s.io quickstart-metrics-reader (managed by someone-else/Update): not applied by "+deploy.FieldManager) {
		t.Errorf("undeploy printed:\n%s\nwant the foreign ClusterRole skipped", out)
	}
	if !strings.Contains(out, "deleted Namespace quickstart-system\n") || !strings.HasSuffix(strings.Split(out, "skipped")[0], "deleted Namespace quickstart-system\n") {
		t.Errorf("undeploy printed:\n%s\nwant the Namespace deleted last", out)
	}
	err := env.Client.Get(ctx, client.ObjectKey{Namespace: "quickstart-system", Name: "quickstart-controller-manager"}, &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Deployment after undeploy: %v, want NotFound", err)
	}
	if err := env.Client.Get(ctx, reader, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}}); err != nil {
		t.Errorf("someone else's ClusterRole after undeploy: %v, want it kept", err)
	}
}

// Without a directory, or with two, deploy and undeploy are usage errors (exit 2).
func TestDeployUsage(t *testing.T) {
	for _, args := range [][]string{{"deploy"}, {"undeploy"}, {"deploy", "a", "b"}, {"deploy", "-no-such-flag", "a"}} {
		if code, _, _ := runCmd(t, args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	code, _, errOut := runCmd(t, "deploy", "-img", "registry.example/x:v1", "testdata-none")
	if code != 1 || !strings.Contains(errOut, "testdata-none") {
		t.Errorf("deploy of a missing directory: exit %d, %s; want 1 naming it", code, errOut)
	}
}
