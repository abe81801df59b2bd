#!/usr/bin/env bash
# Builds the clusterset-agent OCI image from the repository's Dockerfile on a Debian machine with
# neither Docker nor access to an image registry, using only Debian and npm packages:
#
#   1. installs podman, runc, mmdebstrap (and uidmap, fuse-overlayfs, slirp4netns) with apt-get
#      when they are missing (needs root);
#   2. builds the Node base image the Dockerfile's NODE_IMAGE stands for: Debian bookworm from
#      mmdebstrap (the mirror comes from this machine's apt sources), Node from the npm package
#      node-linux-<arch> (the version of the `node` devDependency), npm from the npm package npm,
#      user node (1000:1000). It is imported into podman's storage once per set of inputs;
#   3. runs `podman build --pull=never` with NODE_IMAGE=<that base>@<its digest> (podman's layer
#      cache makes a rerun with unchanged inputs take seconds).
#
# Podman runs with a containers.conf of this script's own (runc, ulimits within this shell's
# hard limits), passed through CONTAINERS_CONF, so nothing system-wide is changed. To run the
# image with the same settings: export CONTAINERS_CONF="$(scripts/image.sh --containers-conf)".
#
# Usage: scripts/image.sh [--tag REF] [--rebuild-base] [--json] [--containers-conf]
#   --tag REF          image to build (default localhost/clusterset-agent:<package.json version>)
#   --rebuild-base     rebuild the base image even when its inputs did not change
#   --json             print {"image","id","digest","size","base","containersConf"} instead of the ref
#   --containers-conf  only write the containers.conf and print its path
# Progress goes to stderr; stdout carries only the result. Environment:
#   CSA_IMAGE_STATE    state directory (default ${XDG_CACHE_HOME:-~/.cache}/clusterset-agent/image)
#   CSA_BUILD_CA       CA bundle lent to `npm ci` during the build only (default: the host's bundle)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
STATE=${CSA_IMAGE_STATE:-${XDG_CACHE_HOME:-$HOME/.cache}/clusterset-agent/image}
SUITE=bookworm            # the Debian release of the official node:24-bookworm-slim
NPM_VERSION=11.19.1       # npm inside the base image (the official image bundles one too)
BASE_REPO=localhost/clusterset-agent-base
KEY_LABEL=io.clusterset-agent.base-key

started=$SECONDS
log() { printf '[image %s +%ss] %s\n' "$(date +%H:%M:%S)" "$((SECONDS - started))" "$*" >&2; }
die() { printf 'scripts/image.sh: %s\n' "$*" >&2; exit 1; }

tag="" rebuild_base=0 json=0 conf_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --tag) [ $# -ge 2 ] || die "--tag needs a value"; tag=$2; shift 2 ;;
    --rebuild-base) rebuild_base=1; shift ;;
    --json) json=1; shift ;;
    --containers-conf) conf_only=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done

# ---- containers.conf of our own ---------------------------------------------------------------
# crun fails on hosts with hybrid cgroups ("cgroups in hybrid mode not supported"): runc works.
# runc cannot raise rlimits above the caller's hard limits, so the defaults stay within them.
write_containers_conf() {
  local nofile nproc
  nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
  [ "$nofile" = unlimited ] || [ "$nofile" -gt 4096 ] && nofile=4096
  [ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ] && nproc=4096
  mkdir -p "$STATE"
  cat >"$STATE/containers.conf.tmp" <<EOF
# Written by scripts/image.sh; used only through CONTAINERS_CONF.
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "runc"
EOF
  mv "$STATE/containers.conf.tmp" "$STATE/containers.conf"
  export CONTAINERS_CONF=$STATE/containers.conf
}
write_containers_conf
if [ $conf_only = 1 ]; then echo "$CONTAINERS_CONF"; exit 0; fi

# ---- tools ------------------------------------------------------------------------------------
command -v dpkg >/dev/null 2>&1 && [ -r /etc/os-release ] || die "this script needs a Debian machine (dpkg, apt, /etc/os-release)"
need=()
for pair in podman:podman runc:runc mmdebstrap:mmdebstrap newuidmap:uidmap fuse-overlayfs:fuse-overlayfs slirp4netns:slirp4netns; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
command -v npm >/dev/null 2>&1 || die "npm is needed (it fetches Node and npm for the base image)"
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing ${need[*]}: run as root, or apt-get install ${need[*]}"
  log "installing Debian packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
