# syntax=docker/dockerfile:1
# svc: the gateway as one container. Build: docker build -t svc .
# Run:   docker run -p 8080:8080 -v svc-data:/data --stop-timeout 30 svc
# (SPEC.md Limits: in-flight requests get up to 20 s after SIGTERM, and the runtime should wait
# 30 s before killing; Docker's default is 10 s, so pass --stop-timeout 30 or, in Compose,
# stop_grace_period: 30s.) Scale-out: set SVC_DATABASE_URL=postgres://… and SVC_REDIS_URL=redis://….

# --- build: compile TypeScript, then keep only production dependencies ---
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY kernel ./kernel
COPY plugins ./plugins
COPY providers ./providers
COPY bin ./bin
COPY examples ./examples
COPY config ./config
# tsconfig also lists test/ and bench/; they are not copied, so only the service is compiled.
RUN npm run build \
 && rm -f dist/.tsbuildinfo \
 && npm prune --omit=dev --no-audit --no-fund

# --- runtime: compiled files and production node_modules, run as the unprivileged `node` user ---
FROM node:24-slim
ENV NODE_ENV=production \
    SVC_HOST=0.0.0.0 \
    SVC_PORT=8080 \
    SVC_DATA_DIR=/data
WORKDIR /app
# Owned by root and read-only for the service user; only /data is writable.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/config ./config
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The admin UI's browser files ship as source (plugins/admin-ui/README.md); tsc does not copy them.
COPY --from=build /app/plugins/admin-ui/web ./plugins/admin-ui/web
# The routing classifier's built-in table (a data file tsc does not copy; scripts/routing-student/README.md).
COPY --from=build /app/plugins/routing/classifier/student ./plugins/routing/classifier/student
RUN mkdir -p /data && chown node:node /data
USER node
# The embedded SQLite database (and anything else kept on disk) lives here.
VOLUME ["/data"]
EXPOSE 8080
# node:24-slim has no curl: Node's own fetch asks /healthz (200 for ok and degraded, 503 for down).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.SVC_PORT || 8080) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
# The service drains on SIGTERM: in-flight requests finish, new ones get 503, then it exits 0.
STOPSIGNAL SIGTERM
# Node flags and the allocator's setting: kernel/lifecycle/node-flags.ts says why (the same as
# `npm start` and the bench; `svc serve` would otherwise restart itself once to apply them).
ENV MALLOC_MMAP_THRESHOLD_=131072
CMD ["node", "--max-semi-space-size=32", "--min-semi-space-size=32", "--no-allocation-site-pretenuring", "dist/bin/svc.js", "serve"]
