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
