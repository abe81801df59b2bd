#!/usr/bin/env bash
# Builds kube-apiserver, kubectl, etcd and helm from the Go module proxy into a
# cache directory keyed by the Go version and every input of this script, then
# prints that directory on stdout (progress goes to stderr). Idempotent: when the
# cache is complete it only prints the directory.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

K8S_VERSION=$(cd "$HERE/kube" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
HELM_VERSION=$(cd "$HERE/helm" && go list -m -f '{{.Version}}' helm.sh/helm/v3)

key=$( { go version; cat "$HERE"/build-k8s-bins.sh "$HERE"/*/go.mod "$HERE"/*/go.sum "$HERE"/etcd/main.go; } | sha256sum | cut -c1-16)
CACHE_ROOT=${K8S_BINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clusterset-agent/k8s-bins}
OUT=$CACHE_ROOT/$key
BINS=(kube-apiserver kubectl etcd helm)

complete() { for b in "${BINS[@]}"; do [ -x "$OUT/$b" ] || return 1; done; }
if complete; then echo "$OUT"; exit 0; fi

# One build at a time: a second caller waits for the first instead of racing it.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.lock"
flock 9
if complete; then echo "$OUT"; exit 0; fi

TMP=$(mktemp -d "$OUT.tmp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
log() { printf '[k8s-bins %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
start=$SECONDS
log "cache empty for key $key; building Kubernetes $K8S_VERSION, etcd, helm $HELM_VERSION (cold build takes a while on 2 cores)"

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
build() { # build DIR OUTPUT PACKAGE [go build flags...]
  local dir=$1 out=$2 pkg=$3; shift 3
  log "building $out ($pkg)"
  ( cd "$HERE/$dir" && go build -trimpath "$@" -o "$TMP/$out" "$pkg" )
  log "built $out after $((SECONDS - start)) s"
}
build etcd etcd . -ldflags "-s -w"
build kube kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver -tags selinux,notest,grpcnotrace -ldflags "$ld"
build kube kubectl k8s.io/kubernetes/cmd/kubectl -tags selinux,notest,grpcnotrace -ldflags "$ld"
cg=$(cd "$HERE/helm" && go list -m -f '{{.Version}}' k8s.io/client-go); cgminor=${cg#v0.}; cgminor=${cgminor%%.*}
hl="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
for p in helm.sh/helm/v3/pkg/chartutil helm.sh/helm/v3/pkg/lint/rules; do
  hl+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$cgminor"
done
build helm helm helm.sh/helm/v3/cmd/helm -ldflags "$hl"

rm -rf "$OUT"; mv "$TMP" "$OUT"; trap - EXIT
log "done in $((SECONDS - start)) s: $OUT"
echo "$OUT"
