# syntax=docker/dockerfile:1
# hl-deadman as a container: a build stage (dev dependencies, tsc), then a slim runtime with production
# dependencies only, running as the unprivileged "node" user (uid 1000) with node itself as PID 1.
#
#   docker build -t hl-deadman .
#   docker run -d --name hl-deadman \
#     -v hl-deadman-state:/var/lib/hl-deadman \
#     -v /etc/hl-deadman/key:/run/secrets/hl-private-key:ro \
#     -e HL_ACCOUNTS=0x... -p 127.0.0.1:9464:9464 hl-deadman
#
# The key is a file at /run/secrets/hl-private-key ($CREDENTIALS_DIRECTORY/hl-private-key, the same lookup as
# systemd's LoadCredential=); it is never baked into the image and never passed as an environment variable.

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the sources are not copied yet, so the package's own "prepare" build runs below instead.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
# scripts/build.mjs runs tsc and then bundles the CLI (scripts/bundle.mjs, esbuild)
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HL_STATE_DIR=/var/lib/hl-deadman \
    HL_HEALTH=0.0.0.0:9464 \
    CREDENTIALS_DIRECTORY=/run/secrets
WORKDIR /app
# Only what runs: the compiled CLI, the manifest, and the production node_modules (pruned in the build stage).
# Owned by root and read-only for the node user.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The ledger's directory must exist and belong to the node user before VOLUME, so a fresh named volume inherits it.
RUN mkdir -p /var/lib/hl-deadman /run/secrets && chown node:node /var/lib/hl-deadman && chmod 0700 /var/lib/hl-deadman
VOLUME /var/lib/hl-deadman
USER node
# /healthz, /readyz and /metrics. HL_HEALTH binds all interfaces inside the container so probes can reach it;
# publish the port on loopback only (-p 127.0.0.1:9464:9464) or keep it inside the pod network.
EXPOSE 9464
# The slim image has no curl: node's own fetch asks /healthz.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The daemon removes (or keeps) the schedule on SIGTERM and exits within shutdownTimeout (5 s by default);
# give `docker stop -t 20` / the orchestrator's grace period a margin above that.
STOPSIGNAL SIGTERM
# Exec form: node is PID 1 and receives SIGTERM itself (not through npm or a shell). hl-deadman installs its own
# SIGTERM/SIGINT handlers and starts no child processes, so no init (tini) is needed; `docker run --init` is harmless.
# The flags of the systemd units (docs/operations.md, "Node flags"): V8's interpreter only, no executable memory
# allocated at run time (less resident memory), no WebAssembly (so no global fetch), a small heap collected on the main thread. Every command of the image gets them.
ENTRYPOINT ["node", "--jitless", "--no-expose-wasm", "--optimize-for-size", "--single-threaded-gc", "dist/bin/hl-deadman.js"]
CMD ["run"]
