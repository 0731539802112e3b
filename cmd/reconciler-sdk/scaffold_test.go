package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/c5c3/reconciler-sdk/internal/deploy"
	"github.com/c5c3/reconciler-sdk/internal/scaffold"
)

// sdkRoot is the checkout the test runs in: the nearest directory up from the working
// directory whose go.mod declares the SDK's module.
func sdkRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if body, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(body, []byte("module "+scaffold.SDKModule+"\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the working directory", scaffold.SDKModule)
		}
		dir = parent
	}
}

// runIn runs name with args in dir and fails the test with its output when it fails;
// it returns how long it took.
func runIn(t *testing.T, dir, name string, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return time.Since(start)
}

// readTree reads every file below dir but the tools the Makefile installs into bin/.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		body, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(body)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// `reconciler-sdk init` and `create api`, pointed at this checkout, write an operator
// whose tree is complete: generating again changes nothing, go vet is clean and its
// own `make test` (the controller's envtest test on real controllers and the
// conformance suite) passes, with no edit, and without -mod=mod. The module and build
// caches are the machine's; controller-gen is this checkout's bin/ copy when there is
// one.
func TestScaffoldedOperatorPasses(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is unset: run the test through `make test`, or with " +
			"KUBEBUILDER_ASSETS=\"$(go run ./cmd/envtest)\"")
	}
	root := sdkRoot(t)
	t.Setenv("GOWORK", "off")
	if cg := filepath.Join(root, "bin", "controller-gen-"+scaffold.ControllerToolsVersion); fileExists(cg) {
		t.Setenv("CONTROLLER_GEN", cg)
	}
	dir := filepath.Join(t.TempDir(), "memo-operator")

	start := time.Now()
	if code, _, stderr := runCmd(t, "init", "--repo", "example.com/memo-operator", "--sdk-replace", root, dir); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, stderr)
	}
	initTime := time.Since(start)
	start = time.Now()
	code, stdout, stderr := runCmd(t, "create", "api", "--group", "memo", "--version", "v1alpha1", "--kind", "Memo", dir)
	if code != 0 {
		t.Fatalf("create api: exit %d\n%s", code, stderr)
	}
	apiTime := time.Since(start)
	if !strings.Contains(stdout, "controller/memo_controller.go") {
		t.Errorf("create api did not report the controller it wrote:\n%s", stdout)
	}

	scaffolded := readTree(t, dir)
	for _, generated := range []string{"api/v1alpha1/zz_generated.deepcopy.go",
		"config/crd/bases/memo.example.com_memos.yaml", "config/rbac/role.yaml"} {
		if _, ok := scaffolded[generated]; !ok {
			t.Errorf("create api left no %s", generated)
		}
	}
	genTime := runIn(t, dir, "make", "generate")
	for name, body := range readTree(t, dir) {
		// controller-gen may alias an import of the deepcopy file or not, as its build
		// cache goes: the file is compared by go vet and the tests instead.
		if scaffolded[name] != body && !strings.HasPrefix(filepath.Base(name), "zz_generated") {
			t.Errorf("make generate changed %s after create api", name)
		}
	}
	expectDeployable(t, filepath.Join(dir, "config", "default"))
	vetTime := runIn(t, dir, "go", "vet", "./...")
	// go.mod's tool directives keep what the Makefile's image and deploy targets run
	// buildable without -mod=mod.
	toolTime := runIn(t, dir, "go", "run", scaffold.SDKModule+"/cmd/reconciler-sdk", "help")
	testTime := runIn(t, dir, "make", "test")
	t.Logf("init %v, create api %v, make generate %v, go vet %v, go run reconciler-sdk %v, make test %v",
		initTime.Round(time.Second), apiTime.Round(time.Second), genTime.Round(time.Second),
		vetTime.Round(time.Second), toolTime.Round(time.Second), testTime.Round(time.Second))
}

