#!/usr/bin/env bash
# Builds the parts of a fuller control plane that tests opt into beside the bare
# kube-apiserver + etcd of ../k8s-bins: kube-controller-manager and kube-scheduler
# (the same k8s.io/kubernetes version as kube-apiserver; their own module, kube/, because
# they link kubelet packages whose dependencies ../k8s-bins/kube does not list) and kwok
# (simulated nodes that run Pods without containers), plus kwok's own default
# stages (node initialise + lease heartbeat, pod ready/complete/delete) copied from
# its module. Output goes to a cache directory keyed by the Go version and every
# input, printed on stdout (progress on stderr). A separate cache from ../k8s-bins
# on purpose: adding these does not invalidate the bare binaries.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KUBE=$HERE/kube
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

K8S_VERSION=$(cd "$KUBE" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
APISERVER_VERSION=$(cd "$HERE/../k8s-bins/kube" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
if [ "$K8S_VERSION" != "$APISERVER_VERSION" ]; then
  echo "test/k8s-control/kube builds Kubernetes $K8S_VERSION but kube-apiserver is $APISERVER_VERSION (test/k8s-bins/kube): keep both go.mod files on one version" >&2
  exit 1
fi

key=$( { go version; cat "$HERE"/build-control-bins.sh "$KUBE"/go.mod "$KUBE"/go.sum "$HERE"/kwok/go.mod "$HERE"/kwok/go.sum; } | sha256sum | cut -c1-16)
CACHE_ROOT=${K8S_CONTROL_BINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clusterset-agent/k8s-control-bins}
OUT=$CACHE_ROOT/$key
BINS=(kube-controller-manager kube-scheduler kwok)

complete() {
  for b in "${BINS[@]}"; do [ -x "$OUT/$b" ] || return 1; done
  [ -s "$OUT/kwok-stages.yaml" ]
}
if complete; then echo "$OUT"; exit 0; fi

# One build at a time: a second caller waits for the first instead of racing it.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.lock"
flock 9
if complete; then echo "$OUT"; exit 0; fi

TMP=$(mktemp -d "$OUT.tmp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
log() { printf '[k8s-control-bins %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
start=$SECONDS
KWOK_VERSION=$(cd "$HERE/kwok" && go list -m -f '{{.Version}}' sigs.k8s.io/kwok)
log "cache empty for key $key; building kube-controller-manager, kube-scheduler $K8S_VERSION and kwok $KWOK_VERSION"

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  ld+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
build() { # build DIR OUTPUT PACKAGE [go build flags...]
  local dir=$1 out=$2 pkg=$3; shift 3
  log "building $out ($pkg)"
  ( cd "$dir" && go build -trimpath "$@" -o "$TMP/$out" "$pkg" )
  log "built $out after $((SECONDS - start)) s"
}
build "$HERE/kwok" kwok sigs.k8s.io/kwok/cmd/kwok -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${KWOK_VERSION#v}"
build "$KUBE" kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager -tags selinux,notest,grpcnotrace -ldflags "$ld"
build "$KUBE" kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler -tags selinux,notest,grpcnotrace -ldflags "$ld"

# kwok's default stages, as kwokctl assembles them (node: initialise + heartbeat
# with lease; pod: ready, complete, delete), read from the module itself.
src=$(cd "$HERE/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
         pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  printf -- '---\n'; cat "$src/kustomize/stage/$f"
done > "$TMP/kwok-stages.yaml"

rm -rf "$OUT"; mv "$TMP" "$OUT"; trap - EXIT
log "done in $((SECONDS - start)) s: $OUT"
echo "$OUT"
