#!/usr/bin/env bash
# Builds stock CoreDNS (github.com/coredns/coredns, the version pinned in ./go.mod: v1.15.0,
# whose kubernetes plugin has served clusterset.local with `multicluster` since 1.12.2) from
# the Go module proxy, the real DNS server the clusterset.local tests query
# (test/harness/coredns.ts). Output goes to a cache directory keyed by the Go version and every
# input, printed on stdout (progress on stderr); built on first use, one build at a time.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=readonly

key=$( { go version; cat "$HERE"/build-coredns.sh "$HERE"/go.mod "$HERE"/go.sum; } | sha256sum | cut -c1-16)
CACHE_ROOT=${COREDNS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clusterset-agent/coredns}
OUT=$CACHE_ROOT/$key
if [ -x "$OUT/coredns" ]; then echo "$OUT"; exit 0; fi

# One build at a time: a second caller waits for the first instead of racing it.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/.lock"
flock 9
if [ -x "$OUT/coredns" ]; then echo "$OUT"; exit 0; fi

TMP=$(mktemp -d "$OUT.tmp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
log() { printf '[coredns %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
start=$SECONDS
VERSION=$(cd "$HERE" && go list -m -f '{{.Version}}' github.com/coredns/coredns)
log "cache empty for key $key; building CoreDNS $VERSION"
# coremain.GitCommit is what `coredns -version` prints beside the version; the build has no git.
( cd "$HERE" && go build -trimpath -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$VERSION" \
    -o "$TMP/coredns" github.com/coredns/coredns )
rm -rf "$OUT"; mv "$TMP" "$OUT"; trap - EXIT
log "done in $((SECONDS - start)) s: $OUT"
echo "$OUT"
