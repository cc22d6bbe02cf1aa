# syntax=docker/dockerfile:1
# A Turnstile coordinator image: TLS from mounted files by default (docs/operations.md, "Container").
# NOT BUILT on the machine this project is developed on (it has no Docker);
# test/package/start-commands.test.ts keeps it honest instead: it copies this file's COPY sources
# into a temporary directory, runs its RUN steps there, then runs its ENTRYPOINT + CMD with its ENV
# (certificates made with openssl at /etc/turnstile/tls) until its HEALTHCHECK says SERVING.

# Build: compile the TypeScript to dist/ (npm run build needs the dev dependencies).
FROM node:20-bookworm-slim AS build
WORKDIR /src
# The client package is an npm workspace (packages/client): npm ci needs its manifest too.
COPY package.json package-lock.json LICENSE ./
COPY packages/client/package.json packages/client/package.json
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.js scripts/build.js
COPY bin bin
COPY proto proto
COPY gen gen
COPY wire wire
COPY client client
COPY cli cli
COPY server server
RUN npm run build

# Run: the runtime dependencies from the lockfile and the compiled code only; no TypeScript, no tsx.
FROM node:20-bookworm-slim
# gRPC over TLS on all interfaces with the certificate and key mounted at /etc/turnstile/tls (a
# Kubernetes TLS secret's names). The HEALTHCHECK dials TURNSTILE_SERVER over TLS trusting ca.crt:
# the certificate must name that address (localhost here; set TURNSTILE_SERVER to another of its names).
# Plaintext behind a mesh that does TLS: docs/operations.md ("Container", --insecure).
ENV NODE_ENV=production \
    TURNSTILE_LISTEN=0.0.0.0:7420 \
    TURNSTILE_TLS_CERT=/etc/turnstile/tls/tls.crt \
    TURNSTILE_TLS_KEY=/etc/turnstile/tls/tls.key \
    TURNSTILE_SERVER=localhost:7420 \
    TURNSTILE_CLIENT_TLS_CA=/etc/turnstile/tls/ca.crt
WORKDIR /opt/turnstile
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/package.json
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund
# dist/client/ re-exports turnstile-locks-client, linked by npm ci to packages/client and its dist/.
COPY --from=build /src/dist dist
COPY --from=build /src/packages/client/dist packages/client/dist
USER node
EXPOSE 7420
# grpc.health.v1 Check on TURNSTILE_SERVER: unhealthy while the coordinator cannot reach Redis or
# does not answer.
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "dist/bin/turnstile-cli.js", "health", "--timeout", "3s"]
# Node runs as PID 1; `serve` handles SIGTERM itself (drains sessions, then exits 0 within the
# shutdown grace plus 2 s; docs/operations.md).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/bin/turnstile-cli.js"]
CMD ["serve"]
