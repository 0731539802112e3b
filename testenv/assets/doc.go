// Package assets provides the control-plane binaries that package testenv runs:
// kube-apiserver and etcd, plus kubectl and the real-controller binaries
// kube-controller-manager, kube-scheduler and kwok, for the Kubernetes release pinned
// in [KubernetesVersion] (kwok at [KWOKVersion]). It imports only the standard
// library, so the command built on it (github.com/c5c3/reconciler-sdk/cmd/envtest)
// compiles in seconds in any module that requires the SDK:
//
//	export KUBEBUILDER_ASSETS="$(go run github.com/c5c3/reconciler-sdk/cmd/envtest)"
//
// [Ensure] tries these sources in order and returns the first directory that fits:
//
//  1. [Options.Assets] (usually $KUBEBUILDER_ASSETS) when it holds kube-apiserver and
//     etcd ([CoreBinaries]);
//  2. the cache directory [Options.CacheDir], by default
//     ${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest/<version>, when it holds
//     all of [AllBinaries]; a cache lacking any of them is rebuilt;
//  3. setup-envtest ([Options.SetupEnvtest]) when it is on PATH, each call bounded by
//     [Options.SetupEnvtestTimeout] (it needs internet, and ships only
//     kube-apiserver, etcd and kubectl);
//  4. [Build]: a build from the Go module proxy through a throwaway wrapper module
//     requiring k8s.io/kubernetes@v<version> with the staging modules replaced by their
//     published versions, plus kwok, into a temporary directory that is renamed into
//     the cache only when complete.
//
// [Find] is the first three steps alone. [DefaultOptions] reads the environment
// variables hack/envtest.sh has always honoured: ENVTEST_K8S_VERSION,
// KUBEBUILDER_ASSETS, XDG_CACHE_HOME, ENVTEST_SKIP_DOWNLOAD (skip setup-envtest) and
// SETUP_ENVTEST_TIMEOUT (seconds, default 60).
//
// A build needs only the go command and the Go module proxy. Cold (empty module and
// build caches) it takes 15 to 25 minutes on 2 cores; with a warm Go build cache it
// takes only the link.
package assets
