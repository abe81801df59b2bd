#!/usr/bin/env bash
# Builds the MCS-API conformance suite (sigs.k8s.io/mcs-api/conformance, Ginkgo) of the version
# given as the first argument (v0.4.1, API v1alpha1, the default; v0.5.0, API v1beta1) into a
# test binary, cached by the Go version, this script, the version and the source archive, and
# prints the binary's path (progress on stderr). The Go module proxy is asked first; where
# it refuses the conformance module (it does here), the project's own unmodified tree from
# <repo>/../shared/vendor/mcs-api/ is used (override: MCS_API_TARBALL).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VERSION=${1:-v0.4.1}
case $VERSION in v0.4.1|v0.5.0) ;; *) echo "unknown conformance suite version $VERSION (v0.4.1 or v0.5.0)" >&2; exit 2 ;; esac
TARBALL=${MCS_API_TARBALL:-$REPO/../shared/vendor/mcs-api/mcs-api-$VERSION.tar.gz}
export GOTOOLCHAIN=local CGO_ENABLED=0

tarsum=none
[ -f "$TARBALL" ] && tarsum=$(sha256sum "$TARBALL" | cut -c1-64)
key=$( { go version; cat "$HERE/build-conformance.sh"; echo "$VERSION $tarsum"; } | sha256sum | cut -c1-16)
CACHE_ROOT=${MCS_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clusterset-agent/mcs-conformance}
OUT=$CACHE_ROOT/$key
if [ -x "$OUT/conformance.test" ]; then echo "$OUT/conformance.test"; exit 0; fi

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.lock"
flock 9
if [ -x "$OUT/conformance.test" ]; then echo "$OUT/conformance.test"; exit 0; fi

TMP=$(mktemp -d "$OUT.tmp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
log() { printf '[mcs-conformance %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
start=$SECONDS
if dir=$(go mod download -json "sigs.k8s.io/mcs-api/conformance@$VERSION" 2>/dev/null | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') && [ -n "$dir" ]; then
  log "building sigs.k8s.io/mcs-api/conformance@$VERSION from the Go module proxy"
  mkdir -p "$TMP/src" && cp -r "$dir" "$TMP/src/conformance" && chmod -R u+w "$TMP/src"
  src=$TMP/src/conformance
  ( cd "$src" && go mod edit -dropreplace=sigs.k8s.io/mcs-api -require="sigs.k8s.io/mcs-api@$VERSION" )
else
  [ -f "$TARBALL" ] || { echo "the Go module proxy refuses sigs.k8s.io/mcs-api/conformance@$VERSION and $TARBALL does not exist (set MCS_API_TARBALL)" >&2; exit 1; }
  log "the Go module proxy refuses sigs.k8s.io/mcs-api/conformance@$VERSION; building from $TARBALL"
  tar -xzf "$TARBALL" -C "$TMP"
  src=$TMP/mcs-api-$VERSION/conformance
fi
# -mod=mod: the suite's go.sum predates Go 1.26's checks; dependencies come from the proxy.
( cd "$src" && GOFLAGS=-mod=mod go test -c -trimpath -ldflags "-s -w" -o "$TMP/conformance.test" . )
mkdir -p "$TMP/out" && mv "$TMP/conformance.test" "$TMP/out/"
rm -rf "$OUT"; mv "$TMP/out" "$OUT"; rm -rf "$TMP"; trap - EXIT
log "built in $((SECONDS - start)) s: $OUT/conformance.test"
echo "$OUT/conformance.test"
