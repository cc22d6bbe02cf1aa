# syntax=docker/dockerfile:1
# A Turnstile coordinator image. NOT BUILT on the machine this project is developed on (it has no
# Docker); test/package/pack-install.test.ts keeps it in step instead: it runs this file's
# ENTRYPOINT + CMD and HEALTHCHECK commands from an installed tarball (the same dist/ this image
# copies) and stops the coordinator with SIGTERM. docs/operations.md says how to run it.

# Build: compile the TypeScript to dist/ (npm run build needs the dev dependencies).
FROM node:20-bookworm-slim AS build
WORKDIR /src
# The client package is an npm workspace (packages/client): npm ci needs its manifest too.
COPY package.json package-lock.json LICENSE ./
COPY packages/client/package.json packages/client/package.json
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.js scripts/build.js
COPY bin bin
COPY proto proto
COPY gen gen
COPY client client
COPY server server
RUN npm run build

# Run: the runtime dependencies from the lockfile and the compiled code only; no TypeScript, no tsx.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    TURNSTILE_LISTEN=0.0.0.0:7420 \
    TURNSTILE_SERVER=127.0.0.1:7420
WORKDIR /opt/turnstile
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/package.json
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
# dist/client/ re-exports turnstile-locks-client, linked by npm ci to packages/client and its dist/.
COPY --from=build /src/dist dist
COPY --from=build /src/packages/client/dist packages/client/dist
USER node
EXPOSE 7420
# grpc.health.v1 Check on TURNSTILE_SERVER (set it too if you move TURNSTILE_LISTEN's port):
# unhealthy while the coordinator cannot reach Redis or does not answer.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "dist/bin/turnstile-cli.js", "health", "--timeout", "3s"]
# Node runs as PID 1; `serve` handles SIGTERM itself (drains sessions, then exits 0).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/bin/turnstile-cli.js"]
CMD ["serve"]
