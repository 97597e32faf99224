#!/usr/bin/env bash
# Builds the local control plane from the Go module proxy, at pinned versions:
# kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from
# k8s.io/kubernetes, etcd from go.etcd.io/etcd, kwok from sigs.k8s.io/kwok.
#
# Binaries land in a cache folder keyed by the versions, so a rebuild happens
# only when a pin changes. Prints the folder on stdout (last line).
#
#   KINGLET_K8S_VERSION the Kubernetes version: vX.Y.Z, "newest" (default) or "oldest"
#   KINGLET_DATASTORE   etcd (default) or kine: kine is built too (CGO, SQLite)
#   KINGLET_CACHE_DIR   where to cache (default: ${XDG_CACHE_HOME:-~/.cache}/kinglet)
#   KUBEBUILDER_ASSETS  a folder with prebuilt binaries: used as is, nothing built
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
case "${KINGLET_K8S_VERSION:-newest}" in
  newest) ;;
  oldest) KUBERNETES_VERSION=$KUBERNETES_VERSION_OLDEST ;;
  v1.*.*) KUBERNETES_VERSION=$KINGLET_K8S_VERSION ;;
  *)
    echo "KINGLET_K8S_VERSION=$KINGLET_K8S_VERSION is not a version: use vX.Y.Z (e.g. $KUBERNETES_VERSION_OLDEST), \"newest\" or \"oldest\"" >&2
    exit 2
    ;;
esac

required=(kube-apiserver kube-controller-manager kube-scheduler etcd etcdctl kwok)
case "${KINGLET_DATASTORE:-etcd}" in
  etcd) ;;
  kine) required+=(kine) ;;
  *)
    echo "KINGLET_DATASTORE=$KINGLET_DATASTORE is not a datastore: use etcd (the default) or kine" >&2
    exit 2
    ;;
esac

if [ -n "${KUBEBUILDER_ASSETS:-}" ]; then
  for b in "${required[@]}"; do
    if [ ! -x "$KUBEBUILDER_ASSETS/$b" ]; then
      echo "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no executable '$b'; unset it to build from source, or add the binary" >&2
      exit 1
    fi
  done
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

command -v go >/dev/null || {
  echo "Go is needed to build the local control plane (or set KUBEBUILDER_ASSETS to prebuilt binaries)" >&2
  exit 1
}

cache=${KINGLET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kinglet}
out="$cache/control-plane/k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION"
bin="$out/bin"

complete() {
  for b in "${required[@]}" kubectl; do [ -x "$bin/$b" ] || return 1; done
}
if complete; then
  echo "$bin"
  exit 0
fi

mkdir -p "$bin" "$out/src"
export GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
ldflags="-s -w"
log() { echo "[build-control-plane] $*" >&2; }
start=$(date +%s)

# Kubernetes: a module that requires k8s.io/kubernetes and points each staging
# module at its published v0.<minor>.<patch>, read from that release's go.mod.
build_kubernetes() {
  local dir="$out/src/kubernetes" staging=v0.${KUBERNETES_VERSION#v1.}
  mkdir -p "$dir"
  (
    cd "$dir"
    rm -f go.mod go.sum
    go mod init kinglet.local/control-plane >/dev/null 2>&1
    local mod
    mod=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    go mod edit -require "k8s.io/kubernetes@$KUBERNETES_VERSION"
    grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$mod" | awk '{print $1}' | while read -r m; do
      go mod edit -replace "$m=$m@$staging"
    done
    cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
    go mod tidy -e >&2 2>/dev/null || true
    local v="k8s.io/component-base/version"
    local kl="$ldflags -X $v.gitVersion=$KUBERNETES_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2) -X $v.gitTreeState=clean"
    for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
      log "building $c $KUBERNETES_VERSION"
      go build -trimpath -ldflags "$kl" -o "$bin/$c.tmp" "k8s.io/kubernetes/cmd/$c"
      mv "$bin/$c.tmp" "$bin/$c"
    done
  )
}

build_etcd() {
  local dir="$out/src/etcd"
  mkdir -p "$dir"
  (
    cd "$dir"
    rm -f go.mod go.sum
    go mod init kinglet.local/etcd >/dev/null 2>&1
    go mod edit -require "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    go mod edit -require "go.etcd.io/etcd/etcdctl/v3@$ETCD_VERSION"
    printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "go.etcd.io/etcd/etcdctl/v3"\n\t_ "go.etcd.io/etcd/server/v3"\n)\n' > tools.go
    go mod tidy -e >&2 2>/dev/null || true
    log "building etcd and etcdctl $ETCD_VERSION"
    go build -trimpath -ldflags "$ldflags" -o "$bin/etcd.tmp" go.etcd.io/etcd/server/v3
    go build -trimpath -ldflags "$ldflags" -o "$bin/etcdctl.tmp" go.etcd.io/etcd/etcdctl/v3
    mv "$bin/etcd.tmp" "$bin/etcd"
    mv "$bin/etcdctl.tmp" "$bin/etcdctl"
  )
}

# kine, k3s's etcd shim: SQLite needs cgo (and a C compiler).
build_kine() {
  local dir="$out/src/kine"
  mkdir -p "$dir"
  (
    cd "$dir"
    rm -f go.mod go.sum
    go mod init kinglet.local/kine >/dev/null 2>&1
    go mod edit -require "github.com/k3s-io/kine@$KINE_VERSION"
    printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/k3s-io/kine"\n' > tools.go
    go mod tidy -e >&2 2>/dev/null || true
    log "building kine $KINE_VERSION"
    CGO_ENABLED=1 go build -trimpath -ldflags "$ldflags" -o "$bin/kine.tmp" github.com/k3s-io/kine
    mv "$bin/kine.tmp" "$bin/kine"
  )
}

build_kwok() {
  log "building kwok $KWOK_VERSION"
  GOBIN="$bin" go install -trimpath -ldflags "$ldflags" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
}

{ [ -x "$bin/etcd" ] && [ -x "$bin/etcdctl" ]; } || build_etcd
if [ "${KINGLET_DATASTORE:-etcd}" = kine ] && [ ! -x "$bin/kine" ]; then build_kine; fi
[ -x "$bin/kwok" ] || build_kwok
complete || build_kubernetes
log "done in $(($(date +%s) - start)) s: $bin"
echo "$bin"
