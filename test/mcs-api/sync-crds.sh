#!/usr/bin/env bash
# The chart's ServiceExport and ServiceImport CRDs are upstream's, byte for byte: this script
# copies them from the module sigs.k8s.io/mcs-api@$VERSION that the Go module proxy serves
# (config/crd/, never retyped) into charts/clusterset-agent/crds/, and records their sha256 and
# the module's checksum in test/mcs-api/crds.json, which test/unit/mcs-crds.test.ts checks
# offline. `--check` changes nothing and exits 1 when the chart's files differ from upstream's.
#
#   bash test/mcs-api/sync-crds.sh            # after changing VERSION
#   bash test/mcs-api/sync-crds.sh --check    # what the unit test runs when `go` is available
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
VERSION=v0.5.2
CRDS=$REPO/charts/clusterset-agent/crds
FILES=(multicluster.x-k8s.io_serviceexports.yaml multicluster.x-k8s.io_serviceimports.yaml)

json=$(GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/mcs-api@$VERSION")
dir=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
sum=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -d "$dir/config/crd" ] || { echo "go mod download sigs.k8s.io/mcs-api@$VERSION gave no module directory" >&2; exit 1; }

if [ "${1:-}" = --check ]; then
  status=0
  for f in "${FILES[@]}"; do
    cmp -s "$dir/config/crd/$f" "$CRDS/$f" || { echo "charts/clusterset-agent/crds/$f differs from sigs.k8s.io/mcs-api@$VERSION config/crd/$f" >&2; status=1; }
  done
  exit $status
fi

for f in "${FILES[@]}"; do install -m 0644 "$dir/config/crd/$f" "$CRDS/$f"; done
{
  printf '{\n  "module": "sigs.k8s.io/mcs-api",\n  "version": "%s",\n  "moduleSum": "%s",\n  "files": {\n' "$VERSION" "$sum"
  n=0
  for f in "${FILES[@]}"; do
    n=$((n + 1)); sep=','; [ $n -eq ${#FILES[@]} ] && sep=''
    printf '    "%s": "%s"%s\n' "$f" "$(sha256sum "$CRDS/$f" | cut -c1-64)" "$sep"
  done
  printf '  }\n}\n'
} > "$HERE/crds.json"
echo "charts/clusterset-agent/crds: ${FILES[*]} from sigs.k8s.io/mcs-api@$VERSION ($sum)"
