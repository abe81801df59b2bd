# syntax=docker/dockerfile:1
# clusterset-agent image.
#   docker build -t clusterset-agent:0.1.0 .   Docker (BuildKit): pulls the pinned official base
#   npm run image                              podman, no Docker, no registry (scripts/image.sh):
#                                              builds a local base and passes it as NODE_IMAGE
# The chart runs it as `clusterset-agent run --config /etc/clusterset-agent/config.yaml`
# (args after the ENTRYPOINT), as uid 1000 with a read-only root filesystem.

# The base image, pinned by digest: the official Node 24 image on Debian bookworm. A build ARG
# rather than a literal FROM so that scripts/image.sh can pass its locally built base (pinned by
# that image's own digest, see the README). To bump it, resolve the tag's current digest and
# replace the one below:
#   docker buildx imagetools inspect node:24-bookworm-slim --format '{{json .Manifest.Digest}}'
#   (or: crane digest node:24-bookworm-slim; skopeo inspect docker://node:24-bookworm-slim)
ARG NODE_IMAGE=docker.io/library/node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# ---- build: compile TypeScript, then drop devDependencies ---------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NODE_ENV=development \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
RUN node -e 'const v = process.versions.node; if (v.split(".")[0] !== "24") { console.error(`NODE_IMAGE has Node ${v}; the agent needs Node 24`); process.exit(1); }'
# Lockfile first, so the dependency layer is cached until package*.json change.
COPY package.json package-lock.json ./
# --ignore-scripts: the only install scripts in the lockfile are the `node` devDependency's (it
# downloads a second Node binary; the build uses the base image's) and esbuild's (for tsx, which
# the tests use); compiling is plain tsc. The secret `build-ca` is an optional CA bundle for
# networks whose egress re-signs TLS (scripts/image.sh lends the host's); it exists during this
# step only and is not stored in any layer.
RUN --mount=type=secret,id=build-ca,target=/run/secrets/build-ca \
    --mount=type=cache,target=/root/.npm,sharing=locked \
    if [ -s /run/secrets/build-ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build-ca; fi \
 && npm ci --ignore-scripts \
 && test ! -e node_modules/node/bin/node
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/bundle.mjs scripts/builtins-through-require.mjs scripts/cron-utc-without-icu.mjs scripts/slim-dependencies.mjs ./scripts/
COPY src ./src
COPY bin ./bin
# tsc, then one bundle of the CLI and its dependencies (scripts/bundle.mjs): the runtime stage
# needs no node_modules. The bundle's compile cache (bin/compile-cache.js) is warmed for the
# agent's uid too: Node keeps one per user, and the read-only image cannot write its own.
RUN COMPILE_CACHE_UID=1000 npm run build

# ---- runtime ------------------------------------------------------------------------------
FROM ${NODE_IMAGE}
# V8's heap limit follows the container's memory limit: Node sizes the old space to this share of
# the memory it may use (the cgroup limit when there is one, read by libuv from cgroup v1 or v2),
# so GC works harder before the kernel's OOM killer would strike. The rest of the limit is left
# for the young generation, code, buffers and Node itself. A young generation of 2 MiB
# semi-spaces instead of V8's default (up to 16 MiB each) took ~110 MiB off the RSS with 10,000
# imported objects at no measurable cost to the initial sync (README, bench:imports). Override
# NODE_OPTIONS to change them; add --enable-source-maps for stack traces in the TypeScript
# sources (it costs ~12 MiB: the map also covers the bundled dependencies).
# GLIBC_TUNABLES: glibc serves allocations of 32 KiB and more from their own mappings, returned
# to the kernel when freed, instead of from its heap, where they left holes it never gave back.
# V8's compiler works in such blocks: compiling the bundle at start left ~16 MiB of freed but
# resident heap behind. Idle RSS went from 99 to 84 MiB, and from 139 to 123 MiB with 10,000
# imported objects, at no measurable cost to the initial sync (README, bench:imports).
ENV NODE_ENV=production \
    NODE_OPTIONS="--max-old-space-size-percentage=60 --max-semi-space-size=2" \
    GLIBC_TUNABLES=glibc.malloc.mmap_threshold=32768
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/dist/bundle ./dist/bundle
COPY --from=build --chown=root:root /app/bin ./bin
# Files stay owned by root and read-only to the agent; uid 1000 is the image's `node` user,
# numeric so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 9090
# --optimize-for-size (V8 refuses it in NODE_OPTIONS): V8 grows the heap less eagerly and
# gives memory back sooner. With 10,000 imported objects it took the RSS from ~179 to ~150 MiB
# at no measurable cost to the initial sync (README, bench:imports). --max-opt=2 is the agents'
# V8 option (bin/node-flags.js: no TurboFan), given here so that the launcher need not start
# Node again to add it: ~30 ms of every start, the leader's restart -> ready included. The
# short commands run too briefly for TurboFan to matter; node-flags.test.ts keeps this list
# equal to the agents' options.
ENTRYPOINT ["node", "--optimize-for-size", "--max-opt=2", "bin/clusterset-agent.js"]
CMD ["run"]
