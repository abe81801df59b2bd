# syntax=docker/dockerfile:1
# clusterset-agent image: `docker build -t clusterset-agent:0.1.0 .`
# The chart runs it as `clusterset-agent run --config /etc/clusterset-agent/config.yaml`
# (args after the ENTRYPOINT), as uid 1000 with a read-only root filesystem.

# ---- build: compile TypeScript, then drop devDependencies ---------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /app
ENV NODE_ENV=development \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
# Lockfile first, so the dependency layer is cached until package*.json change.
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin ./bin
RUN npm run build \
 && npm prune --omit=dev

# ---- runtime ------------------------------------------------------------------------------
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=root:root /app/package.json ./package.json
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/bin ./bin
# Files stay owned by root and read-only to the agent; uid 1000 is the image's `node` user,
# numeric so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 9090
ENTRYPOINT ["node", "bin/clusterset-agent.js"]
CMD ["run"]
