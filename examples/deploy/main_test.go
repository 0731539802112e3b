package deploy_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	horizonv1alpha1 "github.com/c5c3/reconciler-sdk/examples/horizon/api/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	memov1alpha1 "github.com/c5c3/reconciler-sdk/examples/quickstart/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the control plane with the real controllers: Deployments roll out, and the
// namespace controller empties a deleted Namespace so that undeploy can wait for it.
// The examples' CRDs are not installed: the configurations bring them. cert-manager's
// Issuer joins the kit's upstream CRDs (the webhooks' certmanager/ layer has one).
var env *testenv.Env

func TestMain(m *testing.M) {
	crds := append(testenv.DefaultCRDs(), testenv.CRDSource{Module: testenv.CertManagerModule, Version: testenv.CertManagerVersion,
		Files: []string{"deploy/crds/cert-manager.io_issuers.yaml"}})
	os.Exit(testenv.Main(m, testenv.Options{Controllers: true, CRDSources: crds, AddToScheme: []func(*runtime.Scheme) error{
		memov1alpha1.AddToScheme, horizonv1alpha1.AddToScheme, keystonev1alpha1.AddToScheme}}, &env))
}

// isNoMatch: the kind's API is gone (its CRD deleted).
func isNoMatch(err error) bool { return meta.IsNoMatchError(err) }
