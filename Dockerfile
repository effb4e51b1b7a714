# syntax=docker/dockerfile:1
# Agora's production image (docs/deploy.md). Three stages: `build` compiles TypeScript with every
# dependency, `deps` installs the production dependencies only, and the final stage holds what the
# server reads at run time and nothing else: dist/, node_modules/ (production), package.json and
# schema.graphql (how projectRoot() finds the project), src/ (the GraphQL schema is loaded from
# src/**/*.graphql), assets/, docs/legacy-to-graphql.md (served by /api/migration-guide) and
# docs/webhooks.md (the dashboard's webhooks guide, /webhooks/guide).
# test/deploy/image.test.ts lays out a directory exactly as these COPY lines do and runs CMD in it.

# Node 24, the maintained LTS line (package.json's engines, docs/deploy.md#nodejs-versions). .ci/run reads
# the major from this line and runs the tests on it; test/deploy/image.test.ts checks it is the newest
# line engines claims.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ormconfig.ts schema.graphql ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
# Owned by root and read-only to the server's user. With DATABASE_URL the server writes no file, so the
# root filesystem can be read-only; the embedded database (DATA_DIR) needs a writable directory, and
# without one start-up fails rather than keeping data in a place that vanishes (docs/deploy.md).
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json schema.graphql ./
COPY src ./src
COPY assets ./assets
COPY docs/legacy-to-graphql.md docs/webhooks.md ./docs/
# The `node` user of the base image, by number so that Kubernetes' runAsNonRoot can check it.
USER 1000:1000
EXPOSE 3000
# Liveness, not readiness: /healthz never touches the database, so an outage does not mark the
# container unhealthy (docs/operations.md). The base image has no curl; node has fetch.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, then drains (src/shutdown). No npm, no shell.
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