// expectDeployable builds the scaffolded config/default as `make deploy` does and
// checks what it renders: the CRD, the manager in the project's namespace with the
// image given, and the generated ClusterRole bound to the manager's ServiceAccount;
// and config/crd as `make install` does: the CRD alone.
func expectDeployable(t *testing.T, dir string) {
	t.Helper()
	const image = "registry.example/memo-operator:v0.1.0"
	objs, err := deploy.Build(dir, deploy.BuildOptions{Image: image})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		got[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = o
	}
	for _, want := range []string{
		"Namespace /memo-operator-system",
		"CustomResourceDefinition /memos.memo.example.com",
		"ServiceAccount memo-operator-system/memo-operator-controller-manager",
		"ClusterRole /memo-operator-manager-role",
		"ClusterRoleBinding /memo-operator-manager-rolebinding",
		"Role memo-operator-system/memo-operator-leader-election-role",
		"Service memo-operator-system/memo-operator-controller-manager-metrics-service",
		"Deployment memo-operator-system/memo-operator-controller-manager",
	} {
		if got[want] == nil {
			t.Errorf("config/default renders no %s", want)
		}
	}
	if d := got["Deployment memo-operator-system/memo-operator-controller-manager"]; d != nil {
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		if len(containers) != 1 || containers[0].(map[string]any)["image"] != image {
			t.Errorf("the manager's containers %v, want one running %s", containers, image)
		}
	}
	// make install: the CRDs alone.
	crds, err := deploy.Build(filepath.Join(dir, "..", "crd"), deploy.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != 1 || crds[0].GetName() != "memos.memo.example.com" {
		t.Errorf("config/crd renders %d objects, want the CRD memos.memo.example.com", len(crds))
	}
	if b := got["ClusterRoleBinding /memo-operator-manager-rolebinding"]; b != nil {
		if role, _, _ := unstructured.NestedString(b.Object, "roleRef", "name"); role != "memo-operator-manager-role" {
			t.Errorf("the manager's ClusterRoleBinding binds %q, want the generated memo-operator-manager-role", role)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Invalid flags exit 2 with a message naming the flag; refusals to overwrite and a
// missing project exit 1 naming the file; nothing runs go or make before that.
func TestScaffoldErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"init", dir}, 2, "--repo"},
		{[]string{"init", "--repo", "example.com/Memo_Operator", "--sdk-version", "v0.1.0", dir}, 2, "--repo"},
		{[]string{"init", "--repo", "example.com/memo-operator", "--domain", "-bad-", "--sdk-version", "v0.1.0", dir}, 2, "--domain"},
		{[]string{"init", "--repo", "example.com/memo-operator", "--sdk-version", "1.0", dir}, 2, "--sdk-version"},
		{[]string{"init", "--repo", "example.com/memo-operator", "--sdk-replace", dir, dir}, 2, "--sdk-replace"},
		{[]string{"init", "--nope", dir}, 2, "-nope"},
		{[]string{"init", "--repo", "example.com/memo-operator", "--sdk-version", "v0.1.0", dir, "other"}, 2, "at most one directory"},
		{[]string{"create", "api", "--group", "memo", "--version", "v1alpha1", "--kind", "Memo", dir}, 1, filepath.Join(dir, scaffold.ProjectFile)},
	} {
		code, _, stderr := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d naming %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if files := readTree(t, dir); len(files) != 0 {
		t.Errorf("failed commands wrote %d files", len(files))
	}

	// A project's files are never overwritten: init refuses before go mod tidy runs.
	if _, err := scaffold.Init(dir, scaffold.InitOptions{Repo: "example.com/memo-operator", SDKVersion: "v0.1.0"}); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "init", "--repo", "example.com/memo-operator", "--sdk-version", "v0.1.0", dir)
	var exists *scaffold.ExistsError
	if code != 1 || !strings.Contains(stderr, "already exists") || !strings.Contains(stderr, dir) {
		t.Errorf("init over a project: exit %d, stderr %q; want exit 1 naming the file", code, stderr)
	}
	_, err := scaffold.Init(dir, scaffold.InitOptions{Repo: "example.com/memo-operator", SDKVersion: "v0.1.0"})
	if !errors.As(err, &exists) {
		t.Errorf("Init over a project: %v, want an *ExistsError", err)
	}
	for flag, args := range map[string][]string{
		"--group":   {"create", "api", "--group", "Memo", "--version", "v1alpha1", "--kind", "Memo", dir},
		"--version": {"create", "api", "--group", "memo", "--version", "1", "--kind", "Memo", dir},
		"--kind":    {"create", "api", "--group", "memo", "--version", "v1alpha1", "--kind", "memo", dir},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != 2 || !strings.Contains(stderr, flag) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 naming %s", args, code, stderr, flag)
		}
	}
}

// -h prints the usage of the subcommand and succeeds.
func TestScaffoldHelp(t *testing.T) {
	for _, args := range [][]string{{"init", "-h"}, {"create", "api", "-h"}} {
		code, _, stderr := runCmd(t, args...)
		if code != 0 || !strings.Contains(stderr, "Usage: reconciler-sdk "+strings.Join(args[:len(args)-1], " ")) {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
}
