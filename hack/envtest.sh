#!/usr/bin/env bash
# envtest.sh prints a directory usable as KUBEBUILDER_ASSETS: it holds kube-apiserver
# and etcd (plus kubectl, kube-controller-manager, kube-scheduler and kwok) for the
# Kubernetes version pinned in testenv/versions.go (KubernetesVersion).
#
# Order of sources:
#   1. an existing $KUBEBUILDER_ASSETS that holds kube-apiserver and etcd;
#   2. the cache directory ${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest/<version>;
#   3. setup-envtest, when it is on PATH (needs internet; bounded by a timeout);
#   4. a build from the Go module proxy: a throwaway wrapper module requiring
#      k8s.io/kubernetes, built into a temp dir and renamed into the cache when complete,
#      so an interrupted build never leaves a broken cache behind.
#
# Progress goes to stderr; stdout carries only the directory. Usage:
#   export KUBEBUILDER_ASSETS="$(hack/envtest.sh)"
set -euo pipefail

# The version comes from testenv/versions.go (KubernetesVersion), the one place it is pinned.
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pinned=$(sed -n 's/^[[:space:]]*KubernetesVersion = "\(.*\)"$/\1/p' "$script_dir/../testenv/versions.go")
ENVTEST_K8S_VERSION="${ENVTEST_K8S_VERSION:-$pinned}"
[ -n "$ENVTEST_K8S_VERSION" ] || { echo "envtest: cannot read KubernetesVersion from testenv/versions.go" >&2; exit 1; }
KWOK_VERSION="v0.8.0"
SETUP_ENVTEST_TIMEOUT="${SETUP_ENVTEST_TIMEOUT:-60}"

log() { printf 'envtest: %s\n' "$*" >&2; }
die() { printf 'envtest: ERROR: %s\n' "$*" >&2; exit 1; }

has_core() { [ -x "$1/kube-apiserver" ] && [ -x "$1/etcd" ]; }
has_all() {
  has_core "$1" && [ -x "$1/kubectl" ] && [ -x "$1/kube-controller-manager" ] &&
    [ -x "$1/kube-scheduler" ] && [ -x "$1/kwok" ]
}
abspath() { (cd "$1" && pwd -P); }

# 1. Existing KUBEBUILDER_ASSETS.
if [ -n "${KUBEBUILDER_ASSETS:-}" ] && has_core "$KUBEBUILDER_ASSETS"; then
  abspath "$KUBEBUILDER_ASSETS"
  exit 0
fi

cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/reconciler-sdk/envtest"
cache_dir="$cache_root/$ENVTEST_K8S_VERSION"

# 2. Cache directory (complete builds only ever appear here, see step 4). A cache from an
#    older version of this script may lack the real-controller binaries: rebuild then.
if has_all "$cache_dir"; then
  abspath "$cache_dir"
  exit 0
fi

# 3. setup-envtest, for machines with internet access.
if [ -z "${ENVTEST_SKIP_DOWNLOAD:-}" ] && command -v setup-envtest >/dev/null 2>&1; then
  log "trying setup-envtest (timeout ${SETUP_ENVTEST_TIMEOUT}s)"
  if dir=$(timeout "$SETUP_ENVTEST_TIMEOUT" setup-envtest use -i "$ENVTEST_K8S_VERSION" \
    --bin-dir "$cache_root/setup-envtest" -p path 2>/dev/null) || \
    dir=$(timeout "$SETUP_ENVTEST_TIMEOUT" setup-envtest use "$ENVTEST_K8S_VERSION" \
      --bin-dir "$cache_root/setup-envtest" -p path 2>/dev/null); then
    if [ -n "$dir" ] && has_core "$dir"; then
      abspath "$dir"
      exit 0
    fi
  fi
  log "setup-envtest could not provide $ENVTEST_K8S_VERSION; building from the Go module proxy"
fi

# 4. Build from the Go module proxy.
command -v go >/dev/null 2>&1 || die "go is not on PATH; cannot build envtest binaries"
mkdir -p "$cache_root"
work=$(mktemp -d "$cache_root/.build-$ENVTEST_K8S_VERSION.XXXXXX")
trap 'rm -rf "$work"' EXIT
mod="$work/mod"
out="$work/bin"
mkdir -p "$mod" "$out"
k8s_mod="k8s.io/kubernetes@v$ENVTEST_K8S_VERSION"
staging_version="v0.${ENVTEST_K8S_VERSION#1.}"

log "building kube-apiserver, etcd, kubectl, kube-controller-manager, kube-scheduler $ENVTEST_K8S_VERSION from the Go module proxy (cold: several minutes)"
export GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0 GOWORK=off
gomod_file=$(go mod download -json "$k8s_mod" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
[ -f "$gomod_file" ] || die "cannot download $k8s_mod from the Go module proxy"

# The staging modules that k8s.io/kubernetes requires at v0.0.0 and redirects to ./staging.
staging=$(awk '/=> \.\/staging\// {print $1}' "$gomod_file" | sort -u)
required=$(awk '$2 == "v0.0.0" {print $1}' "$gomod_file" | sort -u)
replaces=$(comm -12 <(echo "$staging") <(echo "$required"))
[ -n "$replaces" ] || die "found no staging modules in $gomod_file"

(
  cd "$mod"
  go mod init reconciler-sdk.local/envtest-wrapper >/dev/null 2>&1
  go mod edit -go=1.26.0 -require="k8s.io/kubernetes@v$ENVTEST_K8S_VERSION"
  for m in $replaces; do
    go mod edit -replace="$m=$m@$staging_version"
  done
  for t in k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl \
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler \
    go.etcd.io/etcd/server/v3; do
    go mod edit -tool="$t"
  done
  go mod tidy >&2
  minor="${ENVTEST_K8S_VERSION#*.}"; minor="${minor%%.*}"
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=v$ENVTEST_K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    ld="$ld -X $p.gitTreeState=clean"
  done
  go build -trimpath -ldflags "$ld" -o "$out/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl \
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler \
    go.etcd.io/etcd/server/v3 >&2
)
mv "$out/server" "$out/etcd"

log "building kwok $KWOK_VERSION"
GOBIN="$out" go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" >&2

has_all "$out" || die "build finished without all binaries in $out"
"$out/kube-apiserver" --version >&2
# Publish atomically: a concurrent run may have won the race; keep whichever landed first.
if ! mv -T "$out" "$cache_dir" 2>/dev/null; then
  if ! has_all "$cache_dir"; then
    # An incomplete older cache: swap it out for this build.
    stale="$work/stale"
    mv -T "$cache_dir" "$stale" && mv -T "$out" "$cache_dir" ||
      die "could not move the build into $cache_dir"
  fi
fi
abspath "$cache_dir"
