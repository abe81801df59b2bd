#!/usr/bin/env bash
# Builds Antrea's multicluster controller (antrea-mc-controller, both its `leader`
# and `member` subcommands) and copies its manifests, for the interop tests and
# the side-by-side benchmarks; never part of the product. Sources, in order:
#   1. the Go module proxy: antrea.io/antrea/v2@$ANTREA_VERSION;
#   2. the vendored archives in <repo>/../shared/vendor/antrea (or
#      $ANTREA_VENDOR_DIR), built with the recipe in that folder's README
#      (libOpenflow/ofnet replaces, the ofnet CtZone field, lumberjack fork dropped).
# The result is cached in a directory keyed by the Go version, this script and the
# archives; it prints that directory on stdout (progress goes to stderr):
#   <dir>/antrea-mc-controller, <dir>/yamls/{antrea-multicluster-*.yml,antrea-crds.yml}
# Idempotent; concurrent callers wait on a lock instead of racing.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
export GOTOOLCHAIN=local CGO_ENABLED=0
unset GOFLAGS
ANTREA_VERSION=v2.7.0
MODULE=antrea.io/antrea/v2
VENDOR=${ANTREA_VENDOR_DIR:-$REPO/../shared/vendor/antrea}
ARCHIVE=$VENDOR/antrea-$ANTREA_VERSION.tar.gz

archives_hash() { if [ -d "$VENDOR" ]; then (cd "$VENDOR" && sha256sum -- *.tar.gz 2>/dev/null || true); fi; }
key=$( { go version; echo "$ANTREA_VERSION"; cat "$HERE/build-antrea-bins.sh"; archives_hash; } | sha256sum | cut -c1-16)
CACHE_ROOT=${ANTREA_BINS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clusterset-agent/antrea-bins}
OUT=$CACHE_ROOT/$key

complete() { [ -x "$OUT/antrea-mc-controller" ] && [ -f "$OUT/yamls/antrea-crds.yml" ] && [ -f "$OUT/yamls/antrea-multicluster-member.yml" ]; }
if complete; then echo "$OUT"; exit 0; fi

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.lock"
flock 9
if complete; then echo "$OUT"; exit 0; fi

TMP=$(mktemp -d "$OUT.tmp.XXXXXX")
chmod 755 "$TMP"
trap 'chmod -R u+w "$TMP" 2>/dev/null; rm -rf "$TMP"' EXIT
log() { printf '[antrea-bins %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
start=$SECONDS
log "cache empty for key $key; building antrea-mc-controller $ANTREA_VERSION (cold build takes 10+ min on 2 cores)"

# go mod download outside any module; prints the module's Dir or nothing.
module_dir() { # module@version
  (cd "$TMP" && go mod download -json "$1" 2>/dev/null) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' | head -n1
}

SRC=$TMP/src/antrea
mkdir -p "$TMP/src"
proxy_dir=$(module_dir "$MODULE@$ANTREA_VERSION" || true)
if [ -n "$proxy_dir" ] && [ -f "$proxy_dir/go.mod" ]; then
  log "source: Go module proxy ($proxy_dir)"
  cp -r "$proxy_dir" "$SRC"; chmod -R u+w "$SRC"
  source_kind=proxy
elif [ -f "$ARCHIVE" ]; then
  log "source: Go module proxy refused $MODULE@$ANTREA_VERSION; using $ARCHIVE"
  tar -xzf "$ARCHIVE" -C "$TMP/src"
  mv "$TMP/src/antrea-$ANTREA_VERSION" "$SRC"
  source_kind=archive
else
  echo "antrea-bins: cannot get Antrea $ANTREA_VERSION: the Go module proxy ($(go env GOPROXY)) did not serve $MODULE@$ANTREA_VERSION and the vendored archive $ARCHIVE does not exist (set ANTREA_VENDOR_DIR to the folder holding antrea-$ANTREA_VERSION.tar.gz, libOpenflow-*.tar.gz and ofnet-*.tar.gz)" >&2
  exit 1
fi

# Dependencies the proxy may refuse: replace each by its vendored archive.
for dep in libOpenflow ofnet; do
  mod=antrea.io/$dep
  ver=$(sed -n "s|^[[:space:]]*$mod \(v[^ ]*\).*|\1|p" "$SRC/go.mod" | head -n1)
  if [ -n "$(module_dir "$mod@$ver" || true)" ]; then
    log "dependency $mod@$ver from the Go module proxy"
    continue
  fi
  archive=$(ls "$VENDOR"/"$dep"-*.tar.gz 2>/dev/null | head -n1 || true)
  if [ -z "$archive" ]; then
    echo "antrea-bins: the Go module proxy did not serve $mod@$ver (needed by Antrea $ANTREA_VERSION) and no vendored archive $VENDOR/$dep-*.tar.gz exists" >&2
    exit 1
  fi
  log "dependency $mod@$ver refused by the Go module proxy; using $archive"
  tar -xzf "$archive" -C "$TMP/src"
  (cd "$SRC" && go mod edit -replace="$mod=$TMP/src/$dep")
  if [ "$dep" = ofnet ] && ! grep -q 'CtZone' "$TMP/src/ofnet/ofctrl/fgraphFlow.go"; then
    # The snapshot predates v0.15.1's FlowMatch.CtZone, which pkg/ovs/openflow
    # references (linked, never called by the multicluster controller).
    sed -i 's|^\([[:space:]]*\)CtMarkMask \([[:space:]]*\)\*uint32.*$|&\n\1CtZone *uint16|' "$TMP/src/ofnet/ofctrl/fgraphFlow.go"
    grep -q 'CtZone \*uint16' "$TMP/src/ofnet/ofctrl/fgraphFlow.go" || { echo "antrea-bins: could not patch ofnet FlowMatch.CtZone" >&2; exit 1; }
  fi
done

# Antrea replaces lumberjack with a fork; drop that replace when the proxy refuses the fork.
fork=$(sed -n 's|^[[:space:]]*gopkg.in/natefinch/lumberjack.v2 => \([^ ]*\) \(v[^ ]*\).*|\1@\2|p' "$SRC/go.mod" | head -n1)
if [ -n "$fork" ] && [ -z "$(module_dir "$fork" || true)" ]; then
  log "the Go module proxy refuses $fork; dropping that replace (upstream lumberjack works)"
  (cd "$SRC" && go mod edit -dropreplace=gopkg.in/natefinch/lumberjack.v2)
fi

log "building antrea-mc-controller (source: $source_kind)"
(cd "$SRC" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w -X antrea.io/antrea/v2/pkg/version.Version=$ANTREA_VERSION" \
  -o "$TMP/antrea-mc-controller" ./multicluster/cmd/multicluster-controller)
mkdir -p "$TMP/yamls"
cp "$SRC"/multicluster/build/yamls/*.yml "$SRC/build/yamls/antrea-crds.yml" "$TMP/yamls/"
echo "$source_kind" >"$TMP/SOURCE"
chmod -R u+w "$TMP/src"; rm -rf "$TMP/src"

rm -rf "$OUT"; mv "$TMP" "$OUT"; trap - EXIT
log "done in $((SECONDS - start)) s: $OUT"
echo "$OUT"
