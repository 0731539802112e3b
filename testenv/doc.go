// Package testenv is the SDK's test kit: one real kube-apiserver and etcd per test
// package (envtest), with the upstream CRDs of the operators the SDK integrates with,
// a scheme that knows their Go types, a fresh namespace per test and simulators for the
// controllers envtest does not run.
//
// Use it from TestMain, so that the whole package shares one control plane:
//
//	var env *testenv.Env
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Main(m, testenv.Options{}, &env))
//	}
//
//	func TestSomething(t *testing.T) {
//		ns := env.Namespace(t) // created now, deleted when the test ends
//		...
//	}
//
// # Binaries
//
// envtest needs kube-apiserver and etcd. The kit takes them from $KUBEBUILDER_ASSETS
// and, when that is unset, from the cache directory that this repository's
// hack/envtest.sh fills (${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest/<version>).
// When neither holds them, [Start] fails with an error that says how to get them: the
// kit never skips a test because the binaries are missing.
//
// # CRDs
//
// The upstream CRDs (External Secrets Operator, cert-manager, mariadb-operator, Gateway
// API, VerticalPodAutoscaler) are read from the Go module cache at the versions pinned
// in this package ([DefaultCRDs]); `go mod download` fetches them on first use, so the
// kit works from any module that imports the SDK, not only from this repository. Add
// your own operator's CRDs with [Options.CRDPaths].
package testenv
