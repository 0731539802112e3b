#!/usr/bin/env bash
# envtest.sh prints a directory usable as KUBEBUILDER_ASSETS: it holds kube-apiserver
# and etcd (plus kubectl, kube-controller-manager, kube-scheduler and kwok) for the
# Kubernetes version pinned in testenv/assets/versions.go (KubernetesVersion).
#
# It runs this checkout's cmd/envtest (go run ./cmd/envtest from the repository root),
# which other modules run as `go run github.com/c5c3/reconciler-sdk/cmd/envtest`; its
# flags pass through (-kubernetes-version, -kwok-version, -cache-dir, -no-download,
# -no-build), and so do the environment variables it reads: KUBEBUILDER_ASSETS,
# XDG_CACHE_HOME, ENVTEST_K8S_VERSION, ENVTEST_SKIP_DOWNLOAD, SETUP_ENVTEST_TIMEOUT.
#
# Order of sources:
#   1. an existing $KUBEBUILDER_ASSETS that holds kube-apiserver and etcd;
#   2. the cache directory ${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest/<version>,
#      when it holds all six binaries;
#   3. setup-envtest, when it is on PATH (needs internet; bounded by a timeout);
#   4. a build from the Go module proxy: a throwaway wrapper module requiring
#      k8s.io/kubernetes, plus kwok, built into a temp dir and renamed into the cache
#      when complete, so an interrupted build never leaves a broken cache behind.
#
# Progress goes to stderr; stdout carries only the directory. Usage:
#   export KUBEBUILDER_ASSETS="$(hack/envtest.sh)"
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec go run ./cmd/envtest "$@"
