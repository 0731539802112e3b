// Command envtest prints a directory usable as KUBEBUILDER_ASSETS: it holds
// kube-apiserver and etcd, plus kubectl, kube-controller-manager, kube-scheduler and
// kwok, for the Kubernetes release the test kit pins (package
// github.com/c5c3/reconciler-sdk/testenv/assets). Run it from any module that
// requires the SDK, so the version matches the SDK in go.mod:
//
//	export KUBEBUILDER_ASSETS="$(go run github.com/c5c3/reconciler-sdk/cmd/envtest)"
//
// It uses, in order: an existing $KUBEBUILDER_ASSETS holding kube-apiserver and etcd;
// the cache ${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest/<version> when it
// holds all six binaries; setup-envtest when it is on PATH (bounded by a timeout);
// and otherwise a build from the Go module proxy (several minutes cold, only the link
// with a warm Go build cache), published into the cache only when complete.
//
// Stdout carries only the directory; progress and the build's output go to stderr.
// On failure it prints the reason to stderr and exits with status 1.
//
// Flags:
//
//	-kubernetes-version  the Kubernetes release, e.g. 1.37.2 (default $ENVTEST_K8S_VERSION, else the pinned one)
//	-kwok-version        the kwok release to install (default the pinned one)
//	-cache-dir           the cache root holding one directory per version
//	                     (default ${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest)
//	-no-download         do not try setup-envtest (also $ENVTEST_SKIP_DOWNLOAD)
//	-no-build            fail instead of building when no other source has the binaries
//
// Environment: KUBEBUILDER_ASSETS, XDG_CACHE_HOME, ENVTEST_K8S_VERSION,
// ENVTEST_SKIP_DOWNLOAD and SETUP_ENVTEST_TIMEOUT (seconds per setup-envtest call,
// default 60).
package main
