import { Type, type Static } from '@sinclair/typebox';

export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

const LogLevel = Type.Union(logLevels.map((l) => Type.Literal(l)), { default: 'info' });

/** One entry of the `plugins` object: a built-in by its folder name, or a third-party module path. */
export const PluginEntrySchema = Type.Object(
  {
    /** Absent means enabled. */
    enabled: Type.Optional(Type.Boolean()),
    /** Module path of a third-party plugin, relative to the config file or absolute. */
    module: Type.Optional(Type.String({ minLength: 1 })),
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

/** The kernel's own config; each plugin's `config` slice is validated by that plugin's schema. */
export const KernelConfigSchema = Type.Object(
  {
    server: Type.Object(
      {
        host: Type.String({ default: '0.0.0.0' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
        /** SPEC.md Limits: 32 MB request body. */
        bodyLimitBytes: Type.Integer({ minimum: 1024, default: 32 * 1024 * 1024 }),
        /** SPEC.md Limits: in-flight requests may finish up to 20 s. */
        shutdownGraceMs: Type.Integer({ minimum: 0, default: 20_000 }),
        /**
         * Total bytes of request bodies held by requests in flight (read or being read); a body that
         * would pass it is refused 413 request_too_large with Retry-After (docs/decisions.md).
         */
        bodyBytesInFlight: Type.Integer({ minimum: 1024, default: 256 * 1024 * 1024 }),
        /** A body arriving slower than this (averaged over bodyRateWindowMs) is cut. */
        bodyMinBytesPerSecond: Type.Integer({ minimum: 0, default: 1024 }),
        bodyRateWindowMs: Type.Integer({ minimum: 100, default: 10_000 }),
        /** Browser origins allowed to call the service (CORS); empty means none. `*` allows any. */
        corsOrigins: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
        /**
         * Reverse proxies whose `X-Forwarded-For` / `X-Forwarded-Proto` are believed (addresses or
         * CIDR ranges, e.g. `10.0.0.0/8`); empty means none: the socket's peer is the client
         * (kernel/http/client-address.ts).
         */
        trustedProxies: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
        /** How long a kept-alive client connection may idle between requests before it is closed. */
        keepAliveTimeoutMs: Type.Integer({ minimum: 100, default: 65_000 }),
        /** How long a whole request (head and body) may take to arrive; past it 408, as node:http answers. */
        requestTimeoutMs: Type.Integer({ minimum: 100, default: 300_000 }),
        /**
         * The model API's hot routes read plain HTTP/1.1 requests with the front's own reader
         * instead of node:http (kernel/http/direct/); false sends every request through node:http.
         */
        directHttp: Type.Boolean({ default: true }),
      },
      { additionalProperties: false, default: {} },
    ),
    log: Type.Object({ level: LogLevel }, { additionalProperties: false, default: {} }),
    dataDir: Type.String({ default: './data' }),
    database: Type.Object(
      {
        /** postgres://… selects PostgreSQL; unset means the embedded SQLite file under dataDir. */
        url: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
        poolMax: Type.Integer({ minimum: 1, default: 10 }),
        /** A database call without an answer this long counts as down (README "When the database or cache fails"). */
        timeoutMs: Type.Integer({ minimum: 50, default: 3000 }),
        /** Database calls that may wait for an answer at once; more are refused at once. */
        maxPending: Type.Integer({ minimum: 1, default: 500 }),
        /** How often the database is pinged in the background, so a hang is seen without traffic. */
        probeIntervalMs: Type.Integer({ minimum: 50, default: 250 }),
        /** Down once a call waited this long with no answer to any call meanwhile (fail closed within a second). */
        silentMs: Type.Integer({ minimum: 50, default: 600 }),
        /**
         * How long a settled request's money records wait for others to share their transaction
         * (group commit, kernel/store/group-commit.ts); after the reply, so no client waits on it.
         */
        commitDelayMs: Type.Integer({ minimum: 0, maximum: 1000, default: 5 }),
      },
      { additionalProperties: false, default: {} },
    ),
    cache: Type.Object(
      {
        /**
         * redis://… selects Redis; redis+sentinel://… and redis+cluster://… select a Sentinel set or
         * a Cluster (forms in kernel/cache/redis-url.ts); unset means the in-process cache.
         */
        url: Type.Optional(Type.String({ pattern: '^rediss?(\\+sentinel|\\+cluster)?://' })),
        prefix: Type.String({ default: 'svc:' }),
        /** A cache command without an answer this long fails and counts as down. */
        timeoutMs: Type.Integer({ minimum: 50, default: 1500 }),
        /** How often the cache is pinged in the background. */
        probeIntervalMs: Type.Integer({ minimum: 50, default: 250 }),
        /** Down once a command waited this long with no answer to any command meanwhile. */
        silentMs: Type.Integer({ minimum: 50, default: 600 }),
      },
      { additionalProperties: false, default: {} },
    ),
    plugins: Type.Record(Type.String({ pattern: '^[a-z][a-z0-9-]*$' }), PluginEntrySchema, {
      default: {},
      // Without this a key outside the pattern is accepted silently (patternProperties only).
      additionalProperties: false,
    }),
  },
  { additionalProperties: false },
);

export type KernelConfig = Static<typeof KernelConfigSchema>;
export type PluginEntry = Static<typeof PluginEntrySchema>;
export type LogLevel = (typeof logLevels)[number];