[ "$(id -u)" = 0 ] || log "warning: not root; podman runs rootless with its own image storage"

# One build at a time: a second caller waits for the first, then finds its result cached.
exec 9>"$STATE/.lock"
if ! flock -n 9; then log "waiting for another scripts/image.sh run"; flock 9; fi
# Nothing podman starts may keep the lock after this script ends.
podman() { command podman "$@" 9>&-; }
mmdebstrap() { command mmdebstrap "$@" 9>&-; }

# ---- inputs -----------------------------------------------------------------------------------
node_field() { (cd "$REPO" && node -p "$1"); }
VERSION=$(node_field "require('./package.json').version")
NODE_VERSION=$(node_field "require('./package.json').devDependencies.node")
[[ $NODE_VERSION =~ ^24\.[0-9]+\.[0-9]+$ ]] || die "package.json devDependencies.node is '$NODE_VERSION', expected an exact 24.x.y"
tag=${tag:-localhost/clusterset-agent:$VERSION}
case $(dpkg --print-architecture) in
  amd64) NODE_ARCH=x64 ;;
  arm64) NODE_ARCH=arm64 ;;
  *) die "no npm Node package for architecture $(dpkg --print-architecture)" ;;
esac

# The Debian mirror(s) of this machine, as one-line sources for $SUITE: every enabled `deb`
# source (one-line .list or deb822 .sources) whose suite is this machine's release, its
# -updates or its -security, with the release renamed to $SUITE and the component main.
apt_mirrors() {
  local codename files=()
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$codename" ] || die "cannot tell this machine's Debian release from /etc/os-release"
  [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
  for f in /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] || die "no apt sources found in /etc/apt"
  awk -v codename="$codename" -v suite="$SUITE" '
    function emit(uri, s, comps) {
      if (s !~ ("^" codename "(-updates|-security)?$")) return
      if ((" " comps " ") !~ / main /) return
      sub("^" codename, suite, s)
      print "deb " uri " " s " main"
    }
    function flush(   n, u, s, i, j, uris, suites) {
      if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no") {
        n = split(uris_f, uris, " "); split(suites_f, suites, " ")
        for (i = 1; i <= n; i++) for (j = 1; j in suites; j++) emit(uris[i], suites[j], comps_f)
      }
      types = ""; uris_f = ""; suites_f = ""; comps_f = ""; enabled = ""
    }
    FILENAME ~ /\.sources$/ {
      if (FILENAME != last) { flush(); last = FILENAME }
      if ($0 ~ /^[ \t]*$/) { flush(); next }
      if ($0 ~ /^#/) next
      key = tolower($1); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
      if (key == "types:") types = val
      else if (key == "uris:") uris_f = val
      else if (key == "suites:") suites_f = val
      else if (key == "components:") comps_f = val
      else if (key == "enabled:") enabled = val
      next
    }
    FILENAME !~ /\.sources$/ && $1 == "deb" {
      flush(); i = 2
      if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
      comps = ""; for (k = i + 2; k <= NF; k++) comps = comps " " $k
      emit($i, $(i + 1), comps)
    }
    END { flush() }
  ' "${files[@]}" | sort -u
}
mapfile -t MIRRORS < <(apt_mirrors)
[ ${#MIRRORS[@]} -gt 0 ] || die "no Debian mirror for $SUITE found in this machine's apt sources"

# ---- base image -------------------------------------------------------------------------------
build_base() { # build_base WORKDIR OUTPUT_TAR
  local work=$1 out=$2
  log "fetching Node $NODE_VERSION (npm package node-linux-$NODE_ARCH) and npm $NPM_VERSION"
  (cd "$work" && npm pack --silent "node-linux-$NODE_ARCH@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/node" "$work/npm"
  tar -xzf "$work/node-linux-$NODE_ARCH-$NODE_VERSION.tgz" -C "$work/node" --strip-components=1 package/bin/node package/LICENSE
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/npm" --strip-components=1
  log "mmdebstrap $SUITE (minbase) from ${MIRRORS[*]}"
  # Like debian:bookworm-slim: minbase, merged /usr without the usrmerge package (and the perl it
  # pulls in), no documentation, man pages or translations (copyright files stay). The hooks add
  # what the official Node image adds: node and npm in /usr/local and the user node (1000:1000).
  # libstdc++6 is what the node binary links to. No ca-certificates: Node carries its own roots.
  mmdebstrap --variant=minbase --mode=root --quiet \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --include=libstdc++6 \
    --customize-hook="install -m 0755 '$work/node/bin/node' \"\$1/usr/local/bin/node\"" \
    --customize-hook="install -D -m 0644 '$work/node/LICENSE' \"\$1/usr/local/share/doc/node/LICENSE\"" \
    --customize-hook="mkdir -p \"\$1/usr/local/lib/node_modules\" && cp -a '$work/npm' \"\$1/usr/local/lib/node_modules/npm\"" \
    --customize-hook="ln -s ../lib/node_modules/npm/bin/npm-cli.js \"\$1/usr/local/bin/npm\" && ln -s ../lib/node_modules/npm/bin/npx-cli.js \"\$1/usr/local/bin/npx\"" \
    --customize-hook="chroot \"\$1\" groupadd --gid 1000 node && chroot \"\$1\" useradd --uid 1000 --gid node --shell /bin/bash --create-home node" \
    --customize-hook="chroot \"\$1\" node --version >/dev/null && chroot \"\$1\" npm --version >/dev/null" \
    "$SUITE" "$out" "${MIRRORS[@]}" >&2
}

base_key=$( { echo "$SUITE $NODE_VERSION $NODE_ARCH $NPM_VERSION"; printf '%s\n' "${MIRRORS[@]}"; declare -f build_base; } | sha256sum | cut -c1-16)
base_tag=$BASE_REPO:node$NODE_VERSION-$SUITE
have_key=$(podman image inspect --format "{{ index .Labels \"$KEY_LABEL\" }}" "$base_tag" 2>/dev/null || true)
if [ $rebuild_base = 1 ] || [ "$have_key" != "$base_key" ]; then
  log "building base image $base_tag (inputs $base_key)"
  mkdir -p "$STATE"
  work=$(mktemp -d "$STATE/base.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  build_base "$work" "$work/rootfs.tar"
  podman import --quiet \
    --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change "ENV NODE_VERSION=$NODE_VERSION" \
    --change "LABEL $KEY_LABEL=$base_key" \
    --change 'CMD ["node"]' \
    "$work/rootfs.tar" "$base_tag" >/dev/null
  rm -rf "$work"; trap - EXIT
  log "base image imported"
else
  log "base image $base_tag is up to date (inputs $base_key)"
fi
base_digest=$(podman image inspect --format '{{.Digest}}' "$base_tag")
[[ $base_digest =~ ^sha256:[0-9a-f]{64}$ ]] || die "base image $base_tag has no digest (got '$base_digest')"
base_ref=$BASE_REPO@$base_digest

# ---- the product image ------------------------------------------------------------------------
# npm ci inside the build reaches the npm registry; where egress re-signs TLS it needs this
# host's CA bundle. It is lent as a build secret (mounted for that RUN step only, never stored
# in a layer).
ca=${CSA_BUILD_CA:-}
if [ -z "$ca" ]; then
  for f in "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt; do
    if [ -n "$f" ] && [ -s "$f" ]; then ca=$f; break; fi
  done
fi
secret=()
[ -n "$ca" ] && secret=(--secret "id=build-ca,src=$ca")

log "podman build $tag from $base_ref"
podman build --pull=never --network host --layers \
  --build-arg "NODE_IMAGE=$base_ref" "${secret[@]}" \
  --tag "$tag" --file "$REPO/Dockerfile" "$REPO" >&2
id=$(podman image inspect --format '{{.Id}}' "$tag")
digest=$(podman image inspect --format '{{.Digest}}' "$tag")
size=$(podman image inspect --format '{{.Size}}' "$tag")
log "built $tag (id ${id:0:12}, $((size / 1000000)) MB) in $((SECONDS - started)) s"

if [ $json = 1 ]; then
  printf '{"image":"%s","id":"%s","digest":"%s","size":%s,"base":"%s","containersConf":"%s"}\n' \
    "$tag" "$id" "$digest" "$size" "$base_ref" "$CONTAINERS_CONF"
else
  echo "$tag"
fi
