package reconcilersdk_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreStaysLight enforces DESIGN principle 1: the core packages import none of the
// External Secrets, cert-manager, MariaDB, Gateway API, VPA or multicluster APIs, so an
// operator that uses only the core does not pull them in.
func TestCoreStaysLight(t *testing.T) {
	forbidden := []string{
		"github.com/external-secrets/",
		"github.com/c5c3/reconciler-sdk/secrets",
		"github.com/cert-manager/",
		"github.com/mariadb-operator/",
		"sigs.k8s.io/gateway-api",
		"k8s.io/autoscaler/",
		"sigs.k8s.io/multicluster-runtime",
		"github.com/c5c3/reconciler-sdk/multicluster",
	}
	for _, pkg := range []string{"./apply/...", "./config/...", "./reconcile/...", "./policy/..."} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s imports %s", pkg, dep)
				}
			}
		}
	}
}

// TestSingleClusterBootstrapStaysSingle: package operator, the bootstrap of a
// single-cluster operator, imports neither multicluster-runtime nor package
// multicluster (which builds on it, not the other way round).
func TestSingleClusterBootstrapStaysSingle(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./operator/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./operator/...: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range []string{"sigs.k8s.io/multicluster-runtime", "github.com/c5c3/reconciler-sdk/multicluster"} {
			if strings.HasPrefix(dep, f) {
				t.Errorf("./operator/... imports %s", dep)
			}
		}
	}
}

// The example operators are what operator authors copy: they build only on the SDK's
// exported packages, never on an internal/ package of the SDK (which an author's module
// could not import) nor on each other.
func TestExamplesUseOnlyExportedPackages(t *testing.T) {
	const module = "github.com/c5c3/reconciler-sdk/"
	for _, example := range []string{"quickstart", "horizon", "keystone"} {
		pkg := "./examples/" + example + "/..."
		out, err := exec.Command("go", "list", "-deps", "-test", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps -test %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if !strings.HasPrefix(dep, module) {
				continue
			}
			if strings.Contains(dep, "/internal/") || strings.HasSuffix(dep, "/internal") {
				t.Errorf("examples/%s depends on the SDK's internal package %s", example, dep)
			}
			if strings.HasPrefix(dep, module+"examples/") && !strings.HasPrefix(dep, module+"examples/"+example) {
				t.Errorf("examples/%s depends on another example: %s", example, dep)
			}
		}
	}
}
