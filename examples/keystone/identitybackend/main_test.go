// The package's tests run the KeystoneIdentityBackend controller and the
// IdentityBackends row on envtest, against the keystonetest stand-in of the Keystone API.
package identitybackend_test

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/reconciler-sdk/examples/keystone/api/v1alpha1"
	"github.com/c5c3/reconciler-sdk/testenv"
)

// env is the management cluster: kube-apiserver and etcd with the Keystone CRDs. No
// controller runs: the tests create the Deployment and mark its rollout themselves.
var env *testenv.Env

// logs records every log line of the operators the tests run, up to verbosity 7, so
// that a test can prove no secret reached a log. (From 8 on client-go dumps every
// response body, Secrets included: a level no operator runs at.)
var logs struct {
	sync.Mutex
	strings.Builder
}

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{AddToScheme: []func(*runtime.Scheme) error{v1alpha1.AddToScheme},
		CRDSources: []testenv.CRDSource{}, CRDPaths: []string{"../config/crd/bases"}, Logger: recordingLogger()}, &env))
}

func recordingLogger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		logs.Lock()
		defer logs.Unlock()
		logs.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 7})
}

// loggedSecret returns the first of secrets that appears in the recorded logs, or "".
func loggedSecret(secrets ...string) string {
	logs.Lock()
	defer logs.Unlock()
	text := logs.String()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			return s
		}
	}
	return ""
}

func dumpLogsWith(s string) string {
	logs.Lock()
	defer logs.Unlock()
	var out []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
